// A run's background tasks, shown on the control plane as they run (decision 126). The run's own
// store stays the record (its worker starts, stops and finishes the task on its host); the mirror
// reads the session's tasks there every interval and, under the run's lease, holds each new one on
// the control plane (run-tasks.ts) and finishes it there once it ended here. A cancel asked on any
// member reaches the run through its listener and becomes a local cancel request, which the run's
// task worker acts on as it does for `supervisor cancel` at this host's terminal. Each task's log
// is copied there as it grows (decision 127), and all of it before the task is finished there.
import type { TaskLogChunk } from '../store/task-store.js';
import { lostOwnership } from './errors.js';
import type { Lease } from './leases.js';
import type { ControlPlaneListener } from './listener.js';
import type { ControlPlaneMember } from './member.js';
import { holdRunTask } from './run-tasks.js';
import { finishTask, type ClaimedTask } from './work-queue.js';
import { PeriodicPass } from './periodic-pass.js';
import { copyTaskLogs } from './transcripts.js';

/** Log chunks per transaction (a chunk is at most a few KiB: the worker batches a stream's output). */
const LOG_BATCH = 500;

/** A task as the run's own store has it. */
export interface LocalTask {
  id: string;
  kind: string;
  summary: string;
  status: 'running' | 'completed' | 'failed' | 'cancelled' | 'interrupted';
  exitCode: number | null;
  reason: string | null;
}

export interface RunTaskMirrorOptions {
  member: ControlPlaneMember;
  lease: Lease;
  listener: ControlPlaneListener;
  /** The session's tasks in the run's store now. */
  read(): LocalTask[];
  /** A task's log chunks in the run's store after `afterSeq`, in order, at most `limit`; absent: logs are not copied. */
  readLogs?(id: string, afterSeq: number, limit: number): TaskLogChunk[];
  /** An operator on some member asked to cancel task `id`: ask the run's worker here. */
  onCancel(id: string, by: string): void;
  /** Called once when the mirror can go on no more (the lease moved, the member was fenced). */
  onLost(why: string): void;
  intervalMs?: number;
}

/** How a task that ended here is finished on the control plane (whose tasks succeed or fail). */
function outcomeOf(t: LocalTask): { status: 'succeeded'; result: unknown } | { status: 'failed'; reason: string } {
  if (t.status === 'completed') return { status: 'succeeded', result: { exit_code: t.exitCode } };
  return { status: 'failed', reason: `${t.status}${t.reason ? `: ${t.reason}` : t.exitCode !== null ? `: exit code ${t.exitCode}` : ''}` };
}

export class RunTaskMirror {
  private readonly held = new Map<string, ClaimedTask>();
  private readonly finished = new Set<string>();
  /** Per task: the newest log seq copied. */
  private readonly copiedLog = new Map<string, number>();
  private lost = false;
  private readonly passes: PeriodicPass;

  constructor(private readonly o: RunTaskMirrorOptions) {
    this.passes = new PeriodicPass(() => this.pass(), o.intervalMs ?? 250);
  }

  start(): void {
    this.passes.start();
  }

  /** Stops the interval and mirrors what is left (the tasks the run's end stopped). */
  stop(): Promise<void> {
    return this.passes.stop();
  }

  private async pass(): Promise<void> {
    for (const t of this.o.read()) {
      if (this.lost || this.finished.has(t.id)) continue;
      try {
        const held = this.held.get(t.id) ?? (await this.hold(t));
        await this.copyLogs(t.id);
        if (t.status === 'running') continue;
        await finishTask(this.o.member, held, outcomeOf(t));
        this.finished.add(t.id);
      } catch (err) {
        if (lostOwnership(err)) {
          this.lost = true;
          this.o.onLost(`the run's tasks could not be shown on the control plane: ${(err as Error).message}`);
        }
        // Anything else (a dropped connection) is tried again on the next pass.
        return;
      }
    }
  }

  /** Copies what the task has logged since the last pass (all of it, once it has ended here). */
  private async copyLogs(id: string): Promise<void> {
    const read = this.o.readLogs;
    for (;;) {
      const after = this.copiedLog.get(id) ?? 0;
      const chunks = read?.(id, after, LOG_BATCH) ?? [];
      if (chunks.length === 0) return;
      await copyTaskLogs(this.o.member, this.o.lease, id, chunks);
      this.copiedLog.set(id, chunks[chunks.length - 1]!.seq);
    }
  }

  private async hold(t: LocalTask): Promise<ClaimedTask> {
    const held = await holdRunTask(this.o.member, this.o.lease, { id: t.id, kind: t.kind, summary: t.summary });
    this.held.set(t.id, held);
    if (t.status === 'running') this.o.listener.watchCancel(t.id, (by) => this.o.onCancel(t.id, by));
    return held;
  }
}
