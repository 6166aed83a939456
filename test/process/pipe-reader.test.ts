// The PipeReader (decision 117) on real pipes: a fast producer is read in large pieces into a few
// reused buffers, a lent buffer is never read into before it is released, a sink's "no more"
// holds the reads, and through the supervisor a fast producer's secrets reach no artifact.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { createHash, randomBytes } from 'node:crypto';
import { closeSync, readFileSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { after, before, describe, it } from 'node:test';
import * as libc from '../../native-helpers/libc.js';
import type { ProcessSupervisor, SupervisedTree } from '../../src/process/index.js';
import { PipeReader } from '../../src/process/pipe-reader.js';
import { tempDir, waitFor } from '../helpers/procs.js';
import { linuxSupervisorSuite } from './supervisor-suite.js';

const MIB = 1024 * 1024;
const linux = process.platform === 'linux' && libc.libcAvailable();

let dir: { path: string; remove(): void };
before(() => {
  dir = tempDir('pipe-reader-');
});
after(() => dir.remove());

/**
 * Runs `body` with a PipeReader on a fresh pipe (1 MiB, as the supervisor's stdout pipe) that
 * `cat file` writes into; returns cat's exit code. Whatever `body` does, the read end is closed at
 * the end, so a cat blocked on a pipe nobody reads any more ends too.
 */
async function withCat(file: string, body: (reader: PipeReader, closed: Promise<void>) => Promise<void>): Promise<number | null> {
  const [r, w] = libc.pipeCloexec();
  libc.setPipeSize(r, MIB);
  const child = spawn('cat', [file], { stdio: ['ignore', w, 'inherit'] });
  closeSync(w);
  const exited = new Promise<number | null>((resolve) => child.once('close', resolve));
  const reader = new PipeReader(r);
  const closed = new Promise<void>((resolve) => reader.socket.once('close', () => resolve()));
  try {
    await body(reader, closed);
  } finally {
    reader.socket.destroy();
  }
  return exited;
}

const sha = (b: Buffer): string => createHash('sha256').update(b).digest('hex');

describe('PipeReader', { skip: !linux }, () => {
  it('reads a fast producer in pieces above 64 KiB into at most four buffers; a lent piece is intact until released', async () => {
    const data = randomBytes(24 * MIB);
    const file = join(dir.path, 'fast.bin');
    writeFileSync(file, data);
    const received: Buffer[] = [];
    const buffers = new Set<ArrayBufferLike>();
    const loans: Array<{ chunk: Buffer; digest: string; release: () => void }> = [];
    let overwritten = 0;
    let largest = 0;
    /** Releases the oldest loan after checking that nothing was read into its buffer meanwhile. */
    const repay = (): void => {
      const loan = loans.shift()!;
      if (sha(loan.chunk) !== loan.digest) overwritten++;
      loan.release();
    };
    const code = await withCat(file, async (reader, closed) => {
      reader.start((chunk, release) => {
        received.push(Buffer.from(chunk));
        largest = Math.max(largest, chunk.length);
        if (release === undefined) return true;
        buffers.add(chunk.buffer);
        loans.push({ chunk, digest: sha(chunk), release });
        // A slow consumer: loans are repaid a little later, two at a time, so the reader runs out
        // of spare buffers now and then and must wait instead of reading into a lent one.
        if (loans.length >= 3) setTimeout(() => loans.length > 0 && (repay(), loans.length > 0 && repay()), 2);
        return true;
      });
      await closed;
      while (loans.length > 0) repay();
    });
    assert.equal(code, 0);
    assert.equal(overwritten, 0, 'a lent buffer was read into before it was released');
    assert.ok(Buffer.concat(received).equals(data), 'every byte, in order');
    assert.ok(largest > 64 * 1024, `largest read ${largest} bytes`);
    assert.ok(buffers.size <= 4, `${buffers.size} buffers lent`);
  });

  it('takes nothing more after the sink says no, until resume()', async () => {
    const data = randomBytes(4 * MIB);
    const file = join(dir.path, 'held.bin');
    writeFileSync(file, data);
    const received: Buffer[] = [];
    let calls = 0;
    const code = await withCat(file, async (reader, closed) => {
      reader.start((chunk, release) => {
        calls++;
        received.push(Buffer.from(chunk));
        release?.();
        return calls !== 1;
      });
      await waitFor('the first read', () => calls > 0);
      await new Promise((r) => setTimeout(r, 100));
      assert.equal(calls, 1, 'reads held after the first');
      reader.resume();
      await closed;
    });
    assert.equal(code, 0);
    assert.ok(Buffer.concat(received).equals(data));
  });
});

const started = new Set<string>();
function track(t: SupervisedTree): SupervisedTree {
  started.add(t.spawnId);
  return t;
}

describe('a fast producer through the PipeReader never puts a secret in the artifact', { skip: !linux }, () => {
  let sup!: ProcessSupervisor;
  linuxSupervisorSuite('no-cgroup', started, (s) => (sup = s));

  it('48 MiB with secrets ~100 KiB to 3 MiB apart, across 1 MiB reads and reused buffers: the artifact is exactly the redacted stream', async () => {
    const secret = 'pipe-reader-s3cret-7f3a9c';
    // Blocks of varied length, so occurrences fall across read and buffer boundaries at many offsets;
    // every other block is 1–3 MiB, so many reads hold no secret and reach the artifact queue as
    // views of the lent buffer (a chunk with a secret is copied by the redactor anyway).
    const blocks: Buffer[] = [];
    let size = 0;
    for (let i = 0; size < 48 * MIB; i++) {
      const length = i % 2 === 0 ? 60_000 + ((i * 7_919) % 80_000) : MIB + ((i * 104_729) % (2 * MIB));
      const filler = Buffer.alloc(length, 0x61 + (i % 26));
      blocks.push(filler, Buffer.from(secret));
      size += filler.length + secret.length;
    }
    const data = Buffer.concat(blocks);
    const file = join(dir.path, 'secrets.bin');
    writeFileSync(file, data);
    const live: Buffer[] = [];
    const tree = track(sup.spawnTree({ command: 'cat', args: [file], redact: [secret], onStdout: (c) => live.push(c) }));
    const leader = (tree as unknown as { child: { readers?: { stdout?: unknown } } }).child;
    assert.ok(leader.readers?.stdout instanceof PipeReader, 'stdout is read by a PipeReader here');
    const out = await tree.done;
    assert.equal(out.reason, 'exited');
    assert.equal(out.stdout.bytes, data.length);
    const artifact = readFileSync(join(out.artifacts!.root, out.artifacts!.stdout));
    const expected = Buffer.from(data.toString('latin1').replaceAll(secret, '[REDACTED]'), 'latin1');
    assert.equal(artifact.indexOf(secret), -1, 'no raw secret in the artifact');
    assert.ok(artifact.equals(expected), 'the artifact is exactly the redacted stream');
    assert.ok(Buffer.concat(live).equals(expected), 'so is the live copy');
    assert.ok(!out.stdout.tail.includes(secret));
  });
});
