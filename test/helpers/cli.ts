// The CLI in-process: `main(argv, io)` with buffers for stdout and stderr, for the tests of parsing,
// usage errors and --help, which need no process of their own (issue 17: a node start costs 0.3 s
// of CPU, and several seconds on a loaded 2-core machine). The result has the fields of a
// spawnSync result that those tests read, so their assertions are unchanged. A few tests still
// start bin/supervisor.js (test/cli/main.test.ts) so the real binary stays honest.
import { main } from '../../src/cli/main.js';
import { bufferWriter } from '../../src/cli/io.js';

export interface InProcessResult {
  status: number;
  stdout: string;
  stderr: string;
}

export async function runMain(...argv: string[]): Promise<InProcessResult> {
  const stdout = bufferWriter();
  const stderr = bufferWriter();
  const status = await main(argv, { stdout, stderr });
  return { status, stdout: stdout.text(), stderr: stderr.text() };
}

/**
 * `runMain` with environment variables set for the call and restored after it (unset ones
 * removed again): what a test passed to a child's `env`. The caller's tests must not run
 * concurrently with it in the same process, since the variables are the process's.
 */
export async function runMainWithEnv(env: Record<string, string>, ...argv: string[]): Promise<InProcessResult> {
  const saved = Object.keys(env).map((k) => [k, process.env[k]] as const);
  Object.assign(process.env, env);
  try {
    return await runMain(...argv);
  } finally {
    for (const [k, v] of saved) {
      if (v === undefined) delete process.env[k];
      else process.env[k] = v;
    }
  }
}
