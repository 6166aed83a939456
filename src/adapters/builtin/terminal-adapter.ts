// The terminal builtin as an EffectAdapter: preflight resolves the cwd inside the workspace and
// binds the exact command line and cwd into the approval; invoke runs the supervised tree.
import { allowlistedEnv } from '../../process/child-env.js';
import { AdapterCheckError, type EffectAdapter } from '../adapter-types.js';
import { preflightTerminal, runTerminal, shellFor, type TerminalInput } from './terminal.js';
import { WorkspacePathError } from './workspace-path.js';

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
    const envKeys = Object.keys(allowlistedEnv()).sort();
    return {
      // The full classification (read-only, project code, everything else) comes with the secrets
      // and terminal issue; until then every command needs the entry's policy as is.
      checks: [{ check: 'terminal-preflight', classification: 'unclassified', minimum: 'auto' }],
      action: { kind: 'terminal.exec', target: { command: a.command, cwd, envKeys } },
      summary: a.command,
      audit: { cwd, shell: shellFor(a.command).file, envKeys },
    };
  },

  async invoke(_entry, args, env) {
    const run = await runTerminal(input(args), {
      supervisor: env.supervisor,
      workspace: env.workspace,
      deadlineMs: env.deadlineMs,
      signal: env.signal,
      redact: env.redact,
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
