// A tree's leader on Windows started as the command itself (issue 22): CreateProcessW suspended,
// put into the tree's Job Object, then resumed, so neither the command nor anything it starts runs
// an instruction outside the job. Stdout and stderr are named pipes Node reads; stdin is NUL, a
// duplicate of the supervisor's own, or a named pipe Node writes (decision 107); a data channel is
// a duplex named pipe handed over as the child's fd 3 in the C runtime's fd table (decision 116). The exit is seen through the process handle, waited on by a
// thread of ffi-rs's (never the event loop). The handle is held until then, so the pid cannot be
// reused while the tree may still signal it, as an unreaped child on Linux.
import { EventEmitter } from 'node:events';
import type { Duplex, PassThrough, Writable } from 'node:stream';
import * as k32 from '../../../native-helpers/kernel32.js';
import {
  duplicateInheritable,
  GENERIC_READ,
  openInheritable,
  startSuspendedInJob,
  startSuspendedInJobAsync,
  stdHandle,
  STD_INPUT_HANDLE,
  waitSignalled,
  type StartedProcess,
  type SuspendedStartRequest,
} from '../../../native-helpers/kernel32-spawn.js';
import { noteDirectChild } from '../child-ledger.js';
import { environmentBlock, type WindowsProgram } from './command-line.js';
import { openChannelPipe, openInboundPipe, openOutboundPipe, type TokenPipe } from './token-pipe.js';

/** Exit code of a leader ended through kill() (what TerminateJobObject gives the rest of the tree). */
const KILL_EXIT_CODE = 1;

export interface SuspendedStartOptions {
  cwd: string;
  env: Readonly<Record<string, string>>;
  /** NUL, the supervisor's own stdin, or a pipe the supervisor writes (the leader's `stdin` stream). */
  stdin?: 'ignore' | 'inherit' | 'pipe';
  /** A data channel as fd 3 (the leader's `stdio[3]`). */
  channel?: boolean;
  job: bigint;
}

/** The members of ChildProcess a supervised tree uses, for a leader started by CreateProcessW. */
export class SuspendedLeader extends EventEmitter {
  readonly stdio: [Writable | null, PassThrough, PassThrough, ...Duplex[]];
  exitCode: number | null = null;
  readonly signalCode = null;
  private handleOpen = true;
  private readonly unledger: () => void;

  constructor(
    readonly pid: number,
    private readonly handle: bigint,
    readonly stdin: Writable | null,
    readonly stdout: PassThrough,
    readonly stderr: PassThrough,
    channel: Duplex | null = null,
  ) {
    super();
    this.stdio = channel === null ? [stdin, stdout, stderr] : [stdin, stdout, stderr, channel];
    this.unledger = noteDirectChild(pid);
    waitSignalled(handle).then(
      () => this.exited(),
      // The wait itself failed (no thread): poll instead, so the exit is still seen.
      () => this.pollExit(),
    );
  }

  /** TerminateProcess on the leader while its handle is held (any signal: Windows has one way to end a process). */
  kill(_signal?: NodeJS.Signals): boolean {
    if (!this.handleOpen || this.exitCode !== null) return false;
    return k32.terminateProcess(this.handle, KILL_EXIT_CODE);
  }

  private pollExit(): void {
    const timer = setInterval(() => {
      if (k32.exitCodeOf(this.handle) === k32.STILL_ACTIVE) return;
      clearInterval(timer);
      this.exited();
    }, 20);
  }

  private exited(): void {
    const code = k32.exitCodeOf(this.handle);
    this.handleOpen = false;
    k32.closeHandle(this.handle);
    this.unledger();
    this.exitCode = code ?? -1;
    this.emit('exit', this.exitCode, null);
  }
}

/**
 * Starts `program` (a resolved .exe or .com, or cmd.exe for a batch file) suspended, in `o.job`,
 * then resumes it. Throws with nothing left open (no process, no pipe) when any step fails.
 */
export function startSuspendedLeader(program: WindowsProgram, o: SuspendedStartOptions): SuspendedLeader {
  const handles = openLeaderHandles(program, o);
  try {
    return handles.leader(startSuspendedInJob(handles.request));
  } catch (e) {
    handles.abandon();
    throw e;
  } finally {
    handles.closeChildEnds();
  }
}

/** startSuspendedLeader with CreateProcessW on a thread (decision 86); the rest on the main thread. */
export async function startSuspendedLeaderAsync(program: WindowsProgram, o: SuspendedStartOptions): Promise<SuspendedLeader> {
  const handles = openLeaderHandles(program, o);
  try {
    return handles.leader(await startSuspendedInJobAsync(handles.request));
  } catch (e) {
    handles.abandon();
    throw e;
  } finally {
    handles.closeChildEnds();
  }
}

interface LeaderHandles {
  request: SuspendedStartRequest;
  leader(started: StartedProcess): SuspendedLeader;
  /** The start failed: the supervisor's ends of the pipes go. */
  abandon(): void;
  /**
   * The supervisor's copies of the child's handles, closed whatever happened, so that the pipes
   * end when the tree's last writer does (the child has its own copies, or does not exist).
   */
  closeChildEnds(): void;
}

function openLeaderHandles({ application, commandLine }: WindowsProgram, o: SuspendedStartOptions): LeaderHandles {
  const environment = environmentBlock(o.env);
  const childEnds: bigint[] = [];
  const streams: Duplex[] = [];
  const closeChildEnds = (): void => {
    for (const h of childEnds.splice(0)) k32.closeHandle(h);
  };
  const abandon = (): void => {
    for (const s of streams) s.destroy();
  };
  const pipe = <S extends Duplex>(open: () => TokenPipe<S>): TokenPipe<S> => {
    const p = open();
    childEnds.push(p.childEnd);
    streams.push(p.stream);
    return p;
  };
  try {
    let input: TokenPipe | null = null;
    let stdin: bigint;
    if (o.stdin === 'pipe') {
      input = pipe(openOutboundPipe);
      stdin = input.childEnd;
    } else {
      stdin = openStdin(o.stdin ?? 'ignore');
      childEnds.push(stdin);
    }
    const out = pipe(openInboundPipe);
    const err = pipe(openInboundPipe);
    const channel = o.channel === true ? pipe(openChannelPipe) : null;
    return {
      request: { application, commandLine, environment, cwd: o.cwd, stdin, stdout: out.childEnd, stderr: err.childEnd, channel: channel?.childEnd, job: o.job },
      leader: (started) => new SuspendedLeader(started.pid, started.process, input?.stream ?? null, out.stream, err.stream, channel?.stream ?? null),
      abandon,
      closeChildEnds,
    };
  } catch (e) {
    abandon();
    closeChildEnds();
    throw e;
  }
}

/** NUL, or an inheritable duplicate of the supervisor's stdin (NUL when it has none). */
function openStdin(mode: 'ignore' | 'inherit'): bigint {
  const own = mode === 'inherit' ? stdHandle(STD_INPUT_HANDLE) : null;
  return own !== null ? duplicateInheritable(own) : openInheritable('NUL', GENERIC_READ);
}
