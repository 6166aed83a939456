// Hostile tests: secrets encoded inside longer text, split anywhere, overlapping; the stream must
// match the brute-force reference over every pattern and must not let the secret be recovered.
import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { StreamRedactor } from '../../src/redaction/stream-redactor.js';
import { RedactionPatterns } from '../../src/redaction/patterns.js';
import { secretForms } from '../../src/redaction/secret-forms.js';
import { allPatterns, b, bytewise, mulberry32, randomBuffer, randomChunks, reference, stream } from './redaction-helpers.js';

const B64_CHARS = /[A-Za-z0-9+/=_-]+/g;

/** Every byte string the base64 runs of `text` decode to, at each of the 4 character alignments. */
function decodedRuns(text: string): Buffer[] {
  const out: Buffer[] = [];
  for (const run of text.match(B64_CHARS) ?? []) {
    for (let shift = 0; shift < 4; shift++) {
      const r = run.slice(shift);
      out.push(Buffer.from(r.replace(/-/g, '+').replace(/_/g, '/'), 'base64'));
    }
  }
  return out;
}

/** True when some 4-byte window of `secret` appears in `data` (a recovered piece of the secret). */
function leaksPiece(data: Buffer, secret: Buffer): boolean {
  for (let i = 0; i + 4 <= secret.length; i++) if (data.includes(secret.subarray(i, i + 4))) return true;
  return false;
}

describe('encoded secrets in streams', () => {
  it('leaves no 4-byte piece of the secret recoverable from base64 at offsets 0..5, however chunked', () => {
    const rand = mulberry32(0xba5e64);
    for (const n of [8, 9, 10, 16, 33]) {
      const secret = randomBuffer(rand, n);
      for (let offset = 0; offset <= 5; offset++) {
        const payload = Buffer.concat([randomBuffer(rand, offset), secret, randomBuffer(rand, 5)]);
        for (const enc of ['base64', 'base64url'] as const) {
          const input = b(`data: ${payload.toString(enc)}\nnext line\n`);
          // The unredacted text does leak (so the check below can fail).
          assert.ok(decodedRuns(input.toString()).some((d) => d.includes(secret)), `n=${n} offset=${offset} ${enc}: premise`);
          for (const chunks of [[input], bytewise(input), randomChunks(input, rand, 7)]) {
            const out = stream([secret], chunks).toString('latin1');
            for (const d of decodedRuns(out)) assert.ok(!leaksPiece(d, secret), `n=${n} offset=${offset} ${enc}: leaked in ${out}`);
          }
        }
      }
    }
  });

  it('removes percent-encoded and form-encoded secrets from URLs, split at every byte', () => {
    const secret = 'p@ss w0rd/é!';
    const url = b(`GET https://api.example/v1?token=${encodeURIComponent(secret)}&q=${new URLSearchParams({ s: secret }).toString()}`);
    const expected = `GET https://api.example/v1?token=[REDACTED]&q=s=[REDACTED]`;
    for (let i = 0; i <= url.length; i++) {
      assert.equal(stream([secret], [url.subarray(0, i), url.subarray(i)]).toString(), expected, `split at ${i}`);
    }
    assert.equal(stream([secret], bytewise(url)).toString(), expected);
    const lower = url.toString().replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
    assert.equal(stream([secret], bytewise(b(lower))).toString(), expected);
  });

  it('removes JSON-escaped secrets so that the parsed JSON no longer holds them', () => {
    const secret = 'pässwörd/"quoted"\n🔑';
    const plain = JSON.stringify({ a: `x${secret}y`, b: [secret] });
    const ascii = plain.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`).replaceAll('/', '\\/');
    for (const text of [plain, ascii]) {
      const input = b(text);
      assert.equal((JSON.parse(text) as { b: string[] }).b[0], secret, 'premise');
      for (let i = 0; i <= input.length; i++) {
        const out = stream([secret], [input.subarray(0, i), input.subarray(i)]).toString();
        const parsed = JSON.parse(out) as { a: string; b: string[] };
        assert.equal(parsed.a, 'x[REDACTED]y', `split at ${i}`);
        assert.deepEqual(parsed.b, ['[REDACTED]']);
      }
    }
  });

  it('removes non-ASCII secrets and their encodings split inside multibyte characters', () => {
    const secret = 'ключ-日本語-🔑';
    const forms = secretForms(b(secret));
    const input = Buffer.concat([b('é'), ...forms.flatMap((f) => [f, b(' 🙂 ')])]);
    const expected = `é${' 🙂 '.replace(/^/, '[REDACTED]').repeat(forms.length)}`;
    for (let i = 0; i <= input.length; i++) {
      assert.equal(stream([secret], [input.subarray(0, i), input.subarray(i)]).toString(), expected, `split at ${i}`);
    }
    assert.equal(stream([secret], bytewise(input)).toString(), expected);
  });

  it('merges overlapping and nested secrets, raw and encoded', () => {
    assert.equal(stream(['abc', 'bcd'], bytewise(b('xabcdy'))).toString(), 'x[REDACTED]y');
    assert.equal(stream(['abcdefghij', 'defg'], bytewise(b('1defg2abcdefghij3'))).toString(), '1[REDACTED]2[REDACTED]3');
    // Two secrets that overlap in the bytes overlap in base64 too: one marker.
    const s1 = b('first-secret-value');
    const s2 = b('secret-value-second');
    const run = b('..first-secret-value-second..').toString('base64');
    const out = stream([s1, s2], bytewise(b(`<${run}>`))).toString();
    assert.equal(out.split('[REDACTED]').length, 2, out);
    for (const d of decodedRuns(out)) assert.ok(!leaksPiece(d, s1) && !leaksPiece(d, s2), out);
  });

  it('holds back at most the longest pattern minus one byte, and nothing that cannot start one', () => {
    const secret = 'sk-0123456789abcdef0123456789';
    const r = new StreamRedactor([secret]);
    const maxLen = Math.max(...r.compiled.patterns.map((p) => p.length));
    assert.ok(maxLen > secret.length);
    let fed = 0;
    let emitted = 0;
    const rand = mulberry32(3);
    const text = b(`${'lorem ipsum '.repeat(40)}${encodeURIComponent(secret).slice(0, 20)}`);
    for (const c of randomChunks(text, rand, 9)) {
      fed += c.length;
      emitted += r.push(c).length;
      assert.ok(fed - emitted <= maxLen - 1, `held ${fed - emitted}`);
    }
    assert.equal(fed - emitted, 20, 'the encoded prefix is held back');
    assert.equal(r.flush().toString(), encodeURIComponent(secret).slice(0, 20));
  });
});

describe('stream against the full-pattern reference (seeded fuzz)', () => {
  for (const seed of [1, 2, 0xc0ffee, 0x5eed5]) {
    it(`agrees on random secrets, encodings and chunkings (seed ${seed})`, () => {
      const rand = mulberry32(seed);
      const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
      const alphabets: number[][] = [
        [...b('abcAB+/=%')],
        [...b('ab'), 0xc3, 0xa9, 0x22, 0x5c, 0x2f, 0x20],
        Array.from({ length: 256 }, (_, i) => i),
      ];
      for (let round = 0; round < 60; round++) {
        const alphabet = pick(alphabets);
        const secrets = Array.from({ length: int(1, 5) }, () => randomBuffer(rand, int(1, 14), alphabet));
        const patterns = allPatterns(secrets);
        const parts: Buffer[] = [];
        for (let k = int(0, 14); k > 0; k--) {
          const x = rand();
          if (x < 0.35) parts.push(pick(patterns));
          else if (x < 0.5) parts.push(b(Buffer.concat([randomBuffer(rand, int(0, 5)), pick(secrets), randomBuffer(rand, int(0, 3))]).toString(pick(['base64', 'base64url'] as const))));
          else if (x < 0.6) parts.push(pick(patterns).subarray(0, int(0, 12)));
          else parts.push(randomBuffer(rand, int(0, 10), alphabet));
        }
        const input = Buffer.concat(parts);
        const compiled = RedactionPatterns.compile(secrets);
        const expected = reference(input, patterns, compiled.markerBytes);
        for (const chunks of [[input], bytewise(input), randomChunks(input, rand, 5), randomChunks(input, rand, 40), randomChunks(input, rand, 160)]) {
          const r = new StreamRedactor(compiled);
          const out = Buffer.concat([...chunks.map((c) => Buffer.from(r.push(c))), r.flush()]);
          assert.deepEqual(out, expected, `seed ${seed} round ${round}`);
          for (const p of patterns) assert.equal(out.indexOf(p), -1, `seed ${seed} round ${round}: a pattern survived`);
        }
      }
    });
  }
});
