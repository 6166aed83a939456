// The process-level error boundary of every `supervisor` run, shared by the full command table
// (main.ts) and the exec bundle's entry (exec-main.ts), so both end a failure the same way.
import { reportFailure } from './failure.js';

/** exec documents 125 for "the supervisor failed" (a tree-safe timeout must not look like CMD's own status). */
export function failureExit(argv: readonly string[]): number | undefined {
  return argv[0] === 'exec' ? 125 : undefined;
}

/**
 * Runs `dispatch(argv)` as the process's command: main's boundary, extended to failures that no
 * await of the command sees (a background task's end that cannot be written to a full disk), and a
 * prompt exit after any failure: a command that failed midway may hold handles (a store, its
 * checkpoint thread, a timer) that would otherwise keep the process alive with its message already
 * printed. process.exit runs the 'exit' hooks, so every live tree is still killed (shutdown.ts).
 */
export async function runProcessCommand(argv: string[], dispatch: (argv: string[]) => Promise<number>): Promise<void> {
  function failed(err: unknown): never {
    process.exit(reportFailure(err, argv, failureExit(argv)));
  }
  process.on('uncaughtException', failed);
  process.on('unhandledRejection', failed);
  let code: number;
  try {
    code = await dispatch(argv);
  } catch (err) {
    failed(err);
  }
  process.exitCode = code;
}
