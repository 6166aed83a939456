// A command prints a secret through real encoders (base64 wrapped at 76 and 64 columns, LF and
// CRLF, xxd -p and xxd, byte-separated hex, UTF-16LE, percent-encoding twice), re-chunked into
// random pieces: the artifact file must hold nothing that decodes back to the secret.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { describe, test } from 'node:test';
import type { ProcessSupervisor, SupervisedTree } from '../../src/process/index.js';
import { fixture } from '../helpers/procs.js';
import { linuxSupervisorSuite } from './supervisor-suite.js';

const started = new Set<string>();
function track(t: SupervisedTree): SupervisedTree {
  started.add(t.spawnId);
  return t;
}

/** Each section: a name and the shell that prints the secret (in $S, hex in $H) that way. */
const SECTIONS: ReadonlyArray<readonly [string, string]> = [
  ['base64-76', `{ head -c 37 /dev/urandom; printf %s "$S"; head -c 90 /dev/urandom; } | base64`],
  ['base64-76-crlf', `{ head -c 58 /dev/urandom; printf %s "$S"; head -c 90 /dev/urandom; } | base64 | sed 's/$/\\r/'`],
  ['openssl-64', `{ head -c 47 /dev/urandom; printf %s "$S"; head -c 90 /dev/urandom; } | openssl base64`],
  ['xxd-plain', `{ head -c 29 /dev/urandom; printf %s "$S"; head -c 40 /dev/urandom; } | xxd -p`],
  ['xxd-upper', `{ head -c 3 /dev/urandom; printf %s "$S"; } | xxd -p -u`],
  ['hex-colon', `printf %s "$S" | od -An -v -tx1 | tr -s ' \\n' '  ' | sed 's/^ //; s/ $//; s/ /:/g'; echo`],
  ['utf16le', `printf 'token: %s\\n' "$S" | iconv -f UTF-8 -t UTF-16LE; echo`],
  ['percent-twice', `node -e 'console.log(encodeURIComponent("https://x.example/?k=" + encodeURIComponent(process.env.S)))'`],
];

function decodings(name: string, text: string): Buffer[] {
  if (name.startsWith('base64') || name.startsWith('openssl')) {
    const run = text.replace(/\r?\n/g, '').match(/[A-Za-z0-9+/]+/g) ?? [];
    return run.flatMap((r) => [0, 1, 2, 3].map((s) => Buffer.from(r.slice(s), 'base64')));
  }
  if (name.startsWith('xxd') || name === 'hex-colon') {
    const run = text.replace(/[\s:]/g, '').match(/[0-9a-fA-F]+/g) ?? [];
    return run.flatMap((r) => [0, 1].map((s) => Buffer.from(r.slice(s, s + ((r.length - s) & ~1)), 'hex')));
  }
  if (name === 'utf16le') return [Buffer.from(Buffer.from(text, 'latin1').toString('utf16le'), 'utf8')];
  return [Buffer.from(decodeURIComponent(decodeURIComponent(text.replace(/%(?![0-9A-F]{2})/gi, ''))), 'utf8')];
}

for (const mode of ['no-cgroup'] as const) {
  describe(`encoded secrets never reach the artifact (${mode})`, () => {
    let sup!: ProcessSupervisor;
    linuxSupervisorSuite(mode, started, (s) => (sup = s));

    /** Runs every section through the re-chunker; returns each section's text from the artifact file. */
    async function printSections(secret: string, seed: number, redact: string[]): Promise<Array<[string, string]>> {
      const script = SECTIONS.map(([name, cmd]) => `echo '--- ${name}'; ${cmd}`).join('\n');
      const tree = track(
        sup.spawnTree({
          command: 'sh',
          args: ['-c', `{ ${script}\n} | "${process.execPath}" "${fixture('rechunk.mjs')}" ${seed} ${seed * 13}`],
          env: { S: secret, PATH: process.env.PATH ?? '/usr/bin:/bin' },
          redact,
        }),
      );
      const out = await tree.done;
      assert.equal(out.reason, 'exited');
      assert.equal(out.exitCode, 0, out.stderr.tail);
      const file = readFileSync(join(out.artifacts!.root, out.artifacts!.stdout)).toString('latin1');
      const sections = file.split(/^--- /m).slice(1).map((s): [string, string] => [s.slice(0, s.indexOf('\n')), s.slice(s.indexOf('\n') + 1)]);
      assert.deepEqual(sections.map(([n]) => n), SECTIONS.map(([n]) => n), file);
      return sections;
    }

    const leaks = (name: string, body: string, raw: Buffer): boolean =>
      decodings(name, body).some((d) => {
        for (let i = 0; i + 8 <= raw.length; i++) if (d.includes(raw.subarray(i, i + 8))) return true;
        return false;
      });

    test('premise: without the secret bound for redaction, every section decodes back to it', async () => {
      const secret = 'sk-live-0-Zq8/vR+2mW0xYp7uT4nB-é-kkkk';
      for (const [name, body] of await printSections(secret, 1, [])) assert.ok(leaks(name, body, Buffer.from(secret)), `${name}:\n${body}`);
    });

    for (const seed of [1, 2, 3]) {
      test(`no section of the artifact file decodes back to the secret, chunked at random (seed ${seed})`, async () => {
        const secret = `sk-live-${seed}-Zq8/vR+2mW0xYp7uT4nB-é-${'k'.repeat(seed * 7)}`;
        for (const [name, body] of await printSections(secret, seed, [secret])) {
          assert.ok(body.length > 0, `${name}: printed nothing`);
          assert.ok(!leaks(name, body, Buffer.from(secret)), `${name}: 8 bytes of the secret decode back from\n${body}`);
        }
      });
    }
  });
}
