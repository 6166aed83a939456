// `supervisor call <core> <tool>`: one effect through the full pipeline, without a model.
import { cliIo } from './io.js';
import { resolve } from 'node:path';
import { displayJson, displayText } from '../redaction/index.js';
import { SessionError } from '../session/index.js';
import { openCoreSession } from './core-session.js';
import { viewPrinter } from './view-printer.js';
import { parseFlags } from './flags.js';
import { installShutdown } from './shutdown.js';
import { defaultStateDir } from './state-dir.js';
import { parseDuration, UsageError } from './usage.js';

export const CALL_HELP = `Usage: supervisor call <core> <tool> [--args JSON] [--json] [--approve RULE]... [--deny RULE]...
                       [--timeout S] [--state-dir DIR]

Runs one tool of the core's catalog through the same pipeline a model's call takes: schema,
principal, capability, pure checks, approval, secrets, the adapter under a deadline, and the
separate views; it is recorded in a new session of the audit log. Nothing runs before its checks.

Options:
  --args JSON       the tool's arguments (default {})
  --approve RULE    approve matching prompts without asking: TOOL, TOOL:GLOB (glob over the
                    action, e.g. 'terminal:ls *'), or capability:PATTERN; repeatable
  --deny RULE       deny matching calls, whatever else says yes; repeatable
                    (a rule that names no tool or capability of the catalog is refused,
                    exit 2, with the closest valid spelling)
  --timeout S       the effect's deadline (default 120 s)
  --json            print the operator view as JSON
  --state-dir DIR   store and artifacts (default $SUPERVISOR_STATE_DIR or ~/.local/state/isolation-supervisor)

Without --approve and without a terminal, a tool whose policy is "prompt" is denied.
Exit status: 0 the tool ran and succeeded; 1 it was refused or failed; 2 usage or core errors.
`;

export async function runCall(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json'], value: ['args', 'timeout', 'state-dir'], multi: ['approve', 'deny'] }, 'call');
  if (f.help) {
    cliIo().stdout.write(CALL_HELP);
    return 0;
  }
  const [coreDir, tool, ...extra] = f.positionals;
  if (!coreDir || !tool || extra.length > 0) throw new UsageError('call needs a core and a tool: supervisor call <core> <tool> [--args JSON]');
  let args: unknown = {};
  const rawArgs = f.value.get('args');
  if (rawArgs !== undefined) {
    try {
      args = JSON.parse(rawArgs);
    } catch (err) {
      throw new UsageError(`--args is not JSON (${(err as Error).message}); e.g. --args '{"command":"ls"}'`);
    }
  }
  const timeout = f.value.get('timeout');
  const deadlineMs = timeout === undefined ? undefined : parseDuration('--timeout', timeout);
  const s = await openCoreSession(
    {
      coreDir,
      stateDir: resolve(f.value.get('state-dir') ?? defaultStateDir()),
      approve: f.multi.get('approve') ?? [],
      deny: f.multi.get('deny') ?? [],
      interactive: !f.bool.has('json'),
      // The same "still running" beat as run, on stderr: stdout holds the one result.
      onProgress: (p) =>
        void cliIo().stderr.write(
          f.bool.has('json')
            ? `${displayJson({ type: 'progress', ...p })}\n`
            : `${displayText(`  … ${p.tool} ${p.progress}${p.total !== undefined ? `/${p.total}` : ''}${p.message ? ` ${p.message}` : ''}`)}\n`,
        ),
    },
    'call',
  );
  const controller = new AbortController();
  const shutdown = installShutdown(s.supervisor, () => controller.abort());
  let code = 1;
  try {
    let out;
    try {
      out = await s.callTool(tool, args, { signal: controller.signal, ...(deadlineMs !== undefined ? { deadlineMs } : {}) });
    } catch (err) {
      if (!(err instanceof SessionError && err.code === 'UNKNOWN_TOOL')) throw err;
      cliIo().stderr.write(`supervisor: no tool ${displayText(JSON.stringify(tool))} in ${s.core.dir}'s catalog (tools: ${s.catalog.entries.map((e) => e.name).join(', ')})\n`);
      code = 2;
      return code;
    }
    // The views are redacted by the runtime; the printer removes every secret the session knows
    // once more and makes the text safe to show (the same path as run's output).
    const shown = viewPrinter(s.secrets);
    if (f.bool.has('json')) {
      shown.json({ session: s.id, ok: out.ok, ...(out.ok ? { isError: out.isError } : { code: out.code, step: out.step }), view: out.views.operator });
    } else if (out.ok) {
      shown.text(out.views.model.content + (out.views.model.content.endsWith('\n') ? '' : '\n'));
    } else {
      const err = viewPrinter(s.secrets, (t) => void cliIo().stderr.write(t));
      err.text(`supervisor: ${tool} refused at step ${out.step}: ${out.code}: ${out.message}\n`);
      err.end();
    }
    shown.end();
    code = out.ok && !out.isError ? 0 : 1;
    return code;
  } finally {
    // Signal hooks stay until the session is closed (see serve).
    try {
      await s.close(code === 0 ? 'completed' : controller.signal.aborted ? 'cancelled' : 'failed');
    } finally {
      shutdown.dispose();
    }
  }
}
