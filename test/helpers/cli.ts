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
