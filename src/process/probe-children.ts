// The children of the mechanism probes (`supervisor doctor`): each one a supervised tree, so it is
// recorded, marked with SUPERVISOR_SPAWN_ID, stopped whole and reaped by the lifecycle layer like
// any other tree, and close() returns only when every one of them is gone.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { SpawnError } from './errors.js';
import { ProcessSupervisor } from './supervisor.js';
import type { SpawnTreeOptions, SupervisedTree, TreeOutcome } from './types.js';

/** One line of `supervisor doctor`: whether a mechanism works here, found by trying it. */
export interface MechanismFinding {
  ok: boolean;
  detail: string;
  version?: string;
}

/** How a probe child that ran to its end ended, and what it printed. */
export interface ProbeChildOutcome {
  code: number | null;
  signal: NodeJS.Signals | null;
  stdout: string;
  stderr: string;
  /** Why it did not run to its own end: ENOENT (no such command), a timeout, a spawn failure. */
  error?: string;
}

/** What a probe child gets besides its command. */
export type ProbeTreeOptions = Pick<SpawnTreeOptions, 'channel' | 'onStdout' | 'onStderr' | 'timeoutMs'>;

/** Every probe's answer within the doctor's bound on one probe. */
export const PROBE_TIMEOUT_MS = 5_000;
/** A child that runs to its end is killed before its probe times out, so the probe can say why. */
const RUN_TIMEOUT_MS = PROBE_TIMEOUT_MS - 500;
/** Enough for any probe's answer; a probe that prints more is broken anyway. */
const CAPTURE_CHARS = 64 * 1024;
/** Probe children are killed, not asked: nothing of theirs needs a grace period. */
const PROBE_GRACE_MS = 0;

export class ProbeChildren {
  private supervisor: ProcessSupervisor | null = null;
  private stateDir: string | null = null;
  private closed = false;

  /** A tree the probe stops itself (or close() does); its output is captured, never written to disk. */
  start(command: string, args: readonly string[], env?: Readonly<Record<string, string>>, o: ProbeTreeOptions = {}): SupervisedTree {
    return this.open().spawnTree({
      command,
      args,
      // A minimal environment: NODE_OPTIONS and friends from the caller must not change a probe.
      env: env ?? { PATH: process.env.PATH ?? '/usr/local/bin:/usr/bin:/bin' },
      artifacts: false,
      tailChars: CAPTURE_CHARS,
      graceMs: PROBE_GRACE_MS,
      ...o,
    });
  }

  /** Runs a child to its end (killed whole after `timeoutMs`); a command that cannot start is an outcome, not a throw. */
  async run(command: string, args: readonly string[], env?: Readonly<Record<string, string>>, timeoutMs = RUN_TIMEOUT_MS): Promise<ProbeChildOutcome> {
    let tree: SupervisedTree;
    try {
      tree = this.start(command, args, env, { timeoutMs });
    } catch (err) {
      if (!(err instanceof SpawnError) || err.code === 'SUPERVISOR_CLOSED') throw err;
      return { code: null, signal: null, stdout: '', stderr: '', error: err.code === 'COMMAND_NOT_FOUND' ? 'ENOENT' : err.message };
    }
    return probeOutcome(await tree.done, timeoutMs);
  }

  /** Stops every probe tree still running (the lifecycle's full ladder) and removes the throwaway state dir. */
  async close(): Promise<void> {
    this.closed = true;
    try {
      await this.supervisor?.close();
    } finally {
      if (this.stateDir) rmSync(this.stateDir, { recursive: true, force: true });
    }
  }

  /**
   * Opened at the first child, so a probe without children never needs SQLite. Its records go to a
   * throwaway state dir: the doctor reports on the operator's state dir and must not create it.
   */
  private open(): ProcessSupervisor {
    if (this.supervisor) return this.supervisor;
    // A probe that outlived its bound must not open a supervisor nobody closes.
    if (this.closed) throw new SpawnError('SUPERVISOR_CLOSED', 'the doctor has finished and starts no new probe child');
    this.stateDir = mkdtempSync(join(tmpdir(), 'supervisor-doctor-state-'));
    this.supervisor = ProcessSupervisor.open({ stateDir: this.stateDir, reconcile: false });
    return this.supervisor;
  }
}

function probeOutcome(o: TreeOutcome, timeoutMs: number): ProbeChildOutcome {
  const out: ProbeChildOutcome = { code: o.exitCode, signal: o.signal, stdout: o.stdout.tail, stderr: o.stderr.tail };
  if (o.reason === 'timeout') out.error = `timed out after ${timeoutMs} ms`;
  else if (o.reason === 'failed') out.error = o.error?.code ?? 'failed';
  return out;
}

/** How a child ended: why it did not run, the signal that killed it, or its exit code. */
export function howEnded(r: ProbeChildOutcome): string {
  return r.error ?? (r.signal ? `killed by ${r.signal}` : `exit code ${r.code}`);
}

/** How a child ended and the first line of its stderr that is not a Node warning. */
export function outcomeText(r: ProbeChildOutcome): string {
  const err = firstLine(r.stderr);
  return err ? `${howEnded(r)}: ${err}` : howEnded(r);
}

export function firstLine(s: string): string {
  return (s.split('\n').find((l) => l.trim() !== '' && !/ExperimentalWarning|--trace-warnings/.test(l)) ?? '').trim();
}

/**
 * Runs a probe with fresh private directories under the temp dir, one per name
 * (`supervisor-doctor-<name>-…`), removed afterwards whatever the probe found or threw.
 */
export async function withScratchDirs<T>(names: readonly string[], probe: (dirs: string[]) => Promise<T>): Promise<T> {
  const dirs: string[] = [];
  try {
    for (const name of names) dirs.push(mkdtempSync(join(tmpdir(), `supervisor-doctor-${name}-`)));
    return await probe(dirs);
  } finally {
    for (const dir of dirs) rmSync(dir, { recursive: true, force: true });
  }
}
