// WAL checkpoints off the hot path. SQLite's automatic checkpoint runs inside whichever commit
// crosses the threshold, so one effect in a few thousand paid for copying pages and an fsync of the
// database file (up to ~100 ms here). SQLite's own advice for latency-sensitive writers is to turn
// the automatic checkpoint off and checkpoint from another thread: this is that thread. If it
// cannot start or dies, the connections it served get their automatic checkpoint back, so the WAL
// never grows without bound.
// The thread starts once the file has been open for START_DELAY_MS. Starting one costs a V8 isolate
// and a second connection (~0.1 s of CPU, a sixth of a short `run`), and the last close waits for
// it; a store open for a few seconds writes a WAL far below the automatic checkpoint's threshold,
// so until then SQLite's own checkpoint (which would not come due) stands in.
import { createRequire } from 'node:module';
import { Worker } from 'node:worker_threads';
import type { Database } from './database.js';

/** Pages between automatic checkpoints when no checkpointer runs. */
export const AUTO_CHECKPOINT_PAGES = 8000;
const INTERVAL_MS = 250;
/** How long a file is open before its thread starts (see above). */
export const START_DELAY_MS = 3_000;

// The worker is plain CommonJS evaluated from a string, so it needs no file of its own next to the
// compiled output and works the same under every loader.
const WORKER_SOURCE = `
const { workerData, parentPort } = require('node:worker_threads');
const Sqlite = require(workerData.module);
let db;
try {
  db = workerData.binding ? new Sqlite(workerData.file, { nativeBinding: workerData.binding }) : new Sqlite(workerData.file);
  db.pragma('busy_timeout = 5000');
} catch (err) {
  parentPort.postMessage({ failed: String(err && err.message) });
  process.exit(1);
}
const tick = () => {
  try {
    db.pragma('wal_checkpoint(PASSIVE)');
  } catch (err) {
    // SQLITE_BUSY is normal under load; anything else means the checkpointer is no use.
    if (!/busy|locked/i.test(String(err && err.message))) {
      parentPort.postMessage({ failed: String(err && err.message) });
      process.exit(1);
    }
  }
};
const timer = setInterval(tick, workerData.intervalMs);
parentPort.on('message', (m) => {
  if (m !== 'stop') return;
  clearInterval(timer);
  tick();
  db.close();
  // The closing thread waits on this flag: once it is set, the file is no longer held.
  const flag = new Int32Array(workerData.closed);
  Atomics.store(flag, 0, 1);
  Atomics.notify(flag, 0);
  process.exit(0);
});
`;

interface Entry {
  worker: Worker | null;
  /** Until the thread starts: the timer that will start it. */
  starting: NodeJS.Timeout | null;
  connections: Set<Database>;
  /** Set to 1 by the thread once its connection is closed. */
  closed: Int32Array;
}

/** How long the last close waits for the thread to let go of the file. */
const STOP_WAIT_MS = 2_000;

const byFile = new Map<string, Entry>();

function fallBack(entry: Entry): void {
  entry.worker = null;
  for (const db of entry.connections) {
    if (db.open) db.pragma(`wal_autocheckpoint = ${AUTO_CHECKPOINT_PAGES}`);
  }
}

/**
 * Serves `db` (a connection to `file`) with the file's checkpointer thread, which starts once the
 * file has been open for START_DELAY_MS (at once with `{ now: true }`). Call `release` when the
 * connection closes. Until the thread runs, and if it fails, the connection checkpoints by itself.
 */
export function attachCheckpointer(db: Database, file: string, opts: { now?: boolean } = {}): void {
  let entry = byFile.get(file);
  if (!entry) {
    const e: Entry = { worker: null, starting: null, connections: new Set(), closed: new Int32Array(new SharedArrayBuffer(4)) };
    byFile.set(file, e);
    entry = e;
    if (opts.now) startThread(e, file);
    else {
      // Never keeps the process alive: a process that ends sooner needed no thread.
      e.starting = setTimeout(() => startThread(e, file), START_DELAY_MS);
      e.starting.unref();
    }
  }
  entry.connections.add(db);
  db.pragma(`wal_autocheckpoint = ${entry.worker ? 0 : AUTO_CHECKPOINT_PAGES}`);
}

/** Starts the file's thread and hands it the checkpoints of every connection it serves. */
function startThread(e: Entry, file: string): void {
  e.starting = null;
  try {
    const worker = new Worker(WORKER_SOURCE, {
      eval: true,
      workerData: {
        file,
        module: createRequire(import.meta.url).resolve('better-sqlite3'),
        binding: process.env.SUPERVISOR_SQLITE_BINDING ?? null,
        intervalMs: INTERVAL_MS,
        closed: e.closed.buffer,
      },
    });
    // The checkpointer never keeps the process alive; SQLite finishes the job on the last close.
    worker.unref();
    worker.on('message', () => fallBack(e));
    worker.on('error', () => fallBack(e));
    worker.on('exit', () => {
      if (e.worker === worker) fallBack(e);
    });
    e.worker = worker;
  } catch {
    e.worker = null;
    return;
  }
  for (const db of e.connections) {
    if (db.open) db.pragma('wal_autocheckpoint = 0');
  }
}

/**
 * The connection is closing: stop the thread with the file's last connection, and wait until the
 * thread has closed its own connection, so that when close() returns nothing holds the file (a
 * caller may remove the directory at once). A thread that does not answer in time is terminated.
 */
export function releaseCheckpointer(db: Database, file: string): void {
  const entry = byFile.get(file);
  if (!entry || !entry.connections.delete(db)) return;
  if (entry.connections.size > 0) return;
  byFile.delete(file);
  if (entry.starting) clearTimeout(entry.starting);
  const w = entry.worker;
  entry.worker = null;
  if (!w) return;
  w.postMessage('stop');
  if (Atomics.wait(entry.closed, 0, 0, STOP_WAIT_MS) === 'timed-out') void w.terminate();
}

/** For doctor and tests: whether a checkpointer thread serves `file` now. */
export function checkpointerRunning(file: string): boolean {
  return byFile.get(file)?.worker != null;
}

/** For tests: whether a thread for `file` is due to start (the file has been open less than START_DELAY_MS). */
export function checkpointerDue(file: string): boolean {
  return byFile.get(file)?.starting != null;
}

/** Test hook: start the thread for `file` now rather than after START_DELAY_MS. */
export function startCheckpointerNow(file: string): void {
  const e = byFile.get(file);
  if (e?.starting) {
    clearTimeout(e.starting);
    startThread(e, file);
  }
}

/** Test hook: the thread serving `file`, so a test can kill it and watch the fallback. */
export function checkpointerThread(file: string): Worker | null {
  return byFile.get(file)?.worker ?? null;
}
