import assert from 'node:assert/strict';
import { spawnSync } from 'node:child_process';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { after, before, describe, it } from 'node:test';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { artifactPath, createArtifactDir } from '../../src/process/artifacts.js';
import { StreamCapture } from '../../src/process/output-capture.js';
import { StreamRedactor } from '../../src/redaction/stream-redactor.js';
import { waitFor } from '../helpers/procs.js';

const waitUntil = (ok: () => boolean): Promise<true> => waitFor('the condition', () => ok() || undefined, 5_000);

const b = (s: string): Buffer => Buffer.from(s, 'utf8');
const here = path.dirname(fileURLToPath(import.meta.url));

let tmp = '';
let seq = 0;
before(() => {
  tmp = fs.mkdtempSync(path.join(os.tmpdir(), 'output-capture-'));
});
after(() => {
  fs.rmSync(tmp, { recursive: true, force: true });
});

function freshSpawnId(): string {
  return `sp_${(seq++).toString(16).padStart(24, '0')}`;
}

function freshPath(): string {
  return path.join(tmp, `artifact-${seq++}.log`);
}

/** Splits a buffer at every given offset (sorted). */
function splitAt(buf: Buffer, offsets: number[]): Buffer[] {
  const out: Buffer[] = [];
  let prev = 0;
  for (const o of offsets) {
    out.push(buf.subarray(prev, o));
    prev = o;
  }
  out.push(buf.subarray(prev));
  return out;
}

function bytewise(buf: Buffer): Buffer[] {
  return Array.from(buf, (x) => Buffer.from([x]));
}

function codePoints(s: string): string[] {
  return Array.from(s);
}

describe('StreamCapture tail and counters', () => {
  it('keeps the last tailChars characters of an ASCII stream', async () => {
    const cap = new StreamCapture({ name: 'stdout', artifactPath: null, redactor: new StreamRedactor([]), tailChars: 10 });
    for (const c of splitAt(b('abcdefghijklmnopqrstuvwxyz'), [3, 4, 20])) cap.write(c);
    assert.deepEqual((await cap.end()), { tail: 'qrstuvwxyz', bytes: 26, chars: 26, truncated: true });
  });

  it('is not truncated when the whole stream fits, including exactly tailChars', async () => {
    const fit = new StreamCapture({ name: 'stdout', artifactPath: null, redactor: new StreamRedactor([]), tailChars: 5 });
    fit.write(b('héllo'));
    assert.deepEqual((await fit.end()), { tail: 'héllo', bytes: 6, chars: 5, truncated: false });
    const empty = new StreamCapture({ name: 'stderr', artifactPath: null, redactor: new StreamRedactor([]) });
    assert.deepEqual((await empty.end()), { tail: '', bytes: 0, chars: 0, truncated: false });
  });

  it('decodes multibyte characters split across chunks without replacement characters', async () => {
    const text = 'aé€🔑日本🙂z'.repeat(50);
    const bytes = b(text);
    const all = codePoints(text);
    for (const tailChars of [1, 2, 3, 7, 100, 349, 350, 351, 1000]) {
      const cap = new StreamCapture({ name: 'stdout', artifactPath: null, redactor: new StreamRedactor([]), tailChars });
      for (const c of bytewise(bytes)) cap.write(c);
      const s = (await cap.end());
      assert.equal(s.tail, all.slice(-tailChars).join(''), `tailChars ${tailChars}`);
      assert.ok(!s.tail.includes('\ufffd'));
      assert.equal(s.chars, all.length);
      assert.equal(s.bytes, bytes.length);
      assert.equal(s.truncated, all.length > tailChars);
    }
  });

  it('handles random chunkings of a long multibyte stream with the ring wrapping many times', async () => {
    const text = Array.from({ length: 20_000 }, (_, i) => ['x', 'ß', '€', '🦀'][i % 4]!).join('');
    const bytes = b(text);
    const all = codePoints(text);
    let seed = 7;
    const next = (): number => (seed = (Math.imul(seed, 1103515245) + 12345) >>> 0);
    for (const tailChars of [13, 500, 4096]) {
      const cap = new StreamCapture({ name: 'stdout', artifactPath: null, redactor: new StreamRedactor([]), tailChars });
      let pos = 0;
      while (pos < bytes.length) {
        const len = 1 + (next() % 5000);
        cap.write(bytes.subarray(pos, pos + len));
        pos += len;
      }
      const s = (await cap.end());
      assert.equal(s.tail, all.slice(-tailChars).join(''), `tailChars ${tailChars}`);
      assert.equal(s.chars, all.length);
      assert.equal(s.truncated, true);
    }
  });

  it('counts raw bytes in `bytes` but redacted code points in `chars`', async () => {
    const cap = new StreamCapture({ name: 'stdout', artifactPath: null, redactor: new StreamRedactor(['hunter2']) });
    cap.write(b('pw=hunt'));
    cap.write(b('er2 ok'));
    const s = (await cap.end());
    assert.equal(s.tail, 'pw=[REDACTED] ok');
    assert.equal(s.bytes, 13);
    assert.equal(s.chars, 'pw=[REDACTED] ok'.length);
  });

  it('drops a partial character at the start of the tail window', async () => {
    // 4-byte characters only: the byte window almost never starts on a character boundary.
    const text = '🙂'.repeat(100) + 'end';
    for (let tailChars = 1; tailChars < 12; tailChars++) {
      const cap = new StreamCapture({ name: 'stdout', artifactPath: null, redactor: new StreamRedactor([]), tailChars });
      for (const c of splitAt(b(text), [1, 2, 3, 5, 399])) cap.write(c);
      const s = (await cap.end());
      assert.equal(s.tail, codePoints(text).slice(-tailChars).join(''));
      assert.ok(!s.tail.includes('\ufffd'));
    }
  });

  it('end() is idempotent and later writes are ignored', async () => {
    const cap = new StreamCapture({ name: 'stdout', artifactPath: null, redactor: new StreamRedactor([]) });
    cap.write(b('one'));
    const first = (await cap.end());
    cap.write(b('two'));
    assert.equal((await cap.end()), first);
    assert.deepEqual(first, { tail: 'one', bytes: 3, chars: 3, truncated: false });
  });

  it('a throwing onRedacted does not break the capture', async () => {
    const p = freshPath();
    const cap = new StreamCapture({
      name: 'stdout',
      artifactPath: p,
      redactor: new StreamRedactor([]),
      onRedacted: () => {
        throw new Error('viewer gone');
      },
    });
    cap.write(b('abc'));
    assert.equal((await cap.end()).tail, 'abc');
    assert.equal(cap.failure, undefined);
    assert.equal(fs.readFileSync(p, 'utf8'), 'abc');
  });
});

describe('StreamCapture artifacts', () => {
  it('creates a 0600 artifact in a 0700 directory, even under a hostile umask', async () => {
    const oldMask = process.umask(0o777);
    let d;
    let cap;
    try {
      d = createArtifactDir(tmp, freshSpawnId());
      cap = new StreamCapture({ name: 'stdout', artifactPath: artifactPath(d, 'stdout'), redactor: new StreamRedactor([]) });
    } finally {
      process.umask(oldMask);
    }
    cap.write(b('x'));
    (await cap.end());
    assert.equal(cap.failure, undefined);
    assert.equal(fs.statSync(d.root).mode & 0o777, 0o700);
    assert.equal(fs.statSync(path.join(tmp, 'artifacts')).mode & 0o777, 0o700);
    assert.equal(fs.statSync(artifactPath(d, 'stdout')).mode & 0o777, 0o600);
    assert.equal(artifactPath(d, 'stderr'), path.join(d.root, 'stderr.log'));
  });

  it('writes exactly the redacted stream; a split secret reaches neither artifact, tail nor live copy', async () => {
    const secret = 'tok_é🔑_9f8e7d6c5b4a';
    const input = b(`line 1\nexport TOKEN=${secret}\n${secret}${secret} done é\n`);
    const expected = 'line 1\nexport TOKEN=[REDACTED]\n[REDACTED] done é\n';
    for (let i = 0; i <= input.length; i += 3) {
      for (const chunks of [splitAt(input, [i]), splitAt(input, [Math.floor(i / 2), i])]) {
        const p = freshPath();
        const live: Buffer[] = [];
        const cap = new StreamCapture({
          name: 'stderr',
          artifactPath: p,
          redactor: new StreamRedactor([secret]),
          onRedacted: (c) => live.push(Buffer.from(c)),
        });
        for (const c of chunks) cap.write(c);
        const s = (await cap.end());
        const file = fs.readFileSync(p);
        assert.equal(file.toString('utf8'), expected, `split at ${i}`);
        assert.deepEqual(Buffer.concat(live), file);
        assert.equal(s.tail, expected);
        assert.equal(file.indexOf(secret), -1);
        assert.equal(s.bytes, input.length);
        assert.equal(s.chars, codePoints(expected).length);
        fs.rmSync(p);
      }
    }
  });

  it('fails to open when the parent directory does not exist, but keeps counting', async () => {
    const p = path.join(tmp, 'missing-dir', 'stdout.log');
    const live: string[] = [];
    const cap = new StreamCapture({
      name: 'stdout',
      artifactPath: p,
      redactor: new StreamRedactor(['pw']),
      onRedacted: (c) => live.push(c.toString()),
    });
    assert.equal(cap.failure?.code, 'ARTIFACT_OPEN_FAILED');
    assert.equal(cap.failure?.path, p);
    assert.match(cap.failure?.message ?? '', /ENOENT/);
    cap.write(b('a pw b'));
    assert.deepEqual((await cap.end()), { tail: 'a [REDACTED] b', bytes: 6, chars: 14, truncated: false });
    assert.equal(live.join(''), 'a [REDACTED] b');
    assert.equal(cap.failure?.code, 'ARTIFACT_OPEN_FAILED');
  });

  it('refuses a pre-existing file at the path and leaves it untouched (O_EXCL)', async () => {
    const p = freshPath();
    fs.writeFileSync(p, 'planted', { mode: 0o644 });
    const cap = new StreamCapture({ name: 'stdout', artifactPath: p, redactor: new StreamRedactor([]) });
    cap.write(b('data'));
    const s = (await cap.end());
    assert.equal(cap.failure?.code, 'ARTIFACT_OPEN_FAILED');
    assert.match(cap.failure?.message ?? '', /EEXIST/);
    assert.equal(s.bytes, 4);
    assert.equal(fs.readFileSync(p, 'utf8'), 'planted');
  });

  it('refuses a pre-existing symlink (dangling or not) and never writes through it', async () => {
    const target = freshPath();
    fs.writeFileSync(target, 'victim');
    const link = freshPath();
    fs.symlinkSync(target, link);
    const dangling = freshPath();
    const danglingTarget = freshPath();
    fs.symlinkSync(danglingTarget, dangling);
    for (const p of [link, dangling]) {
      const cap = new StreamCapture({ name: 'stdout', artifactPath: p, redactor: new StreamRedactor([]) });
      cap.write(b('data'));
      assert.equal((await cap.end()).bytes, 4);
      assert.equal(cap.failure?.code, 'ARTIFACT_OPEN_FAILED');
    }
    assert.equal(fs.readFileSync(target, 'utf8'), 'victim');
    assert.equal(fs.existsSync(danglingTarget), false);
  });

  it('handles short writes by looping until the whole buffer is written', async () => {
    class Trickle extends StreamCapture {
      calls = 0;
      protected override async writeFile(fd: number, bufs: Buffer[]): Promise<number> {
        this.calls++;
        const first = bufs[0]!;
        return fs.writeSync(fd, first, 0, Math.min(first.length, 3));
      }
    }
    const p = freshPath();
    const cap = new Trickle({ name: 'stdout', artifactPath: p, redactor: new StreamRedactor(['secret']) });
    cap.write(b('0123456789 secret 0123456789'));
    (await cap.end());
    assert.equal(cap.failure, undefined);
    assert.equal(fs.readFileSync(p, 'utf8'), '0123456789 [REDACTED] 0123456789');
    assert.ok(cap.calls >= 10);
  });

  it('records a write failure (injected EIO), stops writing, keeps counting and tailing', async () => {
    // The real ENOSPC/EFBIG path is covered below (RLIMIT_FSIZE) and end to end by the lead.
    class FailOnce extends StreamCapture {
      calls = 0;
      protected override async writeFile(fd: number, bufs: Buffer[]): Promise<number> {
        this.calls++;
        if (this.calls === 2) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
        return fs.writevSync(fd, bufs);
      }
    }
    const p = freshPath();
    const live: string[] = [];
    const cap = new FailOnce({
      name: 'stdout',
      artifactPath: p,
      redactor: new StreamRedactor([]),
      onRedacted: (c) => live.push(c.toString()),
    });
    cap.write(b('first '));
    // A small backlog waits up to 10 ms for more before it is written (decision 59): let the first
    // write go alone, so the failing one comes second.
    await waitUntil(() => cap.calls === 1);
    cap.write(b('second '));
    cap.write(b('third'));
    const s = (await cap.end());
    assert.equal(cap.calls, 2, 'no write after the failure');
    assert.deepEqual(cap.failure, { code: 'ARTIFACT_WRITE_FAILED', message: 'EIO: i/o error, write', path: p });
    assert.deepEqual(s, { tail: 'first second third', bytes: 18, chars: 18, truncated: false });
    assert.equal(live.join(''), 'first second third');
    assert.equal(fs.readFileSync(p, 'utf8'), 'first ');
  });

  it('records a close failure as ARTIFACT_FLUSH_FAILED; the first failure wins', async () => {
    class BadClose extends StreamCapture {
      protected override closeFile(fd: number): void {
        fs.closeSync(fd);
        throw new Error('EIO: i/o error, close');
      }
    }
    const cap = new BadClose({ name: 'stdout', artifactPath: freshPath(), redactor: new StreamRedactor([]) });
    cap.write(b('x'));
    assert.equal((await cap.end()).bytes, 1);
    assert.equal(cap.failure?.code, 'ARTIFACT_FLUSH_FAILED');

    class BadBoth extends BadClose {
      protected override async writeFile(): Promise<number> {
        throw new Error('EIO: i/o error, write');
      }
    }
    const both = new BadBoth({ name: 'stdout', artifactPath: freshPath(), redactor: new StreamRedactor([]) });
    both.write(b('x'));
    (await both.end());
    assert.equal(both.failure?.code, 'ARTIFACT_WRITE_FAILED');
  });

  it('records a real write failure (EFBIG under RLIMIT_FSIZE) in a child process', { skip: process.platform !== 'linux' }, async () => {
    const p = freshPath();
    const mod = (rel: string): string => JSON.stringify(pathToFileURL(path.join(here, rel)).href);
    const code = `
      import * as fs from 'node:fs';
      const { StreamCapture } = await import(${mod('../../src/process/output-capture.js')});
      const { StreamRedactor } = await import(${mod('../../src/redaction/stream-redactor.js')});
      const cap = new StreamCapture({ name: 'stdout', artifactPath: ${JSON.stringify(p)}, redactor: new StreamRedactor(['s3cr3t']), tailChars: 20 });
      for (let i = 0; i < 64; i++) cap.write(Buffer.from('s3cr3t'.padEnd(1024, '.')));
      cap.write(Buffer.from('tail-end'));
      const summary = (await cap.end());
      process.stdout.write(JSON.stringify({ summary, failure: cap.failure, size: fs.statSync(${JSON.stringify(p)}).size }));
    `;
    // Node ignores SIGXFSZ, so exceeding the limit surfaces as EFBIG (after one short write).
    const r = spawnSync('/bin/sh', ['-c', 'ulimit -f 16 && exec "$0" --input-type=module -e "$1"', process.execPath, code], {
      encoding: 'utf8',
    });
    assert.equal(r.status, 0, r.stderr);
    const out = JSON.parse(r.stdout) as {
      summary: { tail: string; bytes: number; truncated: boolean };
      failure: { code: string; message: string; path: string };
      size: number;
    };
    assert.equal(out.failure.code, 'ARTIFACT_WRITE_FAILED');
    assert.match(out.failure.message, /EFBIG/);
    assert.equal(out.failure.path, p);
    assert.equal(out.summary.bytes, 64 * 1024 + 8);
    assert.equal(out.summary.tail, '.'.repeat(12) + 'tail-end');
    assert.equal(out.summary.truncated, true);
    assert.ok(out.size > 0 && out.size < 64 * 1024, `size ${out.size}`);
    const file = fs.readFileSync(p, 'utf8');
    assert.equal(file.indexOf('s3cr3t'), -1);
    assert.ok(file.startsWith('[REDACTED]....'));
  });
});

describe('StreamCapture with lent chunks (a PipeReader\'s reused buffers)', () => {
  const secret = 'lent-s3cret-0123456789';

  /**
   * A reader that lends its buffers, played by an attacker: the moment a chunk is released its
   * buffer is refilled with raw secrets, as the next read from the pipe would refill it. A release
   * that came before the write of the chunk's bytes, or a tail or live copy that kept a view of it,
   * would carry those secrets into the artifact, the tail or the live copy.
   */
  function lender(): { lend(text: string): [Buffer, () => void]; released: number[]; count: number } {
    const l = {
      released: [] as number[],
      count: 0,
      lend(text: string): [Buffer, () => void] {
        const buf = Buffer.from(text);
        const id = l.count++;
        const release = (): void => {
          l.released.push(id);
          for (let i = 0; i < buf.length; i += secret.length) Buffer.from(secret).copy(buf, i);
        };
        return [buf, release];
      },
    };
    return l;
  }

  /** writeFile that takes its time (each writev a few ms later), so an early release would have time to strike. */
  class SlowWriter extends StreamCapture {
    writes = 0;
    protected override async writeFile(fd: number, bufs: Buffer[]): Promise<number> {
      this.writes++;
      await new Promise((r) => setTimeout(r, 3));
      return fs.writevSync(fd, bufs);
    }
  }

  it('releases a lent chunk only after the write holding its bytes; artifact, tail and live copy keep the redacted bytes', async () => {
    const p = freshPath();
    const live: Buffer[] = [];
    const cap = new SlowWriter({ name: 'stdout', artifactPath: p, redactor: new StreamRedactor([secret]), tailChars: 300_000, onRedacted: (c) => live.push(c) });
    const lent = lender();
    // Odd chunks hold no secret: the redactor hands those on as views of the lent buffer itself.
    const line = (i: number): string => `row ${i} ${i % 7 === 0 && (i / 200) % 2 < 1 ? secret : 'plain'} `.padEnd(40, '.');
    let text = '';
    for (let i = 0; i < 6000; i += 200) {
      let chunk = '';
      for (let k = i; k < i + 200; k++) chunk += line(k);
      text += chunk;
      const [buf, release] = lent.lend(chunk);
      cap.write(buf, release);
      // Every chunk is still lent right after write(): its bytes are queued, not yet written.
      assert.equal(lent.released.includes(lent.count - 1), false);
      if (i % 1000 === 0) await new Promise((r) => setTimeout(r, 15)); // let some writes finish mid-stream
    }
    const s = await cap.end();
    const expected = text.replaceAll(secret, '[REDACTED]');
    assert.ok(cap.writes >= 2, `writes ${cap.writes}`);
    assert.equal(fs.readFileSync(p, 'utf8'), expected, 'the artifact holds the redacted bytes of every chunk');
    assert.equal(Buffer.concat(live).toString(), expected, 'the live copy too');
    assert.equal(s.tail, expected, 'and the tail');
    assert.deepEqual([...lent.released].sort((a, b) => a - b), [...Array(lent.count).keys()], 'each chunk released exactly once');
    assert.equal(new Set(lent.released).size, lent.released.length);
  });

  it('releases at once without an artifact, after a failed write, and after end()', async () => {
    const none = new StreamCapture({ name: 'stdout', artifactPath: null, redactor: new StreamRedactor([secret]) });
    const lent = lender();
    none.write(...lent.lend(`a ${secret} b`));
    assert.deepEqual(lent.released, [0], 'nothing queued: released in write()');
    assert.equal((await none.end()).tail, 'a [REDACTED] b');

    class FailSecond extends SlowWriter {
      protected override async writeFile(fd: number, bufs: Buffer[]): Promise<number> {
        if (this.writes === 1) throw Object.assign(new Error('EIO: i/o error, write'), { code: 'EIO' });
        return super.writeFile(fd, bufs);
      }
    }
    const p = freshPath();
    const failing = new FailSecond({ name: 'stdout', artifactPath: p, redactor: new StreamRedactor([secret]) });
    const lent2 = lender();
    failing.write(...lent2.lend(`first ${secret} `.padEnd(70_000, '.')));
    await waitUntil(() => lent2.released.length === 1);
    failing.write(...lent2.lend(`second ${secret} `.padEnd(70_000, '.')));
    failing.write(...lent2.lend(`third ${secret} `.padEnd(70_000, '.')));
    await failing.end();
    assert.equal(failing.failure?.code, 'ARTIFACT_WRITE_FAILED');
    assert.deepEqual(lent2.released, [0, 1, 2], 'the failed file lets go of every chunk');
    assert.equal(fs.readFileSync(p, 'utf8'), `first [REDACTED] `.padEnd(70_000 - secret.length + '[REDACTED]'.length, '.'));

    const ended = new StreamCapture({ name: 'stdout', artifactPath: freshPath(), redactor: new StreamRedactor([]) });
    await ended.end();
    const lent3 = lender();
    ended.write(...lent3.lend('late'));
    assert.deepEqual(lent3.released, [0], 'a write after end() is ignored and its chunk released');
  });
});

describe('artifact directories', () => {
  it('refuses spawn ids that the supervisor did not generate', async () => {
    for (const bad of ['../etc', 'sp_', `sp_${'A'.repeat(24)}`, `sp_${'0'.repeat(23)}`, `sp_${'0'.repeat(25)}`, `sp_${'0'.repeat(24)}/x`, `xsp_${'0'.repeat(24)}`, `sp_${'0'.repeat(24)}\n`]) {
      assert.throws(() => createArtifactDir(tmp, bad), /spawn id must match/, JSON.stringify(bad));
    }
  });

  it('refuses a relative state directory', async () => {
    assert.throws(() => createArtifactDir('state', freshSpawnId()), /stateDir must be an absolute path/);
    assert.throws(() => createArtifactDir('./state', freshSpawnId()), /absolute/);
  });

  it('creates <stateDir>/artifacts/<spawnId> and refuses to reuse it', async () => {
    const stateDir = path.join(tmp, `state-${seq++}`);
    const id = freshSpawnId();
    const d = createArtifactDir(stateDir, id);
    assert.deepEqual(d, { root: path.join(stateDir, 'artifacts', id), stdout: 'stdout.log', stderr: 'stderr.log' });
    assert.ok(fs.statSync(d.root).isDirectory());
    assert.throws(() => createArtifactDir(stateDir, id), /EEXIST/);
  });

  it('refuses a symlinked artifacts directory', async () => {
    const stateDir = path.join(tmp, `state-${seq++}`);
    fs.mkdirSync(stateDir);
    const elsewhere = path.join(tmp, `elsewhere-${seq++}`);
    fs.mkdirSync(elsewhere);
    fs.symlinkSync(elsewhere, path.join(stateDir, 'artifacts'));
    assert.throws(() => createArtifactDir(stateDir, freshSpawnId()), /must be a real directory/);
    assert.deepEqual(fs.readdirSync(elsewhere), []);
  });

  it('artifactPath refuses stream paths that would leave the root', async () => {
    const root = path.join(tmp, 'r');
    for (const bad of ['../x', 'a/b', '..', '.', '', 'x\0y']) {
      assert.throws(() => artifactPath({ root, stdout: bad, stderr: 'stderr.log' }, 'stdout'), /plain file name/);
    }
    assert.throws(() => artifactPath({ root: 'rel', stdout: 'stdout.log', stderr: 'stderr.log' }, 'stdout'), /absolute/);
  });
});
