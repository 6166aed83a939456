// The lifecycle layer's public contract. Platform modules implement ProcessPlatform;
// everything above `process/` sees only SupervisedTree handles and TreeOutcome values.
import type { RedactionSource } from '../redaction/index.js';

/** OS identity of one process, checked again before any signal to a bare pid or pgid. */
export interface StartMarker {
  platform: NodeJS.Platform;
  /** Linux: /proc/sys/kernel/random/boot_id. Empty where the platform has no boot id. */
  bootId: string;
  /** Linux: field 22 of /proc/<pid>/stat (clock ticks since boot), as a decimal string. */
  startTime: string;
}

export type TreeStatus = 'running' | 'exited' | 'timeout' | 'cancelled' | 'failed' | 'interrupted';
export type OutcomeReason = 'exited' | 'timeout' | 'cancelled' | 'failed';

export interface StreamSummary {
  /** Last characters (at most tailChars, default 12,000) of the redacted stream. */
  tail: string;
  /** Bytes received from the child, before redaction. */
  bytes: number;
  /** Characters (Unicode code points) of the redacted stream. */
  chars: number;
  /** True when the tail does not hold the whole stream. */
  truncated: boolean;
}

/** Artifacts are described by a supervisor-derived root plus stream-relative paths. */
export interface ArtifactDescriptor {
  root: string;
  stdout: string;
  stderr: string;
}

export interface KillReport {
  /** Processes other than the leader that were signalled and gone when the tree ended. */
  descendants: number;
  /** Of those, processes that had left the leader's session (setsid) or been re-parented. */
  escapees: number;
  /** Processes still alive after the whole ladder (must be 0; reported, never hidden). */
  survivors: number;
}

export interface TreeOutcome {
  spawnId: string;
  pid: number;
  reason: OutcomeReason;
  exitCode: number | null;
  signal: NodeJS.Signals | null;
  durationMs: number;
  stdout: StreamSummary;
  stderr: StreamSummary;
  artifacts: ArtifactDescriptor | null;
  killed: KillReport;
  error?: { code: string; message: string };
}

export interface SpawnTreeOptions {
  command: string;
  args?: readonly string[];
  cwd?: string;
  /** The whole environment the child gets; default: a short allowlist (child-env.ts). SUPERVISOR_SPAWN_ID is added. */
  env?: Readonly<Record<string, string>>;
  /** Time between TERM and KILL. Default 2,000 ms. */
  graceMs?: number;
  /** Stop the tree with reason `timeout` after this long. */
  timeoutMs?: number;
  /** How long to keep draining pipes after the leader exited. Default 2,000 ms. */
  drainAfterExitMs?: number;
  /**
   * Default true: a plain tree's slow output (reads under 4 KiB) is read at most every 10 ms, so
   * many trees printing line by line cost one read per burst, not one per line. False: read at once.
   */
  gatherOutput?: boolean;
  /** Exact values removed from tails and artifacts, across chunk boundaries. */
  redact?: RedactionSource;
  stdin?: 'ignore' | 'inherit' | 'pipe';
  /**
   * 'capture' (default): stdout is drained into the redactor, the tail and the artifact.
   * 'raw': the caller reads `tree.stdout` itself (a protocol channel such as MCP stdio); nothing of
   * it is captured, so the summary's stdout stays empty. stderr is captured either way.
   */
  stdout?: 'capture' | 'raw';
  /** Write artifacts (default true). */
  artifacts?: boolean;
  /** Live copy of the redacted streams (for a terminal). */
  onStdout?: (chunk: Buffer) => void;
  onStderr?: (chunk: Buffer) => void;
  /** Aborting stops the tree with reason `cancelled`. */
  signal?: AbortSignal;
  tailChars?: number;
  /**
   * A dedicated data pipe besides stdio (fd 3 on POSIX; on win32 the index after the launcher's
   * IPC slot). Its fd number is passed to the child in SUPERVISOR_CHANNEL_FD. Default false.
   */
  channel?: boolean;
  /**
   * Whose tree this is, on its spawn record (decision 123); default: the supervisor's principal.
   * A supervisor shared by several principals' sessions (a session host's MCP servers) names it per tree.
   */
  principal?: string;
}

export interface SupervisedTree {
  readonly spawnId: string;
  readonly pid: number;
  readonly pgid: number;
  readonly sid: number;
  readonly startMarker: StartMarker;
  readonly cgroup: string | null;
  readonly startedAt: number;
  /** Resolves once the whole tree is gone and the record is final. */
  readonly done: Promise<TreeOutcome>;
  /** Single-flight: concurrent calls share one outcome. */
  stop(reason?: 'cancelled' | 'timeout'): Promise<TreeOutcome>;
  /** Pipe to the child's stdin when `stdin: 'pipe'`. */
  readonly stdin: NodeJS.WritableStream | null;
  /** The dedicated data pipe when `channel: true`; destroyed when the tree ends. */
  readonly channel: import('node:stream').Duplex | null;
  /** The child's stdout when `stdout: 'raw'` (else null: it is captured). */
  readonly stdout?: NodeJS.ReadableStream | null;
}
