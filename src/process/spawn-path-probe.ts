// For `doctor`: which way this machine starts a tree's leader (decisions 58, 59 and, on Windows, 85),
// found by starting and reaping one child on each native path.
import { spawnNative, spawnNativeAsync, type NativeChild } from './linux/posix-spawn-leader.js';
import { libcAvailable } from '../../native-helpers/libc.js';

export interface SpawnPathFinding {
  ok: boolean;
  detail: string;
}

const NODE_ONLY = 'trees with a stdin pipe, IPC or a data channel (tool hosts, MCP servers, external runtimes) always use Node spawn()';

/**
 * ok when every path the supervisor will use here works; a path turned off by SUPERVISOR_SPAWN is
 * reported as such. `env` must carry the caller's probe marker, so a stray child can be found.
 */
export async function probeSpawnPath(env: Readonly<Record<string, string>>): Promise<SpawnPathFinding> {
  if (process.platform === 'win32') return (await import('./win32/start-path-probe.js')).probeWindowsStartPath(env);
  if (process.platform !== 'linux') return { ok: true, detail: `Node spawn() for every tree (the native starts are posix_spawn on Linux and a suspended CreateProcessW on Windows); ${NODE_ONLY}` };
  if (process.env.SUPERVISOR_SPAWN === 'node') return { ok: true, detail: `Node spawn() for every tree (SUPERVISOR_SPAWN=node): each start forks the supervisor` };
  if (!libcAvailable()) return { ok: false, detail: `Node spawn() for every tree: ffi-rs or libc could not be loaded (see ffi), so each start forks the supervisor` };
  const mainThread = await exitsWith7(() => spawnNative('/bin/sh', ['-c', 'exit 7'], { cwd: '/', env }));
  if (mainThread !== null) return { ok: false, detail: `posix_spawn on the main thread failed (${mainThread}): every tree falls back to Node spawn()` };
  if (process.env.SUPERVISOR_SPAWN === 'main-thread') {
    return { ok: true, detail: `posix_spawn on the main thread for plain trees (SUPERVISOR_SPAWN=main-thread keeps background tasks off the spawn thread); ${NODE_ONLY}` };
  }
  const thread = await exitsWith7(() => spawnNativeAsync('/bin/sh', ['-c', 'exit 7'], { cwd: '/', env }));
  if (thread !== null) return { ok: false, detail: `posix_spawn on a thread of its own failed (${thread}): background tasks start on the main thread` };
  return { ok: true, detail: `posix_spawn on a thread of its own for background tasks, on the main thread for other plain trees (both started and reaped a child); ${NODE_ONLY}` };
}

/** Null when the child started, exited 7 and was reaped; otherwise what went wrong. */
async function exitsWith7(start: () => NativeChild | Promise<NativeChild>): Promise<string | null> {
  let child: NativeChild;
  try {
    child = await start();
  } catch (err) {
    return err instanceof Error ? err.message : String(err);
  }
  child.stdout.resume();
  child.stderr.resume();
  const code = await new Promise<number | null>((resolve) => {
    if (child.exitCode !== null || child.signalCode !== null) resolve(child.exitCode);
    else child.once('exit', (c: number | null) => resolve(c));
  });
  child.stdout.destroy();
  child.stderr.destroy();
  return code === 7 ? null : `the child exited with ${String(code)}, not 7`;
}
