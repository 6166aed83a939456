import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import {
  chooseMarker,
  MAX_TABLE_BYTES,
  RedactionError,
  RedactionPatterns,
  redactText,
  secretForms,
  StreamRedactor,
} from '../../src/redaction/index.js';
import { allPatterns, b, mulberry32, randomBuffer, reference } from './redaction-helpers.js';

describe('redactText', () => {
  it('redacts raw and encoded secrets in a string, UTF-8 in and out', () => {
    const secret = 'pässwörd-🔑-0001';
    const text = `ключ ${secret} / ${Buffer.from(secret).toString('base64')} / ${encodeURIComponent(secret)} / ${JSON.stringify(secret)} 🙂`;
    assert.equal(redactText(text, [secret]), 'ключ [REDACTED] / [REDACTED] / [REDACTED] / "[REDACTED]" 🙂');
    assert.equal(redactText('nothing here 🙂', [secret]), 'nothing here 🙂');
    assert.equal(redactText('no secrets at all', []), 'no secrets at all');
  });

  it('reuses a compiled set or a redactor without touching the redactor stream', () => {
    const compiled = RedactionPatterns.compile(['hunter2-hunter2']);
    assert.equal(redactText('a hunter2-hunter2 b', compiled), 'a [REDACTED] b');
    const r = new StreamRedactor(compiled);
    assert.equal(r.push(b('x hunter2-')).toString(), 'x ');
    assert.equal(redactText('hunter2-hunter2', r), '[REDACTED]');
    assert.equal(Buffer.concat([r.push(b('hunter2 y')), r.flush()]).toString(), '[REDACTED] y');
  });

  it('matches the reference on random text and never returns a pattern', () => {
    const rand = mulberry32(42);
    const secrets = ['sk-live-abcdefgh', 'é/é/é/é', 'tok en+42'];
    const patterns = allPatterns(secrets);
    const compiled = RedactionPatterns.compile(secrets);
    for (let round = 0; round < 200; round++) {
      const parts: string[] = [];
      for (let k = 0; k < 8; k++) {
        parts.push(rand() < 0.3 ? patterns[Math.floor(rand() * patterns.length)]!.toString('utf8') : randomBuffer(rand, 6, [...b('ab é/+%')]).toString('utf8'));
      }
      const text = parts.join('');
      const out = redactText(text, compiled);
      assert.equal(out, reference(b(text), patterns, compiled.markerBytes).toString('utf8'), `round ${round}`);
      for (const p of patterns) assert.ok(!b(out).includes(p), `round ${round}`);
    }
  });

  it('returns valid text free of patterns when a secret is part of a character', () => {
    const emoji = b('🔑');
    const partial = emoji.subarray(1, 3);
    const out = redactText(`a🔑b`, [partial]);
    assert.ok(!b(out).includes(partial));
    assert.equal(out, 'a\ufffd[REDACTED]\ufffdb');
  });
});

describe('marker safety against encoded forms', () => {
  it('never picks a marker that contains a base64 form of a secret', () => {
    // The base64 of these six bytes is "REDACTED": printing "[REDACTED]" would print the secret.
    const secret = Buffer.from('REDACTED', 'base64');
    assert.ok(secretForms(secret).some((f) => f.equals(b('REDACTED'))));
    const marker = chooseMarker([secret]);
    assert.notEqual(marker, '[REDACTED]');
    const out = new StreamRedactor([secret]).push(Buffer.concat([b('x'), secret, b('y')]));
    assert.ok(!out.includes(b('REDACTED')), out.toString('latin1'));
  });

  it('refuses a caller marker that could form an encoded secret, naming the form and not the value', () => {
    const secret = 'abc def ghi';
    // Raw, the marker "+def+" cannot touch the secret; its form encoding "abc+def+ghi" contains it.
    assert.throws(
      () => new StreamRedactor([secret], { marker: '+def+' }),
      (err: unknown) =>
        err instanceof RedactionError &&
        err.code === 'REDACTION_MARKER_CONFLICT' &&
        /secret #1 \(its form-urlencoded form\)/.test(err.message) &&
        !err.message.includes('abc'),
    );
    assert.throws(() => new StreamRedactor(['abc'], { marker: 'c!' }), (err: unknown) => err instanceof RedactionError && err.code === 'REDACTION_MARKER_CONFLICT');
    assert.throws(() => new StreamRedactor(['abc'], { marker: '' }), (err: unknown) => err instanceof RedactionError && err.code === 'REDACTION_MARKER_EMPTY');
  });

  it('finds a safe marker for adversarial sets whose forms use every printable byte', () => {
    const rand = mulberry32(99);
    const secrets = Array.from({ length: 30 }, () => randomBuffer(rand, 12));
    secrets.push(...['[', ']', '<', '>', '*', '#', '{', '}', '(', ')', '|', '~'].map(b));
    const patterns = allPatterns(secrets);
    const marker = b(chooseMarker(secrets));
    const r = new StreamRedactor(secrets);
    assert.equal(r.marker, marker.toString());
    // Every pattern placed next to the marker on both sides, in all combinations, never re-forms one.
    const input = Buffer.concat(patterns.flatMap((p) => [p, b('.'), p.subarray(1)]));
    const out = Buffer.concat([r.push(input), r.flush()]);
    assert.deepEqual(out, reference(input, patterns, marker));
    for (const p of patterns) assert.equal(out.indexOf(p), -1);
  });
});

describe('construction failures are typed', () => {
  it('fails closed with REDACTION_TOO_LARGE beyond the matcher cap, quickly and without the values', () => {
    const rand = mulberry32(5);
    const secrets = Array.from({ length: 40 }, () => randomBuffer(rand, 4096));
    const t0 = Date.now();
    assert.throws(
      () => RedactionPatterns.compile(secrets),
      (err: unknown) => err instanceof RedactionError && err.code === 'REDACTION_TOO_LARGE' && err.message.includes(`${MAX_TABLE_BYTES / 2 ** 20} MiB`),
    );
    assert.ok(Date.now() - t0 < 5_000);
  });

  it('compiles ten 1.7 KB PEM keys with all their forms under the cap (the dense table refused a second one)', () => {
    const rand = mulberry32(6);
    const pem = (): string =>
      `-----BEGIN PRIVATE KEY-----\n${randomBuffer(rand, 1200).toString('base64').replace(/.{64}/g, '$&\n')}\n-----END PRIVATE KEY-----\n`;
    const keys = Array.from({ length: 10 }, pem);
    const compiled = RedactionPatterns.compile(keys);
    assert.ok(compiled.automaton!.tableBytes < MAX_TABLE_BYTES / 4, `${compiled.automaton!.tableBytes} bytes`);
    assert.equal(redactText(`the key: ${keys[7]}, its base64: ${Buffer.from(keys[2]!).toString('base64')}`, compiled), 'the key: [REDACTED], its base64: [REDACTED]');
  });

  it('rejects a marker option next to an already compiled set', () => {
    const compiled = RedactionPatterns.compile(['abcdefgh']);
    assert.throws(() => new StreamRedactor(compiled, { marker: '<x>' }), /pass the marker to RedactionPatterns.compile/);
    assert.equal(new StreamRedactor(compiled, { marker: compiled.marker }).marker, compiled.marker);
  });
});
