// The entry of the exec bundle (decision 67): `supervisor exec` behind the same process-level
// boundary as every command, without main.ts's command table, whose lazy imports would put every
// other command (the MCP SDK, the catalog, the effect pipeline) into the bundle.
import { runProcessCommand } from './boundary.js';
import { runExec } from './exec.js';

/** `argv` as bin/supervisor.js passes it: 'exec' first. */
export async function runExecCli(argv: string[]): Promise<void> {
  await runProcessCommand(argv, (a) => runExec(a.slice(1)));
}
