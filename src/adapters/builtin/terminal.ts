// The terminal builtin (foreground): one shell command as a supervised process tree, with an
// allowlisted environment and a cwd that must stay inside the workspace.
import fs from 'node:fs';
import path from 'node:path';
import { homeRoots, sandboxCommand, type ProcessSupervisor, type TreeOutcome } from '../../process/index.js';
import { allowlistedEnv } from '../../process/child-env.js';
import type { RedactionSource } from '../../redaction/index.js';
import { resolveInsideWorkspace } from './workspace-path.js';

export interface TerminalInput {
  command: string;
  cwd?: string;
  /** Seconds; clamped by the effect's deadline. */
  timeout?: number;
  /** An explicit overlay on the allowlisted environment (checked in preflight, approved). */
  env?: Record<string, string>;
  /** Start as a background task and return its id at once. */
  background?: boolean;
  /** Background tasks only: what the task writes; a second active task with the same scope is refused. */
  write_scope?: string;
}

export interface TerminalRun {
  /** What the audit view records: the actual cwd, the shell, the environment's keys (never values). */
  audit: { cwd: string; shell: string; envKeys: string[]; command: string; sandboxed: boolean };
  outcome: TreeOutcome;
}

export interface TerminalContext {
  supervisor: ProcessSupervisor;
  workspace: string;
  /** Milliseconds left before the effect's deadline. */
  deadlineMs: number;
  signal: AbortSignal;
  redact: RedactionSource;
  /** Adds the effect's bound secrets to the child's environment (last, so nothing overrides them). */
  secretEnv?: (base: Record<string, string>) => Record<string, string>;
  graceMs?: number;
  /** The cwd and base environment step 4 resolved and approval covered (else resolved now). */
  prepared?: TerminalPrepared;
  /** Run inside the OS sandbox (or fail): the workspace read-only, these paths hidden. */
  sandbox?: TerminalSandbox;
}

/** What the sandboxed terminal must hide even where the workspace would show it, and what it may write. */
export interface TerminalSandbox {
  /** The supervisor's state dir and every declared secret source. */
  maskPaths: readonly string[];
  /** agent.yaml terminal.sandbox: workspace-write: the workspace is writable (its `.git` is not). */
  writableWorkspace: boolean;
}

/** What the terminal's step 4 hands to its step 7. */
export interface TerminalPrepared {
  cwd: string;
  baseEnv: Readonly<Record<string, string>>;
}

export function shellFor(command: string): { file: string; args: string[] } {
  if (process.platform === 'win32') return { file: process.env.ComSpec ?? 'cmd.exe', args: ['/d', '/s', '/c', command] };
  return { file: '/bin/sh', args: ['-c', command] };
}

/** Checks that need no process: run before approval, so a refused cwd never asks the operator. */
export function preflightTerminal(input: TerminalInput, workspace: string): { cwd: string } {
  return { cwd: resolveInsideWorkspace(workspace, input.cwd) };
}

export async function runTerminal(input: TerminalInput, ctx: TerminalContext): Promise<TerminalRun> {
  const cwd = ctx.prepared?.cwd ?? preflightTerminal(input, ctx.workspace).cwd;
  const overlaid = { ...(ctx.prepared?.baseEnv ?? allowlistedEnv()), ...(input.env ?? {}) };
  const env = ctx.secretEnv ? ctx.secretEnv(overlaid) : overlaid;
  const shell = shellFor(input.command);
  const wanted = input.timeout !== undefined ? Math.round(input.timeout * 1000) : ctx.deadlineMs;
  const launch = ctx.sandbox ? terminalSandboxLaunch(shell, cwd, env, ctx.workspace, ctx.sandbox) : { command: shell.file, args: shell.args, cwd, env };
  const tree = ctx.supervisor.spawnTree({
    command: launch.command,
    args: launch.args,
    cwd: launch.cwd,
    env: launch.env,
    timeoutMs: Math.max(1, Math.min(wanted, ctx.deadlineMs)),
    graceMs: ctx.graceMs ?? 2_000,
    redact: ctx.redact,
    signal: ctx.signal,
  });
  const outcome = await tree.done;
  return {
    audit: { cwd, shell: shell.file, envKeys: Object.keys(env).sort(), command: input.command, sandboxed: ctx.sandbox !== undefined },
    outcome,
  };
}

/**
 * The shell inside the OS sandbox (bubblewrap, Seatbelt), as a launcher command for spawnTree, so
 * it stays a supervised tree: the workspace read-only (or writable, `box.writableWorkspace`), no
 * network, a private /tmp, no home, no /run, no state dir, no secret source, no user database.
 * Symlinks resolve inside that view, so a link to /etc/shadow or /root points at nothing. Throws
 * when the sandbox cannot run it: a call that must be sandboxed never runs without it.
 */
export function terminalSandboxLaunch(shell: { file: string; args: string[] }, cwd: string, env: Record<string, string>, workspace: string, box: TerminalSandbox): { command: string; args: string[]; cwd: string; env: Record<string, string> } {
  return sandboxCommand({
    command: shell.file,
    args: shell.args,
    readOnlyPaths: box.writableWorkspace ? gitMetadataOf(workspace) : [workspace],
    writablePaths: box.writableWorkspace ? [workspace] : [],
    cwd,
    network: false,
    // Scratch files go to the sandbox's own /tmp, which the host never sees.
    env: { ...env, ...(env.TMPDIR !== undefined ? { TMPDIR: '/tmp' } : {}) },
    maskPaths: box.maskPaths,
    // The workspace must not be the home or a parent of it: the sandbox would show all of it.
    hiddenRoots: homeRoots(),
    userDatabase: false,
  });
}

/**
 * The workspace's own `.git` (a repository's folder, or a worktree's pointer file), kept read-only
 * inside a writable workspace: a command that could write it could add hooks or config that run
 * code the next time anyone (the supervisor included) runs git there, or point a worktree at
 * another repository. A link there is left alone (the sandbox resolves it in its own view).
 */
function gitMetadataOf(workspace: string): string[] {
  const dotGit = path.join(workspace, '.git');
  const st = fs.lstatSync(dotGit, { throwIfNoEntry: false });
  return st && (st.isDirectory() || st.isFile()) ? [dotGit] : [];
}
