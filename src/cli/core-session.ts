// What `run`, `call`, `serve` and `catalog` share: their flags turned into openSession's options
// (src/session/ assembles the session), the terminal as the approver when there is one, and the
// session layer's refusals turned into usage errors (exit 2) with the flag that caused them.
import { TerminalApprover, type Approver } from '../policy/index.js';
import { loadSessionCore, openSession, SessionError, type Session } from '../session/index.js';
import { UsageError } from './usage.js';
import type { OtherMachinesSearch } from '../session/shared-history.js';
import type { ResumeElsewhere } from '../session/resume-elsewhere.js';

export { localPrincipal } from './principal.js';

export interface CoreSessionOptions {
  coreDir: string;
  stateDir: string;
  approve: string[];
  deny: string[];
  /** Ask on the terminal for `prompt` decisions no rule settles (only when stdin is a TTY). */
  interactive: boolean;
  /** Who answers `prompt` decisions no rule settles, over the terminal (the control plane's, with --store). */
  approver?: Approver;
  /** With --store: session_search reaches the other machines' runs through the control plane. */
  otherMachines?: OtherMachinesSearch;
  /** With --store: --resume takes over a session another machine ran, from its copy there. */
  resumeElsewhere?: ResumeElsewhere;
  /** With --store: each delegated child session is shown on the control plane too. */
  onChildSession?: (child: { sessionId: string; taskId: string }) => void;
  runtime?: string;
  /** Continue this ended session of the same principal and core instead of starting one. */
  resume?: string;
  /** Without a terminal: how long a prompt waits for `supervisor approvals` from another terminal (0: deny at once). */
  awaitApprovalMs?: number;
  /** Told when a prompt starts waiting for another terminal's answer. */
  onPendingApproval?: (id: string, request: { toolName: string; actionSummary: string }) => void;
  /** Progress of running effects (MCP notifications/progress), for the operator's display. */
  onProgress?: (p: { callId: string; tool: string; progress: number; total?: number; message?: string }) => void;
  /** Once-per-run notices of the runtime (auto-approval by class is off: no sandbox here). */
  onNotice?: (text: string) => void;
}

export type CoreSession = Session;

/** A refusal of the session layer as the CLI words it: the flag or core that caused it, exit 2. */
function asUsage(err: unknown): unknown {
  if (!(err instanceof SessionError)) return err;
  switch (err.code) {
    case 'CORE_INVALID':
      // The cause keeps the core's issues, so the error boundary can print one per line.
      return new UsageError(err.message, { cause: err });
    case 'RULE_INVALID':
      return new UsageError(`--approve/--deny: ${err.message}`);
    case 'RESUME_REFUSED':
      return new UsageError(`--resume: ${err.message}`);
    default:
      return err;
  }
}

/** Loads and resolves a core, turning a load error into a usage-style message naming the files. */
export async function loadCoreForCli(dir: string | undefined, command: string): Promise<Awaited<ReturnType<typeof loadSessionCore>>> {
  if (!dir) throw new UsageError(`${command} needs a core directory: supervisor ${command} <core>`);
  try {
    return await loadSessionCore(dir);
  } catch (err) {
    throw asUsage(err);
  }
}

export async function openCoreSession(o: CoreSessionOptions, command: string): Promise<Session> {
  if (!o.coreDir) throw new UsageError(`${command} needs a core directory: supervisor ${command} <core>`);
  try {
    return await openSession({
      core: o.coreDir,
      stateDir: o.stateDir,
      rules: { approve: o.approve, deny: o.deny },
      // The terminal inline when there is one; otherwise the session layer's fallback: an operator
      // in another terminal (--await-approval) or a clear denial naming --approve.
      ...(o.approver ? { approver: o.approver } : o.interactive && process.stdin.isTTY ? { approver: new TerminalApprover({ input: process.stdin, output: process.stderr }) } : {}),
      ...(o.otherMachines ? { otherMachines: o.otherMachines } : {}),
      ...(o.resumeElsewhere ? { resumeElsewhere: o.resumeElsewhere } : {}),
      ...(o.onChildSession ? { onChildSession: o.onChildSession } : {}),
      ...(o.runtime !== undefined ? { runtime: o.runtime } : {}),
      ...(o.resume !== undefined ? { resume: o.resume } : {}),
      ...(o.awaitApprovalMs !== undefined ? { awaitApprovalMs: o.awaitApprovalMs } : {}),
      ...(o.onPendingApproval ? { onPendingApproval: o.onPendingApproval } : {}),
      ...(o.onProgress ? { onProgress: o.onProgress } : {}),
      ...(o.onNotice ? { onNotice: o.onNotice } : {}),
    });
  } catch (err) {
    throw asUsage(err);
  }
}
