// The `supervisor` command. Policy lives below; this file only parses and dispatches.
import { readFileSync } from 'node:fs';
// Each command's module is imported when that command runs: `run` and `serve` pull in the MCP SDK,
// the catalog and the effect pipeline (about 0.6 s of CPU), which an operator's `sessions` or
// `approvals` from another terminal must not pay for (issue 16: they answer within 2 s while a run is
// busy, on a loaded machine too).
import { cliIo, processIo, withCliIo, type CliIo } from './io.js';
import { UsageError } from './usage.js';
import { reportFailure } from './failure.js';
import { failureExit, runProcessCommand } from './boundary.js';

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
  ps [--json]                       the live process trees of your runs (pid, age, CPU, RSS, escapees)
  subagents [--session ID] [--json] the delegation tree: child agents, their scope and budget
  logs <task> [--follow]            print (and follow) a background task's redacted log
  cancel <task | spawn id>          stop a background task, or any live tree (sp_…, as ps lists it:
                                    a running call's command or MCP server), from any terminal
  approvals [show|approve|deny <id>]
                                    see and answer the approval requests a run without a terminal
                                    waits on
  evolve [list|review|promote|rollback|discard <run>]
                                    the evolve runs your agents started: review the security diff,
                                    promote (bound to the review), roll back or discard
  web [--port N | --socket PATH] [--open] [--json]
                                    the operator's page on 127.0.0.1 or a UNIX socket: sessions,
                                    approvals, process trees and delegations, live

Several machines on one PostgreSQL control plane: --store postgres://… (or $SUPERVISOR_STORE_URL)
on run, sessions, tasks, logs, approvals, cancel, audit verify, web and doctor. Process trees,
delegations and evolve runs stay on the machine that runs them (ps, subagents, reconcile and evolve
there).

Run "supervisor <command> --help" for the options of one command.
`;

function version(): string {
  const pkg = JSON.parse(readFileSync(new URL('../../../package.json', import.meta.url), 'utf8')) as { version: string };
  return pkg.version;
}

/**
 * The command's exit status; every failure goes through the one error boundary (failure.ts).
 * Everything the command prints goes to `io` (io.ts), the process's streams by default; the tests
 * pass buffers to check parsing, usage errors and help in-process.
 */
export async function main(argv: string[], io: CliIo = processIo): Promise<number> {
  return withCliIo(io, async () => {
    try {
      return await dispatch(argv);
    } catch (err) {
      return reportFailure(err, argv, failureExit(argv));
    }
  });
}

/** The process's entry (bin/supervisor.js): every command behind the process-level boundary. */
export async function runCli(argv: string[]): Promise<void> {
  await runProcessCommand(argv, dispatch);
}

/**
 * Commands that act on this machine only, each with why and where to look instead. Trees,
 * delegations and evolve runs stay on the machine that runs them (only that host's supervisor
 * signals its trees). An exported SUPERVISOR_STORE_URL does not reach them, and they say so rather
 * than quietly show a different store than the operator expects; an explicit --store is refused
 * with the same words.
 */
const HOST_LOCAL: Record<string, string> = {
  ps: 'process trees stay on the machine that runs them: run supervisor ps there (supervisor sessions --store shows the host of each run)',
  subagents: 'the delegation tree is recorded on the machine that runs the session: run supervisor subagents there (supervisor sessions --store lists its child sessions)',
  reconcile: "reconcile acts on this machine's trees only; a dead member's sessions and tasks on the control plane are reclaimed by the other members within its lease",
  evolve: "evolve runs live in this machine's state dir and the core's repository: run supervisor evolve there",
  call: 'call runs one tool here without a control plane; supervisor run --store runs a session the control plane sees',
  serve: 'serve answers its MCP client here without a control plane; supervisor run --store runs a session the control plane sees',
  catalog: "catalog reads a core on this machine; it has nothing on the control plane",
};

/** Where --store is taken (the control plane's commands). */
const STORE_COMMANDS = 'run, sessions, tasks, logs, approvals, cancel, audit verify, web and doctor';

function checkStoreReach(command: string | undefined, rest: readonly string[]): void {
  const why = command === undefined ? undefined : HOST_LOCAL[command];
  if (why === undefined) return;
  if (rest.some((a) => a === '--store' || a.startsWith('--store='))) throw new UsageError(`${command} does not take --store: ${why}; --store is for ${STORE_COMMANDS}`);
  if (process.env.SUPERVISOR_STORE_URL) cliIo().stderr.write(`supervisor ${command}: note: SUPERVISOR_STORE_URL is set, but ${command} reads this machine's store (${why}); --store is for ${STORE_COMMANDS}\n`);
}

async function dispatch(argv: string[]): Promise<number> {
  const [command, ...rest] = argv;
  checkStoreReach(command, rest);
  switch (command) {
    case undefined:
    case '-h':
    case '--help':
    case 'help':
      cliIo().stdout.write(MAIN_HELP);
      return command === undefined ? 2 : 0;
    case '--version':
    case '-V':
      cliIo().stdout.write(`${version()}\n`);
      return 0;
    case 'exec':
      return await (await import('./exec.js')).runExec(rest);
    case 'doctor':
      return await (await import('./doctor.js')).runDoctorCommand(rest, cliIo());
    case 'reconcile':
      return await (await import('./reconcile.js')).runReconcile(rest);
    case 'audit':
      return await (await import('./audit.js')).runAudit(rest);
    case 'run':
      return await (await import('./run.js')).runRun(rest);
    case 'call':
      return await (await import('./call.js')).runCall(rest);
    case 'serve':
      return await (await import('./serve.js')).runServe(rest);
    case 'plan':
      return await (await import('./plan.js')).runPlan(rest);
    case 'catalog':
      return await (await import('./catalog.js')).runCatalog(rest);
    case 'sessions':
      return await (await import('./operator.js')).runSessions(rest);
    case 'tasks':
      return await (await import('./operator.js')).runTasks(rest);
    case 'ps':
      return await (await import('./ps.js')).runPs(rest);
    case 'subagents':
      return await (await import('./subagents.js')).runSubagents(rest);
    case 'logs':
      return await (await import('./operator.js')).runLogs(rest);
    case 'cancel':
      return await (await import('./operator.js')).runCancel(rest);
    case 'approvals':
      return await (await import('./operator.js')).runApprovals(rest);
    case 'evolve':
      return await (await import('./evolve.js')).runEvolve(rest);
    case 'web':
      return await (await import('./web.js')).runWeb(rest);
    default:
      throw new UsageError(`unknown command ${JSON.stringify(command)}; see supervisor --help`);
  }
}
