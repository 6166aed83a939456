// Secrets in encodings that wrap lines (MIME and PEM base64, xxd -p hex), in hex dumps, percent-
// encoded twice and in UTF-16LE, split at random chunk boundaries: what the stream emits must not
// let the secret be decoded back, and must equal the brute-force reference over the unwrapped text.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { describe, it } from 'node:test';
import { RedactionPatterns } from '../../src/redaction/patterns.js';
import { StreamRedactor } from '../../src/redaction/stream-redactor.js';
import { allPatterns, b, bytewise, mulberry32, randomBuffer, randomChunks, stream, wrapLines, wrapReference } from './redaction-helpers.js';

/** True when some 6-byte window of `secret` appears in `data`. */
function leaksPiece(data: Buffer, secret: Buffer): boolean {
  for (let i = 0; i + 6 <= secret.length; i++) if (data.includes(secret.subarray(i, i + 6))) return true;
  return false;
}

/** Everything base64 text decodes to once line breaks are gone, at each of the 4 alignments. */
function base64Decodings(text: string): Buffer[] {
  const out: Buffer[] = [];
  for (const run of text.replace(/\r?\n/g, '').match(/[A-Za-z0-9+/]+/g) ?? []) {
    for (let shift = 0; shift < 4; shift++) out.push(Buffer.from(run.slice(shift), 'base64'));
  }
  return out;
}

/** Everything hex text decodes to once separators and line breaks are gone, at both alignments. */
function hexDecodings(text: string): Buffer[] {
  const out: Buffer[] = [];
  for (const run of text.replace(/[\s:]/g, '').match(/[0-9a-fA-F]+/g) ?? []) {
    for (let shift = 0; shift < 2; shift++) out.push(Buffer.from(run.slice(shift).slice(0, (run.length - shift) & ~1), 'hex'));
  }
  return out;
}

function chunkings(input: Buffer, rand: () => number): Buffer[][] {
  return [[input], bytewise(input), randomChunks(input, rand, 3), randomChunks(input, rand, 50), randomChunks(input, rand, 300)];
}

describe('encoded secrets that real tools print', () => {
  const rand = mulberry32(0xe4c0de);
  const tool = (cmd: string, args: string[], input: Buffer): Buffer => execFileSync(cmd, args, { input, maxBuffer: 1 << 20 });

  for (const [name, cmd, args, decode] of [
    ['base64 (76 columns, LF)', 'base64', [], base64Decodings],
    ['base64 -w 64', 'base64', ['-w', '64'], base64Decodings],
    ['openssl base64 (64 columns)', 'openssl', ['base64'], base64Decodings],
    ['xxd -p (60 columns)', 'xxd', ['-p'], hexDecodings],
    ['xxd -p -u', 'xxd', ['-p', '-u'], hexDecodings],
  ] as const) {
    it(`${name}: the secret cannot be decoded from the stream, LF or CRLF, however split`, () => {
      for (const n of [16, 24, 41, 64]) {
        const secret = randomBuffer(rand, n);
        for (const pre of [0, 1, 2, 30, 55, 57, 100]) {
          const payload = Buffer.concat([randomBuffer(rand, pre), secret, randomBuffer(rand, 40)]);
          const lf = tool(cmd, [...args], payload).toString('latin1');
          for (const text of [lf, lf.replace(/\n/g, '\r\n')]) {
            const input = Buffer.from(`header line\n${text}trailer\n`, 'latin1');
            assert.ok(decode(text).some((d) => d.includes(secret)), `${name} n=${n} pre=${pre}: premise`);
            for (const chunks of chunkings(input, rand)) {
              const out = stream([secret], chunks).toString('latin1');
              for (const d of decode(out)) assert.ok(!leaksPiece(d, secret), `${name} n=${n} pre=${pre}: leaked in\n${out}`);
              assert.ok(out.startsWith('header line\n') && out.endsWith('trailer\n'), out);
            }
          }
        }
      }
    });
  }

  it('xxd (grouped hex with offsets): a secret within one dump line is gone from the hex and the ASCII column', () => {
    const secret = b('k3y-9f8e7d6c');
    for (const pre of [0, 1, 2, 3]) {
      const text = tool('xxd', [], Buffer.concat([b('ab'.repeat(pre).slice(0, pre)), secret, b('zz')])).toString('latin1');
      for (const t of [text, tool('xxd', ['-u'], Buffer.concat([b('x'.repeat(pre)), secret])).toString('latin1')]) {
        for (const chunks of chunkings(b(t), rand)) {
          const out = stream([secret], chunks).toString('latin1');
          const hexColumn = out.split('\n').map((l) => l.slice(10, 50)).join('');
          assert.ok(!out.includes(secret.toString('latin1')), out);
          for (const d of hexDecodings(hexColumn)) assert.ok(!leaksPiece(d, secret), `pre=${pre}: leaked in\n${out}`);
        }
      }
    }
  });

  it('iconv -t UTF-16LE and percent-encoding twice: nothing decodes back to the secret', () => {
    const secret = 'pässwörd with spaces/&=?';
    const utf16 = tool('iconv', ['-f', 'UTF-8', '-t', 'UTF-16LE'], b(`before ${secret} after\n`));
    const twice = b(`u=${encodeURIComponent(`https://x.example/?t=${encodeURIComponent(secret)}`)}\n`);
    for (const chunks of chunkings(utf16, rand)) {
      const out = stream([secret], chunks);
      assert.ok(!out.toString('utf16le').includes(secret) && !out.includes(Buffer.from(secret, 'utf16le')), out.toString('utf16le'));
    }
    for (const chunks of chunkings(twice, rand)) {
      const out = stream([secret], chunks).toString('latin1');
      assert.ok(!decodeURIComponent(decodeURIComponent(out.replace(/%(?![0-9A-F]{2})/gi, ''))).includes(secret), out);
    }
  });
});

describe('wrapped lines against the brute-force reference (seeded fuzz)', () => {
  for (const seed of [3, 0x77a9, 0xfeed, 0x1e55]) {
    it(`agrees on wrapped base64 and hex blocks, LF and CRLF, under every chunking (seed ${seed})`, () => {
      const rand = mulberry32(seed);
      const int = (lo: number, hi: number): number => lo + Math.floor(rand() * (hi - lo + 1));
      const pick = <T>(xs: readonly T[]): T => xs[Math.floor(rand() * xs.length)]!;
      for (let round = 0; round < 40; round++) {
        const secrets = Array.from({ length: int(1, 3) }, () => randomBuffer(rand, int(8, 70)));
        const patterns = allPatterns(secrets);
        const parts: Buffer[] = [];
        for (let k = int(1, 6); k > 0; k--) {
          const x = rand();
          const eol = pick(['\n', '\r\n']);
          const payload = Buffer.concat([randomBuffer(rand, int(0, 80)), pick(secrets), randomBuffer(rand, int(0, 80))]);
          if (x < 0.4) parts.push(b(wrapLines(payload.toString('base64'), pick([64, 76]), eol)));
          else if (x < 0.55) parts.push(b(wrapLines(payload.toString('hex'), 60, eol)));
          // A block that starts after other text on its first line is not unwrapped at its first
          // break (that line is longer than the width): a pattern here ends its own line.
          else if (x < 0.7) parts.push(pick(patterns), b(eol));
          else if (x < 0.8) parts.push(b(wrapLines(randomBuffer(rand, int(40, 200)).toString('base64'), pick([60, 64, 76]), eol)));
          else parts.push(b(`${'word '.repeat(int(0, 20))}${eol}`));
        }
        const input = Buffer.concat(parts);
        const compiled = RedactionPatterns.compile(secrets);
        const expected = wrapReference(input, patterns, compiled.markerBytes);
        for (const chunks of chunkings(input, rand)) {
          const r = new StreamRedactor(compiled);
          const out = Buffer.concat([...chunks.map((c) => Buffer.from(r.push(c))), r.flush()]);
          assert.deepEqual(out, expected, `seed ${seed} round ${round}`);
        }
        for (const s of secrets) {
          for (const d of [...base64Decodings(expected.toString('latin1')), ...hexDecodings(expected.toString('latin1'))]) {
            assert.ok(!d.includes(s), `seed ${seed} round ${round}: a secret decodes back`);
          }
        }
      }
    });
  }
});
