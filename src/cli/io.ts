// Where the CLI's output goes. `supervisor` (bin/supervisor.js) writes to the process's own
// streams; `main(argv, io)` can hand a command other writers, so the tests check parsing, usage
// errors and --help in-process instead of paying a node start per case (issue 17). The writers are
// carried by an AsyncLocalStorage around one `main` call, so every write a command makes, however
// deep, reaches the io of the call that made it, and two calls in one process do not mix.
// Exceptions that stay on the process's streams: the doctor's probe entries (child processes whose
// stdout is their answer), serve --stdio (its stdout is the MCP channel) and the second-signal note
// in shutdown.ts (a process-wide signal handler, outside any one call).
import { AsyncLocalStorage } from 'node:async_hooks';

/** What the CLI needs of a stream: write text or bytes. process.stdout and process.stderr are Writers. */
export interface Writer {
  write(chunk: string | Uint8Array): unknown;
}

export interface CliIo {
  stdout: Writer;
  stderr: Writer;
}

/** The process's own streams, read when written to (a test may replace process.stdout). */
export const processIo: CliIo = {
  get stdout() {
    return process.stdout;
  },
  get stderr() {
    return process.stderr;
  },
};

const current = new AsyncLocalStorage<CliIo>();

/** The io of the `main` call this code runs under; the process's streams outside one. */
export function cliIo(): CliIo {
  return current.getStore() ?? processIo;
}

/** Runs `fn` with `io` as the CLI's io for everything it does, awaited or not. */
export function withCliIo<T>(io: CliIo, fn: () => T): T {
  return current.run(io, fn);
}

/** A Writer that keeps what is written, for in-process calls: `text()` is everything so far. */
export function bufferWriter(): Writer & { text(): string } {
  const chunks: string[] = [];
  return {
    write(chunk: string | Uint8Array): boolean {
      chunks.push(typeof chunk === 'string' ? chunk : Buffer.from(chunk).toString('utf8'));
      return true;
    },
    text: () => chunks.join(''),
  };
}
