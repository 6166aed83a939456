// The terminal builtin as an EffectAdapter: preflight resolves the cwd inside the workspace and
// binds the exact command line and cwd into the approval; invoke runs the supervised tree.
import { forbiddenTargetReason } from '../../core/secrets-schema.js';
import { RESERVED_KEYS } from '../../core/names.js';
import { DEFAULT_SESSION_CAPS, secretSourcePaths } from '../../core/index.js';
import { allowlistedEnv } from '../../process/child-env.js';
import { hiddenRootShown, homeRoots } from '../../process/index.js';
import { resolveCommand } from '../../process/resolve-command.js';
import { WriteScopeConflictError } from '../../store/index.js';
import { TaskLimitError } from '../../tasks/index.js';
import { AdapterCheckError, AdapterUnavailableError, type AdapterEnv, type EffectAdapter, type InvokeEnv } from '../adapter-types.js';
import { classifyCommand } from './terminal-classify/index.js';
import { preflightTerminal, runTerminal, shellFor, terminalSandboxLaunch, type TerminalInput, type TerminalPrepared, type TerminalSandbox } from './terminal.js';
import { resolveInsideWorkspace, WorkspacePathError } from './workspace-path.js';
import { existsSync } from 'node:fs';
import { dirname, resolve } from 'node:path';

/** An absolute path, a home path, a parent segment or any expansion: may read outside the workspace. */
const LEAVES_WORKSPACE = /(^|[\s'"=:])[/~]|\.\.|\$/;

/**
 * Every word that names an existing path (or whose parent exists) must resolve, symlinks
 * followed, inside the workspace; a quoted word is not taken apart here, so it does not qualify.
 */
function wordsStayInside(parts: readonly string[], cwd: string, workspace: string): boolean {
  for (const part of parts) {
    for (const word of part.split(/\s+/).slice(1)) {
      if (word === '' || word.startsWith('-')) continue;
      if (/['"\\]/.test(word)) return false;
      const p = resolve(cwd, word);
      try {
        resolveInsideWorkspace(workspace, existsSync(p) ? p : dirname(p), 'argument');
      } catch {
        return false;
      }
    }
  }
  return true;
}

/** The overlay's variables, refused when they control execution or collide with a secret target. */
function checkOverlay(overlay: Readonly<Record<string, string>>, secretTargets: readonly string[]): string[] {
  const keys = Object.keys(overlay).sort();
  const secret = new Set(secretTargets.map((t) => t.toUpperCase()));
  for (const k of keys) {
    // Copied naively (a spread, Object.assign), these names become the object's prototype: the
    // variable would silently not reach the command that was approved with it.
    if (RESERVED_KEYS.has(k)) throw new AdapterCheckError(`env.${k} is refused: the name is reserved in JavaScript objects and would not reach the command; use another name`);
    const why = forbiddenTargetReason(k);
    if (why !== null) throw new AdapterCheckError(`env.${k} is refused: the variable ${why}; pass data in a variable of its own, or set it inside the command`);
    if (secret.has(k.toUpperCase())) throw new AdapterCheckError(`env.${k} is refused: agent.yaml binds a secret to ${k} for this tool; the model cannot set or replace it`);
  }
  return keys;
}

/** Best effort: the program each part of the command line starts, as PATH resolves it now. */
function executables(parts: readonly string[], env: Readonly<Record<string, string>>, cwd: string): { name: string; path: string | null }[] {
  const out: { name: string; path: string | null }[] = [];
  const seen = new Set<string>();
  for (const part of parts) {
    const name = part.trim().split(/\s+/)[0] ?? '';
    if (name === '' || seen.has(name) || /['"$`\\]/.test(name)) continue;
    seen.add(name);
    let path: string | null = null;
    try {
      path = resolveCommand(name, env.PATH ?? env.Path, cwd);
    } catch {
      path = null;
    }
    out.push({ name, path });
    if (out.length >= 16) break;
  }
  return out;
}

/**
 * A command line that spells a declared secret source's path is refused: the secret is bound, never
 * read from its file. A courtesy against mistakes, not a boundary (another spelling passes); the
 * loader's rules and the sandbox's masks are the boundary.
 */
function checkSecretSourcesNotNamed(command: string, core: AdapterEnv['core']): void {
  for (const [name, decl] of Object.entries(core.agent.secrets ?? {})) {
    if (decl.file === undefined) continue;
    const [file] = secretSourcePaths({ dir: core.dir, agent: { secrets: { [name]: decl } } });
    if (file !== undefined && command.includes(file)) {
      throw new AdapterCheckError(`the command names ${file}, the source of secret ${name} (agent.yaml secrets.${name}.file); a command never reads a secret's source: bind it with tools.terminal.secrets and read $VAR instead`);
    }
  }
}

function input(args: unknown): TerminalInput {
  return args as TerminalInput; // schema-validated by the runtime in step 1
}

export const terminalAdapter: EffectAdapter = {
  preflight(_entry, args, env) {
    const a = input(args);
    let cwd: string;
    try {
      cwd = preflightTerminal(a, env.workspace).cwd;
    } catch (err) {
      if (err instanceof WorkspacePathError) throw new AdapterCheckError(err.message);
      throw err;
    }
    checkSecretSourcesNotNamed(a.command, env.core);
    const overlay = a.env ?? {};
    const overlayKeys = checkOverlay(overlay, env.secretTargets);
    const base = allowlistedEnv();
    const envKeys = [...new Set([...Object.keys(base), ...overlayKeys, ...env.secretTargets])].sort();
    const cls = classifyCommand(a.command, { workspace: env.workspace });
    // Read-only is not the same as inside the workspace (`cat ~/.ssh/id_rsa` changes nothing):
    // only a read-only command that names no absolute, home, parent or variable path may skip asking.
    const staysInside = !LEAVES_WORKSPACE.test(a.command) && wordsStayInside(cls.parts, cwd, env.workspace);
    const autoable = process.platform !== 'win32' && cls.kind === 'read-only' && staysInside;
    const mode = env.core.agent.terminal?.sandbox ?? 'auto';
    const sandboxAlways = mode !== 'auto';
    // The sandbox binds the workspace: one that is the home, or a parent of it, would show the
    // user's keys and tokens to a command nobody approved. No class approves such a call (it asks);
    // with terminal.sandbox: always, no call can keep that promise, so each is refused here.
    const home = hiddenRootShown(env.workspace, homeRoots());
    const homeWhy = home === null ? null : `the workspace ${env.workspace} is or contains ${home}, which the sandbox never shows whole (a home holds keys, tokens and shell history; /etc holds shadow and private keys); point workspace at a project directory inside it`;
    if (homeWhy !== null && sandboxAlways) throw new AdapterCheckError(`agent.yaml terminal.sandbox: ${mode} cannot hold here: ${homeWhy}`);
    return {
      checks: [
        {
          check: 'terminal-preflight',
          classification: autoable ? 'read-only' : cls.kind === 'read-only' ? 'read-only-outside-workspace' : cls.kind,
          minimum: autoable ? 'auto' : 'prompt',
          reason: cls.kind === 'read-only' && !staysInside ? 'a read-only command naming a path that may leave the workspace' : cls.reason,
        },
        // An explicit environment overlay always needs someone's yes, whatever the command is.
        ...(overlayKeys.length > 0 ? [{ check: 'terminal-env-overlay', classification: 'env-overlay', minimum: 'prompt' as const, reason: `sets ${overlayKeys.join(', ')}` }] : []),
      ],
      // The overlay's values are bound into the approval key (hashed), so an approval of A=1 does not run A=2.
      action: {
        kind: 'terminal.exec',
        target: { command: a.command, cwd, envKeys, ...(overlayKeys.length > 0 ? { env: { ...overlay } } : {}), ...(a.background ? { background: true, writeScope: a.write_scope ?? null } : {}) },
      },
      background: a.background === true,
      // Foreground and background alike can run inside the sandbox (a background task is the same launch, kept by the task worker).
      ...(sandboxAlways ? { sandbox: 'always' as const } : homeWhy === null ? { sandbox: 'available' as const } : { sandboxWithheld: homeWhy }),
      prepared: { cwd, baseEnv: base } satisfies TerminalPrepared,
      summary: overlayKeys.length > 0 ? `${overlayKeys.map((k) => `${k}=…`).join(' ')} ${a.command}` : a.command,
      audit: {
        cwd,
        shell: shellFor(a.command).file,
        envKeys,
        overlayKeys,
        classification: cls.kind,
        parts: cls.parts,
        executables: executables(cls.parts.length > 0 ? cls.parts : [a.command], { ...base, ...overlay }, cwd),
      },
    };
  },

  async invoke(entry, args, env) {
    const a = input(args);
    const prepared = env.prepared as TerminalPrepared | undefined;
    if (a.background) {
      if (!env.tasks) throw new AdapterUnavailableError('background tasks need a task worker, and this runtime has none');
      const cwd = prepared?.cwd ?? preflightTerminal(a, env.workspace).cwd;
      const shell = shellFor(a.command);
      const baseEnv = { ...(prepared?.baseEnv ?? allowlistedEnv()), ...(a.env ?? {}) };
      // Approved by class (or terminal.sandbox: always): the task's tree is the sandbox launcher.
      const launch = env.sandbox ? terminalSandboxLaunch(shell, cwd, baseEnv, env.workspace, sandboxBox(env)) : { command: shell.file, args: shell.args, cwd, env: baseEnv };
      let task;
      try {
        task = await env.tasks.startTerminal(env.owner, {
          sessionId: env.owner.sessionId,
          sourceTool: entry.name,
          summary: a.command,
          writeScope: a.write_scope ?? null,
          command: launch.command,
          args: launch.args,
          cwd: launch.cwd,
          env: launch.env,
          ...(a.timeout !== undefined ? { timeoutMs: Math.round(a.timeout * 1000) } : {}),
          redact: env.redact,
          maxRunningInSession: env.core.agent.limits.max_background_tasks ?? DEFAULT_SESSION_CAPS.maxBackgroundTasks,
        });
      } catch (err) {
        if (err instanceof WriteScopeConflictError) return { text: `[refused] ${err.message}`, isError: true, detail: { code: err.code } };
        if (err instanceof TaskLimitError) return { text: `[refused] ${err.message}`, isError: true, detail: { code: err.code, limit: 'limits.max_background_tasks', value: err.limit } };
        throw err;
      }
      return {
        text: `[started background task ${task.id}] ${a.command}\nFollow it with task_status or yield_until; stop it with task_control (cancel).`,
        isError: false,
        detail: { taskId: task.id, spawnId: task.spawnId, background: true, sandboxed: env.sandbox !== undefined, ...(env.sandbox ? { sandbox: env.sandbox.why } : {}) },
      };
    }
    const run = await runTerminal(a, {
      supervisor: env.supervisor,
      workspace: env.workspace,
      deadlineMs: env.deadlineMs,
      signal: env.signal,
      redact: env.redact,
      ...(env.secretEnv ? { secretEnv: env.secretEnv } : {}),
      ...(prepared ? { prepared } : {}),
      // Hidden inside the sandbox even where the workspace would show them.
      ...(env.sandbox ? { sandbox: sandboxBox(env) } : {}),
    });
    const o = run.outcome;
    const status = o.reason === 'exited' ? (o.signal ? `killed by ${o.signal}` : `exit code ${o.exitCode}`) : o.reason;
    const parts = [`[${status}]`];
    if (o.stdout.tail) parts.push(`stdout${o.stdout.truncated ? ' (last 12,000 characters)' : ''}:\n${o.stdout.tail}`);
    if (o.stderr.tail) parts.push(`stderr${o.stderr.truncated ? ' (last 12,000 characters)' : ''}:\n${o.stderr.tail}`);
    return {
      text: parts.join('\n'),
      isError: !(o.reason === 'exited' && o.exitCode === 0),
      detail: {
        ...run.audit,
        ...(env.sandbox ? { sandbox: env.sandbox.why } : {}),
        spawnId: o.spawnId,
        reason: o.reason,
        exitCode: o.exitCode,
        signal: o.signal,
        durationMs: o.durationMs,
        stdout: { bytes: o.stdout.bytes, chars: o.stdout.chars, truncated: o.stdout.truncated },
        stderr: { bytes: o.stderr.bytes, chars: o.stderr.chars, truncated: o.stderr.truncated },
        artifacts: o.artifacts,
        killed: o.killed,
      },
    };
  },
};

/** The sandbox of a call that runs in it: what it must not see, and whether it may write the workspace. */
function sandboxBox(env: InvokeEnv): TerminalSandbox {
  return { maskPaths: [env.supervisor.stateDir, ...secretSourcePaths(env.core)], writableWorkspace: env.core.agent.terminal?.sandbox === 'workspace-write' };
}
