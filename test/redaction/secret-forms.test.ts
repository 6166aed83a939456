import assert from 'node:assert/strict';
import { describe, it } from 'node:test';
import { FORM_FLOOR, labelledSecretForms, secretForms } from '../../src/redaction/secret-forms.js';
import { b, mulberry32, randomBuffer } from './redaction-helpers.js';

const containsAny = (haystack: Buffer, forms: Buffer[]): boolean => forms.some((f) => haystack.includes(f));

describe('secretForms', () => {
  it('puts the raw secret first, deduplicates, and drops derived forms under the floor', () => {
    // Of a 3-byte secret only the raw bytes and its separated hex (8 characters) reach the floor.
    assert.deepEqual(secretForms(b('abc')), [b('abc'), b('61:62:63'), b('61 62 63')]);
    assert.deepEqual(secretForms(Buffer.alloc(0)), []);
    for (const secret of ['abc', 'hunter2!', 'sk-live-0123456789abcdef', 'pässwörd/é x', '🔑']) {
      const forms = secretForms(b(secret));
      assert.deepEqual(forms[0], b(secret));
      const keys = forms.map((f) => f.toString('latin1'));
      assert.equal(new Set(keys).size, keys.length, `${secret}: duplicates`);
      for (const f of forms.slice(1)) assert.ok(f.length >= FORM_FLOOR, `${secret}: ${f.toString()} under the floor`);
    }
    // A short secret is redacted raw only; its encodings would be noise-length.
    assert.equal(secretForms(b('ab')).length, 1);
  });

  it('gives every secret of 7 bytes or more all of its base64 forms (3 offsets x 2 alphabets + whole)', () => {
    const forms = labelledSecretForms(b('abcdefg'));
    assert.ok(forms.filter((f) => f.kind === 'base64').length >= 4);
    const rand = mulberry32(7);
    for (let n = 7; n <= 40; n++) {
      const secret = randomBuffer(rand, n);
      const kinds = labelledSecretForms(secret).map((f) => f.kind);
      assert.ok(kinds.filter((k) => k === 'base64').length >= 3, `n=${n}`);
    }
  });

  it('finds a form inside base64 and base64url of any longer buffer, at every offset', () => {
    const rand = mulberry32(11);
    for (const n of [7, 8, 9, 16, 31, 48]) {
      const secret = randomBuffer(rand, n);
      const forms = secretForms(secret);
      for (let pre = 0; pre <= 5; pre++) {
        for (let post = 0; post <= 3; post++) {
          const whole = Buffer.concat([randomBuffer(rand, pre), secret, randomBuffer(rand, post)]);
          for (const enc of ['base64', 'base64url'] as const) {
            assert.ok(containsAny(b(whole.toString(enc)), forms), `n=${n} pre=${pre} post=${post} ${enc}`);
          }
        }
      }
      // Encoded on its own, the whole encoding (with its padding) is one of the forms.
      assert.ok(forms.some((f) => f.equals(b(secret.toString('base64')))));
      assert.ok(forms.some((f) => f.equals(b(secret.toString('base64url')))));
    }
  });

  it('finds a form inside percent-encoded and form-encoded text', () => {
    for (const secret of ['p@ss w0rd/é!(x)', 'token with spaces', "a'b*c~d!e(f)g"]) {
      const forms = secretForms(b(secret));
      const text = `q=1&${secret}&z`;
      const lower = (s: string): string => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
      for (const encoded of [
        encodeURIComponent(text),
        lower(encodeURIComponent(text)),
        new URLSearchParams({ k: text }).toString(),
        lower(new URLSearchParams({ k: text }).toString()),
      ]) {
        assert.ok(containsAny(b(encoded), forms), `${secret}: ${encoded}`);
      }
    }
  });

  it('finds a form inside JSON, including ASCII-only \\u escapes and escaped slashes', () => {
    for (const secret of ['line1\nline2 "quoted" \\ tab\t', 'pässwörd/é-🔑-secret', 'a/b/c/d/e/f/g']) {
      const forms = secretForms(b(secret));
      const json = JSON.stringify({ k: `before ${secret} after` });
      const asciiLower = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`);
      const asciiUpper = json.replace(/[\u0080-\uffff]/g, (c) => `\\u${c.charCodeAt(0).toString(16).toUpperCase().padStart(4, '0')}`);
      for (const encoded of [json, asciiLower, asciiUpper, json.replaceAll('/', '\\/'), asciiLower.replaceAll('/', '\\/')]) {
        assert.ok(containsAny(b(encoded), forms), `${JSON.stringify(secret)}: ${encoded}`);
      }
    }
  });

  it('derives no JSON form from bytes that are not UTF-8 (no JSON encoder can emit them)', () => {
    const secret = Buffer.from([0xff, 0xfe, 0x41, 0x42, 0x43, 0x44, 0x45, 0x46, 0x47]);
    assert.ok(!labelledSecretForms(secret).some((f) => f.kind === 'json'));
    assert.ok(labelledSecretForms(secret).some((f) => f.kind === 'percent'));
  });

  it('finds a form inside hex of any longer buffer: plain, separated bytes and xxd groups, both cases', () => {
    const rand = mulberry32(0x4e8);
    for (const n of [3, 8, 17, 32]) {
      const secret = randomBuffer(rand, n);
      const forms = secretForms(secret);
      for (let pre = 0; pre <= 3; pre++) {
        const whole = Buffer.concat([randomBuffer(rand, pre), secret, randomBuffer(rand, 2)]);
        const bytes = Array.from(whole, (x) => x.toString(16).padStart(2, '0'));
        // xxd groups two bytes from the start of its dump.
        const xxd = bytes.map((h, i) => (i % 2 === 1 ? `${h} ` : h)).join('');
        for (const text of [bytes.join(''), bytes.join(':'), bytes.join(' '), xxd]) {
          for (const t of [text, text.toUpperCase()]) {
            // Of 3 bytes, only the separated forms reach the floor (plain 6, grouped 7 characters).
            if (n < 8 && text !== bytes.join(':') && text !== bytes.join(' ')) continue;
            assert.ok(containsAny(b(t), forms), `n=${n} pre=${pre}: ${t}`);
          }
        }
      }
    }
  });

  it('finds a form inside text percent-encoded twice by the same encoder', () => {
    for (const secret of ['p@ss w0rd/é!(x)', 'token with spaces', 'a+b=c&d']) {
      const forms = secretForms(b(secret));
      const text = `q=1&${secret}&z`;
      const lower = (s: string): string => s.replace(/%[0-9A-F]{2}/g, (m) => m.toLowerCase());
      const form = (s: string): string => new URLSearchParams({ k: s }).toString().slice(2);
      for (const encoded of [
        encodeURIComponent(encodeURIComponent(text)),
        lower(encodeURIComponent(lower(encodeURIComponent(text)))),
        form(form(text)),
        lower(form(lower(form(text)))),
      ]) {
        assert.ok(containsAny(b(encoded), forms), `${secret}: ${encoded}`);
      }
    }
  });

  it('finds a form inside UTF-16LE text (what Windows tools print), ASCII or not', () => {
    for (const secret of ['sk-live-0123456789', 'pässwörd-🔑-x']) {
      const forms = secretForms(b(secret));
      assert.ok(containsAny(Buffer.from(`\ufeffbefore ${secret} after\r\n`, 'utf16le'), forms), secret);
    }
  });
});
