// The `supervisor` command. Policy lives below; this file only parses and dispatches.
import { StoreError } from '../store/index.js';
import { readFileSync } from 'node:fs';
import { runExec } from './exec.js';
import { runDoctorCommand } from './doctor.js';
import { runReconcile } from './reconcile.js';
import { runAudit } from './audit.js';
import { runCall } from './call.js';
import { runCatalog } from './catalog.js';
import { runRun } from './run.js';
import { runServe } from './serve.js';
import { runPlan } from './plan.js';
import { runApprovals, runCancel, runLogs, runSessions, runTasks } from './operator.js';
import { UsageError } from './usage.js';
import { reportFailure } from './failure.js';

export const MAIN_HELP = `Usage: supervisor <command> [options]

The isolation supervisor: the privileged process that owns every effect an AI agent asks for.

Commands:
  exec [options] -- CMD [ARGS...]   run one command as a supervised process tree (a tree-safe timeout)
  doctor [--json]                   report which isolation mechanisms work on this machine
  reconcile [--json]                kill trees left behind by a supervisor that died
  audit verify [--session ID] [--json]
                                    check the hash chains of the audit log (exit 1 if broken)
  run <core> [--prompt TEXT] [--runtime NAME]
                                    run a session of an agent core: the local turn engine, or an
                                    external agent CLI (claude-code) with the same authority
  plan <core>... [--json]           the runtime target and the effect bound per session, proved
                                    identical across runtimes (digest)
  serve <core> --stdio | --http 127.0.0.1:PORT
                                    serve the session's catalog as an MCP server (every call
                                    through the supervisor's pipeline)
  catalog <core> [--json]           print the catalog a session of the core resolves
  call <core> <tool> [--args JSON]  run one tool through the full pipeline, without a model
  sessions [--json]                 list your sessions
  tasks [--session ID] [--json]     list your background tasks
  logs <task> [--follow]            print (and follow) a background task's redacted log
  cancel <task>                     stop a background task of a live run, from any terminal
  approvals [show|approve|deny <id>]
                                    see and answer the approval requests a run without a terminal
                                    waits on

Run "supervisor <command> --help" for the options of one command.
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

export async function main(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  try {
    switch (command) {
      case undefined:
      case '-h':
      case '--help':
      case 'help':
        process.stdout.write(MAIN_HELP);
        return command === undefined ? 2 : 0;
      case '--version':
      case '-V':
        process.stdout.write(`${version()}\n`);
        return 0;
      case 'exec':
        return await runExec(rest);
      case 'doctor':
        return await runDoctorCommand(rest);
      case 'reconcile':
        return await runReconcile(rest);
      case 'audit':
        return await runAudit(rest);
      case 'run':
        return await runRun(rest);
      case 'call':
        return await runCall(rest);
      case 'serve':
        return await runServe(rest);
      case 'plan':
        return await runPlan(rest);
      case 'catalog':
        return await runCatalog(rest);
      case 'sessions':
        return await runSessions(rest);
      case 'tasks':
        return await runTasks(rest);
      case 'logs':
        return await runLogs(rest);
      case 'cancel':
        return await runCancel(rest);
      case 'approvals':
        return await runApprovals(rest);
      default:
        throw new UsageError(`unknown command ${JSON.stringify(command)}; see supervisor --help`);
    }
  } catch (err) {
    // exec documents 125 for "the supervisor failed" (a tree-safe timeout must not look like CMD's own status).
    return reportFailure(err, argv, command === 'exec' ? 125 : undefined);
  }
}
