// Claude Code (`claude -p`) as an external runtime. The grant-is-not-a-builtin rule: the CLI gets
// no built-in tool at all; the only tools it can call are the catalog's, served by the
// supervisor's per-run MCP server. Flags relied on (docs/runtimes.md lists their sources):
//   -p (print mode, prompt on stdin), --output-format stream-json --verbose, --mcp-config FILE
//   --strict-mcp-config, --tools "" (no built-ins), --disallowedTools (every known built-in, in
//   case --tools "" is ignored by a CLI version), --allowedTools mcp__supervisor__<tool>,...
//   (pre-approves exactly the catalog's tools), --permission-mode dontAsk (anything not
//   pre-approved is denied, never asked), --max-turns N, --max-budget-usd X,
//   --no-session-persistence.
import { RuntimeSetupError } from '../runtime-types.js';
import type { CliArgvInput, CliStreamEvent, ExternalCliAdapter } from '../external-cli/cli-adapter.js';

const SERVER = 'supervisor';
/** Flag settings: no hook (a shell command the CLI would run outside the supervisor) runs. */
export const CLAUDE_RUN_SETTINGS = '{"disableAllHooks":true}';
const PREFIX = `mcp__${SERVER}__`;

/** Built-in tools of the CLI known to us; all are denied by name as well as by --tools "". */
export const CLAUDE_BUILTIN_TOOLS = Object.freeze([
  'Bash', 'BashOutput', 'KillShell', 'Read', 'Write', 'Edit', 'MultiEdit', 'Glob', 'Grep', 'LS', 'NotebookEdit', 'NotebookRead',
  'WebFetch', 'WebSearch', 'Task', 'TaskCreate', 'TaskGet', 'TaskList', 'TaskUpdate', 'TaskOutput', 'TaskStop', 'Agent', 'Skill',
  'SlashCommand', 'TodoWrite', 'AskUserQuestion', 'EnterPlanMode', 'ExitPlanMode', 'SendMessage', 'LSP', 'EnterWorktree', 'ExitWorktree',
]);

/** Non-MCP tools the CLI may still list at init that reach nothing outside it and our server:
 *  the MCP resource readers (our server serves no resources) and ending the conversation. */
export const CLAUDE_TOLERATED_INIT_TOOLS = Object.freeze(['ListMcpResourcesTool', 'ReadMcpResourceTool', 'EndConversation']);

/** Operator flags that would widen authority, each with the reason shown when it is refused. */
const FORBIDDEN: Readonly<Record<string, string>> = {
  '--dangerously-skip-permissions': 'it bypasses every permission check of the CLI',
  '--allow-dangerously-skip-permissions': 'it lets the session switch to bypassPermissions',
  '--permission-mode': 'the supervisor sets the permission mode (dontAsk); bypassPermissions, acceptEdits or auto would widen it',
  '--allowedTools': 'tool allowances would expose built-in tools; grant a catalog tool in agent.yaml instead',
  '--allowed-tools': 'tool allowances would expose built-in tools; grant a catalog tool in agent.yaml instead',
  '--tools': 'the supervisor turns every built-in tool off (--tools ""); grant a catalog tool instead',
  '--disallowedTools': 'the supervisor sets the deny list itself',
  '--disallowed-tools': 'the supervisor sets the deny list itself',
  '--add-dir': 'it widens the CLI\'s filesystem reach',
  '--mcp-config': 'only the supervisor\'s per-run MCP server may be configured',
  '--strict-mcp-config': 'the supervisor sets it',
  '--settings': 'settings can grant permissions and install hooks that run commands',
  '--setting-sources': 'settings can grant permissions and install hooks that run commands',
  '--plugin-dir': 'plugins bring their own tools and hooks',
  '--agents': 'agent definitions bring their own tool lists',
  '--agent': 'agent definitions bring their own tool lists',
  '--permission-prompt-tool': 'permission decisions belong to the supervisor',
  '--ide': 'an IDE connection brings the IDE\'s tools',
  '--chrome': 'a browser connection brings browser tools',
  '--continue': 'it continues another conversation (another context, another permission history)',
  '-c': 'it continues another conversation',
  '--resume': 'it resumes another conversation',
  '-r': 'it resumes another conversation',
  '--fork-session': 'it forks another conversation',
  '--session-id': 'the CLI\'s session is the supervisor\'s to name',
  '-p': 'the supervisor runs the CLI in print mode itself',
  '--print': 'the supervisor runs the CLI in print mode itself',
  '--output-format': 'the supervisor needs stream-json to audit the run',
  '--input-format': 'the prompt goes on stdin as text',
  '--max-turns': 'budgets come from agent.yaml limits, clamped by the supervisor',
  '--max-budget-usd': 'budgets come from agent.yaml limits, clamped by the supervisor',
};
/** Operator flags passed through as they are (each takes one value). */
const PASS_THROUGH_WITH_VALUE = new Set(['--model', '--fallback-model', '--append-system-prompt', '--system-prompt', '--effort']);

/** `--flag=value` → [`--flag`, `value`]; other words unchanged. */
function split(argv: readonly string[]): string[] {
  const out: string[] = [];
  for (const a of argv) {
    const eq = a.startsWith('--') ? a.indexOf('=') : -1;
    if (eq > 0) out.push(a.slice(0, eq), a.slice(eq + 1));
    else out.push(a);
  }
  return out;
}

function valuesOf(argv: readonly string[], flag: string): string[] {
  const words = split(argv);
  const out: string[] = [];
  for (let i = 0; i < words.length; i++) if (words[i] === flag) out.push(words[i + 1] ?? '');
  return out;
}

const refuse = (message: string): never => {
  throw new RuntimeSetupError('RUNTIME_FLAG_FORBIDDEN', message);
};

const str = (v: unknown, max = 4000): string | null => (typeof v === 'string' ? v.slice(0, max) : null);
const num = (v: unknown): number | null => (typeof v === 'number' && Number.isFinite(v) ? v : null);
const arr = (v: unknown): unknown[] => (Array.isArray(v) ? v.slice(0, 1000) : []);
const rec = (v: unknown): Record<string, unknown> => (v !== null && typeof v === 'object' && !Array.isArray(v) ? (v as Record<string, unknown>) : {});

export const claudeCodeAdapter: ExternalCliAdapter = {
  name: 'claude-code',
  defaultBinary: 'claude',
  binaryEnv: 'SUPERVISOR_CLAUDE_BIN',
  // The CLI's own credentials and config location; nothing else of the supervisor's environment.
  envPassThrough: ['ANTHROPIC_API_KEY', 'CLAUDE_CODE_OAUTH_TOKEN', 'ANTHROPIC_BASE_URL', 'CLAUDE_CONFIG_DIR', 'XDG_CONFIG_HOME'],
  serverName: SERVER,
  toleratedInitTools: CLAUDE_TOLERATED_INIT_TOOLS,
  toolNameFor: (tool) => `${PREFIX}${tool}`,

  mcpConfig(url, token) {
    return `${JSON.stringify({ mcpServers: { [SERVER]: { type: 'http', url, headers: { Authorization: `Bearer ${token}` } } } }, null, 2)}\n`;
  },

  buildArgv(i: CliArgvInput): string[] {
    const allowed = i.tools.map((t) => `${PREFIX}${t}`);
    return [
      '-p',
      '--output-format', 'stream-json',
      '--verbose',
      '--mcp-config', i.mcpConfigPath,
      '--strict-mcp-config',
      '--tools', '',
      '--disallowedTools', CLAUDE_BUILTIN_TOOLS.join(','),
      ...(allowed.length > 0 ? ['--allowedTools', allowed.join(',')] : []),
      '--permission-mode', 'dontAsk',
      '--setting-sources', 'user',
      '--settings', CLAUDE_RUN_SETTINGS,
      '--max-turns', String(i.budgets.maxTurns),
      '--max-budget-usd', String(i.budgets.maxCostUsd),
      '--no-session-persistence',
      ...i.passThrough,
    ];
  },

  checkPassThrough(args) {
    const words = split(args);
    for (let k = 0; k < words.length; k++) {
      const w = words[k]!;
      if (FORBIDDEN[w] !== undefined) refuse(`--runtime-arg ${w}: refused, ${FORBIDDEN[w]} (docs/runtimes.md, The boundary)`);
      if (PASS_THROUGH_WITH_VALUE.has(w)) {
        if (words[k + 1] === undefined) refuse(`--runtime-arg ${w} needs a value`);
        k++;
        continue;
      }
      refuse(
        `--runtime-arg ${JSON.stringify(w)}: not on the pass-through allowlist (${[...PASS_THROUGH_WITH_VALUE].join(', ')}); flags that could widen the CLI's authority are never passed`,
      );
    }
  },

  checkArgv(argv, i) {
    const words = split(argv);
    for (const w of words) {
      if (w === '--dangerously-skip-permissions' || w === '--allow-dangerously-skip-permissions' || w === '--add-dir' || w === '--plugin-dir' || w === '--agents' || w === '--agent' || w === '--permission-prompt-tool' || w === '--ide' || w === '--chrome' || w === '--allowed-tools' || w === '--disallowed-tools') {
        refuse(`the argv holds ${w}: ${FORBIDDEN[w]}`);
      }
    }
    const one = (flag: string, want: (v: string) => boolean, what: string): void => {
      const v = valuesOf(argv, flag);
      if (v.length !== 1 || !want(v[0]!)) refuse(`the argv must hold ${flag} exactly once, ${what} (found ${JSON.stringify(v)})`);
    };
    one('--tools', (v) => v === '', 'empty (no built-in tool)');
    one('--permission-mode', (v) => v === 'dontAsk', 'as dontAsk');
    one('--mcp-config', (v) => v === i.mcpConfigPath, "naming the supervisor's per-run config");
    one('--output-format', (v) => v === 'stream-json', 'as stream-json');
    one('--setting-sources', (v) => v === 'user', 'as user (no workspace settings)');
    one('--settings', (v) => v === CLAUDE_RUN_SETTINGS, `as ${CLAUDE_RUN_SETTINGS}`);
    if (!words.includes('--strict-mcp-config')) refuse('the argv must hold --strict-mcp-config (no other MCP server may load)');
    const allowed = valuesOf(argv, '--allowedTools');
    if (allowed.length > 1) refuse('the argv must hold --allowedTools at most once');
    const catalog = new Set(i.tools.map((t) => `${PREFIX}${t}`));
    for (const name of (allowed[0] ?? '').split(/[,\s]+/).filter(Boolean)) {
      if (!catalog.has(name)) refuse(`--allowedTools ${name}: only the catalog's own tools (${PREFIX}<tool>) may be allowed`);
    }
  },

  builtinsExposed(argv) {
    const tools = valuesOf(argv, '--tools');
    const exposed: string[] = [];
    if (tools.length !== 1 || tools[0] !== '') exposed.push(`built-in tools (--tools ${JSON.stringify(tools)})`);
    for (const name of (valuesOf(argv, '--allowedTools')[0] ?? '').split(/[,\s]+/).filter(Boolean)) if (!name.startsWith(PREFIX)) exposed.push(name);
    if (split(argv).some((w) => w === '--dangerously-skip-permissions')) exposed.push('every tool (--dangerously-skip-permissions)');
    return exposed.sort();
  },

  parseEvent(obj): CliStreamEvent | null {
    const o = rec(obj);
    const type = str(o.type, 64);
    if (type === null) return null;
    if (type === 'system' && o.subtype === 'init') {
      return {
        kind: 'init',
        tools: arr(o.tools).map((t) => str(t, 200)).filter((t): t is string => t !== null),
        model: str(o.model, 200),
        version: str(o.claude_code_version, 64),
        mcpServers: arr(o.mcp_servers).map((m) => ({ name: str(rec(m).name, 200) ?? '?', status: str(rec(m).status, 64) ?? '?' })),
      };
    }
    if (type === 'assistant') {
      const blocks = arr(rec(o.message).content).map(rec);
      const texts = blocks.filter((b) => b.type === 'text').map((b) => str(b.text) ?? '');
      return {
        kind: 'assistant',
        text: texts.length > 0 ? texts.join('\n').slice(0, 4000) : null,
        toolUses: blocks.filter((b) => b.type === 'tool_use').map((b) => ({ id: str(b.id, 200) ?? '?', name: str(b.name, 200) ?? '?' })),
      };
    }
    if (type === 'user') {
      const r = arr(rec(o.message).content).map(rec).find((b) => b.type === 'tool_result');
      if (r) return { kind: 'tool_result', toolUseId: str(r.tool_use_id, 200) ?? '?', isError: r.is_error === true };
      return { kind: 'other', type };
    }
    if (type === 'result') {
      return {
        kind: 'result',
        subtype: str(o.subtype, 64) ?? '?',
        isError: o.is_error === true,
        costUsd: num(o.total_cost_usd),
        turns: num(o.num_turns),
        stopReason: str(o.stop_reason, 64),
        text: str(o.result),
      };
    }
    return { kind: 'other', type };
  },
};
