import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { chooseMarker, StreamRedactor } from '../../src/redaction/stream-redactor.js';
import { RedactionPatterns } from '../../src/redaction/patterns.js';
import { allPatterns, b, bytewise, mulberry32, reference, stream as streamWith } from './redaction-helpers.js';

// The stream helper and the reference live in redaction-helpers.ts; the reference covers every
// pattern (raw and encoded forms), which for short secrets is the raw secret alone.
function stream(secrets: Array<string | Buffer>, chunks: Buffer[], marker?: string): Buffer {
  return streamWith(secrets, chunks, marker === undefined ? {} : { marker });
}

describe('StreamRedactor basics', () => {
  it('returns the very same chunk when there are no secrets', () => {
    const r = new StreamRedactor([]);
    const chunk = b('nothing to hide');
    assert.equal(r.push(chunk), chunk);
    assert.equal(r.flush().length, 0);
  });

  it('ignores empty secrets and deduplicates the rest', () => {
    const r = new StreamRedactor(['', 'tok', 'tok', b('tok'), b('')]);
    const chunk = b('free text');
    assert.equal(Buffer.concat([r.push(chunk), r.flush()]).toString(), 'free text');
    assert.equal(stream(['', 'tok', 'tok'], [b('a tok b')]).toString(), 'a [REDACTED] b');
    // Only empty secrets behave like no secrets at all: the fast path.
    const none = new StreamRedactor(['', b('')]);
    assert.equal(none.push(chunk), chunk);
  });

  it('replaces repeated occurrences, and at the very start and end of the stream', () => {
    assert.equal(stream(['tok'], [b('tok a tok b tok')]).toString(), '[REDACTED] a [REDACTED] b [REDACTED]');
    assert.equal(stream(['tok'], [b('tok')]).toString(), '[REDACTED]');
    assert.equal(stream(['tok'], [b('to'), b('k')]).toString(), '[REDACTED]');
  });

  it('merges adjacent occurrences into one marker', () => {
    assert.equal(stream(['tok'], [b('xtoktoky')]).toString(), 'x[REDACTED]y');
    assert.equal(stream(['aa'], [b('baaab')]).toString(), 'b[REDACTED]b');
  });

  it('merges overlapping secrets into one marker', () => {
    const input = b('xxabcdefghiyy');
    for (let i = 0; i <= input.length; i++) {
      const out = stream(['abcdef', 'defghi'], [input.subarray(0, i), input.subarray(i)]);
      assert.equal(out.toString(), 'xx[REDACTED]yy', `split at ${i}`);
    }
    assert.equal(stream(['abcdef', 'defghi'], bytewise(input)).toString(), 'xx[REDACTED]yy');
  });

  it('handles a secret that is a prefix of another', () => {
    const secrets = ['abc', 'abcdef'];
    assert.equal(stream(secrets, [b('abcdef')]).toString(), '[REDACTED]');
    assert.equal(stream(secrets, [b('abcde!')]).toString(), '[REDACTED]de!');
    assert.equal(stream(secrets, bytewise(b('1abcdef2abcab'))).toString(), '1[REDACTED]2[REDACTED]ab');
    assert.equal(stream(secrets, [b('ab'), b('c')]).toString(), '[REDACTED]');
  });

  it('removes a secret split at every byte offset across two chunks', () => {
    const secret = 'sk-live-Zq9';
    const input = b(`before ${secret} after`);
    for (let i = 0; i <= input.length; i++) {
      const out = stream([secret], [input.subarray(0, i), input.subarray(i)]);
      assert.equal(out.toString(), 'before [REDACTED] after', `split at ${i}`);
    }
  });

  it('removes a secret split at every pair of offsets across three chunks', () => {
    const secret = 'p@ss';
    const input = b(`<${secret}>`);
    for (let i = 0; i <= input.length; i++) {
      for (let j = i; j <= input.length; j++) {
        const chunks = [input.subarray(0, i), input.subarray(i, j), input.subarray(j)];
        assert.equal(stream([secret], chunks).toString(), '<[REDACTED]>', `split at ${i},${j}`);
      }
    }
  });

  it('removes a secret fed one byte at a time', () => {
    const secret = 'correct horse battery staple';
    const input = b(`a${secret}b${secret}${secret}c`);
    assert.equal(stream([secret], bytewise(input)).toString(), 'a[REDACTED]b[REDACTED]c');
  });

  it('removes secrets split inside a multibyte UTF-8 character', () => {
    for (const secret of ['pässwörd-é', '🔑key🔑', 'é', '日本語🔒']) {
      const input = b(`ü${secret}🙂${secret}`);
      for (let i = 0; i <= input.length; i++) {
        const out = stream([secret], [input.subarray(0, i), input.subarray(i)]);
        assert.equal(out.toString(), 'ü[REDACTED]🙂[REDACTED]', `${secret} split at ${i}`);
      }
      assert.equal(stream([secret], bytewise(input)).toString(), 'ü[REDACTED]🙂[REDACTED]');
    }
  });

  it('matches raw bytes, including a partial character as a secret', () => {
    const emoji = b('🔑');
    const partial = emoji.subarray(1, 3);
    const out = stream([partial], bytewise(Buffer.concat([b('a'), emoji, b('b')])));
    assert.deepEqual(out, Buffer.concat([b('a'), emoji.subarray(0, 1), b('[REDACTED]'), emoji.subarray(3), b('b')]));
  });

  it('holds back at most the longest secret length minus one, and flush emits it', () => {
    const secret = 'secret-value';
    const r = new StreamRedactor([secret, 'xy']);
    let emitted = 0;
    let fed = 0;
    for (const chunk of [b('hello '), b('secr'), b('et-val'), b('no match here at all')]) {
      fed += chunk.length;
      emitted += r.push(chunk).length;
      assert.ok(fed - emitted <= secret.length - 1, `held ${fed - emitted}`);
    }
    const r2 = new StreamRedactor([secret]);
    assert.equal(r2.push(b('hello secret-val')).toString(), 'hello ');
    assert.equal(r2.flush().toString(), 'secret-val');
    // Bytes that cannot start a secret are not held back at all.
    const r3 = new StreamRedactor([secret]);
    assert.equal(r3.push(b('hello world')).toString(), 'hello world');
  });

  it('starts a fresh stream after flush', () => {
    const r = new StreamRedactor(['abc']);
    assert.equal(Buffer.concat([r.push(b('ab')), r.flush()]).toString(), 'ab');
    assert.equal(Buffer.concat([r.push(b('c abc')), r.flush()]).toString(), 'c [REDACTED]');
  });

  it('works with single-byte secrets (no hold-back at all)', () => {
    const r = new StreamRedactor(['x']);
    assert.equal(r.push(b('axxbx')).toString(), 'a[REDACTED]b[REDACTED]');
    // Adjacent to the marker still open from the previous chunk: merged, nothing new emitted.
    assert.equal(r.push(b('x')).toString(), '');
    assert.equal(r.push(b('yx')).toString(), 'y[REDACTED]');
    assert.equal(r.flush().length, 0);
  });
});

describe('marker choice', () => {
  it('uses [REDACTED] when nothing conflicts', () => {
    assert.equal(chooseMarker([b('hunter2')]), '[REDACTED]');
    assert.equal(new StreamRedactor(['hunter2']).marker, '[REDACTED]');
    assert.equal(new StreamRedactor([]).marker, '[REDACTED]');
  });

  it('avoids a marker that could complete a secret', () => {
    const cases: string[][] = [
      ['abc['], // the marker would continue the secret's tail
      [']abc'], // the secret's head could follow the marker
      ['x[REDACTED]y'], // the marker inside the secret
      ['[REDACTED]'],
      ['D'], // the secret inside the marker
      ['ED]tail'],
      ['head[RE'],
    ];
    for (const secrets of cases) {
      const marker = chooseMarker(secrets.map(b));
      assert.notEqual(marker, '[REDACTED]', `secrets ${JSON.stringify(secrets)}`);
      const r = new StreamRedactor(secrets);
      assert.equal(r.marker, marker);
    }
    assert.equal(chooseMarker([b('abc[')]), '<redacted>');
  });

  it('shows why: with a naive marker the output would contain the secret', () => {
    // 'a' + '[REDACTED]' contains 'a[' — exactly what chooseMarker prevents.
    const secret = 'a[';
    const out = stream([secret], [b('aa[')]).toString();
    assert.ok(!out.includes(secret), out);
    assert.throws(() => new StreamRedactor([secret], { marker: '[REDACTED]' }), /conflicts with secret #1/);
  });

  it('falls back to generated markers for adversarial secret sets', () => {
    const secrets = ['[', ']', '<', '>', '*', '#', '{', '}', '(', ')', '|', '~'].map(b);
    const marker = chooseMarker(secrets);
    for (const s of secrets) assert.ok(!b(marker).includes(s), marker);
    const printable = Array.from({ length: 94 }, (_, i) => b(String.fromCharCode(0x21 + i)));
    const m2 = chooseMarker(printable);
    for (const s of printable) assert.ok(!b(m2).includes(s), m2);
  });

  it('honours the preferred marker and rejects conflicting or empty caller markers', () => {
    assert.equal(chooseMarker([b('x')], '<gone>'), '<gone>');
    assert.equal(new StreamRedactor(['x'], { marker: '<gone>' }).marker, '<gone>');
    assert.throws(() => new StreamRedactor(['secret]'], { marker: ']]' }), /conflicts with secret #1/);
    assert.throws(() => new StreamRedactor(['abc'], { marker: 'zabcz' }), /conflicts/);
    assert.throws(() => new StreamRedactor(['abc'], { marker: 'c!' }), /conflicts/);
    assert.throws(() => new StreamRedactor(['abc'], { marker: '' }), /must not be empty/);
    // The error must not leak the secret.
    assert.throws(
      () => new StreamRedactor(['topsecret!'], { marker: '!x' }),
      (err: Error) => !err.message.includes('topsecret'),
    );
  });
});

describe('StreamRedactor fuzz against a one-shot reference', () => {
  it('agrees on random inputs, secrets and chunkings, and never leaks a secret', () => {
    const rand = mulberry32(0x5eed);
    const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
    const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
    // Small alphabets force overlaps, prefixes, adjacency and marker-shaped text.
    const tokenSets = [
      ['a', 'b', 'c'],
      ['a', 'b', 'é', '🔑'],
      ['[', ']', 'R', 'E', 'D', 'A', 'C', 'T', 'x'],
      ['<', '>', '*', '#', 'a'],
    ];
    const randomBytes = (alphabet: readonly number[], n: number): Buffer =>
      Buffer.from(Array.from({ length: n }, () => pick(alphabet)));

    let cases = 0;
    for (let round = 0; round < 300; round++) {
      let secrets: Buffer[];
      let input: Buffer;
      if (round % 3 === 2) {
        // Raw bytes, including fragments of multibyte characters.
        const alphabet = [0x61, 0x62, 0xc3, 0xa9, 0xf0, 0x9f, 0x5b, 0x5d];
        secrets = Array.from({ length: int(1, 4) }, () => randomBytes(alphabet, int(1, 6)));
        input = randomBytes(alphabet, int(0, 120));
      } else {
        const tokens = pick(tokenSets);
        const word = (n: number): string => Array.from({ length: n }, () => pick(tokens)).join('');
        secrets = Array.from({ length: int(1, 4) }, () => b(word(int(1, 6))));
        const parts: string[] = [];
        for (let k = int(0, 12); k > 0; k--) {
          parts.push(rand() < 0.4 ? pick(secrets).toString('utf8') : word(int(0, 8)));
        }
        input = b(parts.join(''));
      }

      const redactor = new StreamRedactor(secrets);
      const marker = b(redactor.marker);
      const expected = reference(input, allPatterns(secrets), marker);
      for (let c = 0; c < 4; c++) {
        const chunks: Buffer[] = [];
        let pos = 0;
        while (pos < input.length) {
          const len = c === 0 ? 1 : int(0, 9);
          chunks.push(input.subarray(pos, pos + len));
          pos += len;
        }
        const out = stream(secrets, chunks);
        assert.deepEqual(out, expected, `round ${round} chunking ${c}`);
        for (const s of allPatterns(secrets)) assert.equal(out.indexOf(s), -1, `round ${round}: a pattern leaked`);
        cases++;
      }
    }
    assert.equal(cases, 1200);
  });
});

it('RedactionPatterns.shared: one compile per set of values, keyed by content (a mutated array gets its own), least recently used evicted', () => {
  const a = ['sekrit-value-1', 'another-secret-2'];
  const p1 = RedactionPatterns.shared(a);
  assert.equal(RedactionPatterns.shared([...a]), p1, 'equal values share one compile');
  a.push('third-secret-3');
  const p2 = RedactionPatterns.shared(a);
  assert.notEqual(p2, p1, 'the same array with a value added is a new set');
  assert.equal(p2.secretCount, 3);
  const r = new StreamRedactor(p2);
  const out = Buffer.concat([r.push(Buffer.from('x third-secret-3 y')), r.flush()]).toString();
  assert.doesNotMatch(out, /third-secret-3/);
  for (let i = 0; i < 20; i++) RedactionPatterns.shared([`filler-secret-${i}`]);
  assert.notEqual(RedactionPatterns.shared(['sekrit-value-1', 'another-secret-2']), p1, 'evicted after 16 other sets');
});
