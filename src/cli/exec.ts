// `supervisor exec`: one command as a supervised tree, a tree-safe `timeout`.
import { cliIo } from './io.js';
import { resolve } from 'node:path';
import { constants } from 'node:os';
// Not through process/index.js, which also exports the sandbox builders exec never uses.
import { ProcessSupervisor } from '../process/supervisor.js';
import { SpawnError } from '../process/errors.js';
import type { TreeOutcome } from '../process/types.js';
import { defaultStateDir } from './state-dir.js';
import { installShutdown } from './shutdown.js';
import { parseDuration, UsageError } from './usage.js';

export const EXEC_HELP = `Usage: supervisor exec [options] -- CMD [ARGS...]

Runs CMD as a supervised process tree: its own session and process group (and cgroup where a
writable cgroup v2 exists), every descendant marked with SUPERVISOR_SPAWN_ID. When CMD exits, the
timeout expires or you press Ctrl-C, the whole tree is stopped: TERM, a grace period, then KILL,
setsid escapees included. Output is passed through live and written to 0600 artifact files.

Options:
  --timeout S        stop the tree after S seconds (also 500ms, 2m); exit status 124
  --grace S          time between TERM and KILL (default 2s)
  --drain S          how long to keep reading output after CMD exits (default 2s)
  --json             print one JSON object with the outcome instead of passing output through
  --redact-env NAME  remove the value of environment variable NAME from all output (repeatable)
  --clean-env        give CMD only HOME, LOGNAME, PATH, SHELL, TERM, USER, LANG, TMPDIR
  --no-artifacts     do not write artifact files
  --state-dir DIR    store and artifacts (default $SUPERVISOR_STATE_DIR or ~/.local/state/isolation-supervisor)
  -h, --help         show this help

Exit status: CMD's own; 128+N if it died of signal N; 124 on timeout; 130 when cancelled;
125 when the supervisor failed (artifact write failure, spawn failure); 127 if CMD was not found.
`;

interface ExecArgs {
  timeoutMs?: number;
  graceMs: number;
  drainMs: number;
  json: boolean;
  redactEnv: string[];
  cleanEnv: boolean;
  artifacts: boolean;
  stateDir: string;
  command: string;
  args: string[];
}

const CLEAN_ENV_KEYS = ['HOME', 'LOGNAME', 'PATH', 'SHELL', 'TERM', 'USER', 'LANG', 'TMPDIR'];

export function parseExecArgs(argv: string[]): ExecArgs | 'help' {
  const a: Omit<ExecArgs, 'command' | 'args'> = {
    graceMs: 2000,
    drainMs: 2000,
    json: false,
    redactEnv: [],
    cleanEnv: false,
    artifacts: true,
    stateDir: defaultStateDir(),
  };
  let i = 0;
  for (; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      i++;
      break;
    }
    if (!arg.startsWith('-')) break; // first word of the command
    const [flag, inline] = arg.includes('=') ? [arg.slice(0, arg.indexOf('=')), arg.slice(arg.indexOf('=') + 1)] : [arg, undefined];
    const value = (): string | undefined => inline ?? argv[++i];
    switch (flag) {
      case '-h':
      case '--help':
        return 'help';
      case '--timeout':
        a.timeoutMs = parseDuration('--timeout', value());
        break;
      case '--grace':
        a.graceMs = parseDuration('--grace', value());
        break;
      case '--drain':
        a.drainMs = parseDuration('--drain', value());
        break;
      case '--json':
        a.json = true;
        break;
      case '--redact-env': {
        const name = value();
        if (!name || !/^[A-Za-z_][A-Za-z0-9_]*$/.test(name)) throw new UsageError(`--redact-env needs an environment variable name, got ${JSON.stringify(name ?? '')}`);
        a.redactEnv.push(name);
        break;
      }
      case '--clean-env':
        a.cleanEnv = true;
        break;
      case '--no-artifacts':
        a.artifacts = false;
        break;
      case '--state-dir': {
        const v = value();
        if (!v) throw new UsageError('--state-dir needs a directory');
        a.stateDir = resolve(v);
        break;
      }
      default:
        throw new UsageError(`unknown option ${flag} for exec; see supervisor exec --help`);
    }
  }
  const rest = argv.slice(i);
  if (rest.length === 0) throw new UsageError('exec needs a command: supervisor exec [options] -- CMD [ARGS...]');
  return { ...a, command: rest[0]!, args: rest.slice(1) };
}

export async function runExec(argv: string[]): Promise<number> {
  const parsed = parseExecArgs(argv);
  if (parsed === 'help') {
    cliIo().stdout.write(EXEC_HELP);
    return 0;
  }
  const env: Record<string, string> = {};
  for (const [k, v] of Object.entries(process.env)) {
    if (v === undefined || k === 'SUPERVISOR_SPAWN_ID') continue;
    if (parsed.cleanEnv && !CLEAN_ENV_KEYS.includes(k)) continue;
    env[k] = v;
  }
  const redact = parsed.redactEnv.map((n) => process.env[n]).filter((v): v is string => !!v);

  // One tree, two rows: no checkpoint thread (decision 65); the spawn record is committed as before.
  const supervisor = ProcessSupervisor.open({ stateDir: parsed.stateDir, checkpointer: false });
  const rec = supervisor.lastReconcile;
  if (rec && rec.interrupted.length > 0 && !parsed.json) {
    cliIo().stderr.write(`supervisor: reconciled ${rec.interrupted.length} tree(s) left by a supervisor that died\n`);
  }
  const controller = new AbortController();
  let cancelSignal: NodeJS.Signals | null = null;
  const shutdown = installShutdown(supervisor, (signal) => {
    cancelSignal = signal;
    controller.abort();
  });
  let outcome: TreeOutcome;
  try {
    const tree = supervisor.spawnTree({
      command: parsed.command,
      args: parsed.args,
      env,
      graceMs: parsed.graceMs,
      drainAfterExitMs: parsed.drainMs,
      ...(parsed.timeoutMs !== undefined ? { timeoutMs: parsed.timeoutMs } : {}),
      redact,
      artifacts: parsed.artifacts,
      stdin: parsed.json ? 'ignore' : 'inherit',
      signal: controller.signal,
      ...(parsed.json
        ? {}
        : {
            onStdout: (c: Buffer) => cliIo().stdout.write(c),
            onStderr: (c: Buffer) => cliIo().stderr.write(c),
          }),
    });
    outcome = await tree.done;
  } catch (err) {
    shutdown.dispose();
    await supervisor.close();
    if (err instanceof SpawnError) {
      const status = err.code === 'COMMAND_NOT_FOUND' ? 127 : 125;
      if (parsed.json) cliIo().stdout.write(JSON.stringify({ reason: 'failed', error: { code: err.code, message: err.message } }) + '\n');
      else cliIo().stderr.write(`supervisor: ${err.message}\n`);
      return status;
    }
    throw err;
  }
  shutdown.dispose();
  await supervisor.close();

  if (parsed.json) {
    cliIo().stdout.write(JSON.stringify(outcome) + '\n');
  } else if (outcome.reason !== 'exited' || outcome.killed.descendants > 0 || outcome.error) {
    cliIo().stderr.write(describe(outcome) + '\n');
  }
  if (cancelSignal === 'SIGTERM') return 143;
  return exitStatus(outcome);
}

export function exitStatus(o: TreeOutcome): number {
  switch (o.reason) {
    case 'timeout':
      return 124;
    case 'cancelled':
      return 130;
    case 'failed':
      return 125;
    case 'exited':
      if (o.exitCode !== null) return o.exitCode;
      if (o.signal) return 128 + (constants.signals[o.signal] ?? 0);
      return 125;
  }
}

function describe(o: TreeOutcome): string {
  let line = `supervisor: pid ${o.pid} (${o.spawnId}) ${o.reason}`;
  if (o.reason === 'exited') line += o.signal ? ` (signal ${o.signal})` : ` (code ${o.exitCode})`;
  line += ` after ${(o.durationMs / 1000).toFixed(2)}s`;
  const notes: string[] = [];
  if (o.killed.descendants > 0) notes.push(`killed ${o.killed.descendants} other process(es) of the tree, ${o.killed.escapees} of them escapees`);
  if (o.killed.survivors > 0) notes.push(`${o.killed.survivors} SURVIVED the kill`);
  if (o.error) notes.push(`${o.error.code}: ${o.error.message}`);
  if (o.artifacts) notes.push(`artifacts in ${o.artifacts.root}`);
  return notes.length > 0 ? `${line}; ${notes.join('; ')}` : line;
}
