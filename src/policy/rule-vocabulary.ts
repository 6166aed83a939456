// Approval rules are checked against what exists. A rule that can never match is a typo, and a
// typo in a --deny rule fails open (`--deny Terminal --approve terminal` runs everything). So every
// --approve/--deny rule and every agent.yaml approval.rules key must reach something in the catalog,
// and the error names the closest valid spelling. Tool names then match case-sensitively.
//
// What exists before MCP discovery: the builtin and authored tools, each declared MCP server's
// connect approval (tool `mcp.connect.<server>`, capability `mcp.connect:<server>`) and its calls
// (capability `mcp.call:<server>`). A tool name `<server>_<tool>` of a declared server is known
// only after discovery: it is accepted provisionally and checked again once the server's tools are
// in the catalog (checkDiscoveredToolRules).
import { type ApprovalRule, type RuleVerdict, parseApprovalRule } from './approval-rules.js';
import { capabilityCovers, parseCapability, type Capability } from './capability.js';
import { ApprovalRuleError } from './errors.js';

export interface RuleVocabulary {
  /** Tool names a rule may name: the catalog's, plus `mcp.connect.<server>` per declared server. */
  readonly tools: readonly string[];
  /** Capabilities some entry or connect approval requires. */
  readonly capabilities: readonly string[];
  /** Declared MCP servers: `<server>_…` tool names are checked after discovery. */
  readonly mcpServers: readonly string[];
}

/** The vocabulary of a catalog's entries plus the core's declared MCP servers. */
export function ruleVocabulary(entries: readonly { name: string; capability: string }[], mcpServers: readonly string[]): RuleVocabulary {
  const tools = new Set(entries.map((e) => e.name));
  const capabilities = new Set(entries.map((e) => e.capability));
  for (const s of mcpServers) {
    tools.add(`mcp.connect.${s}`);
    capabilities.add(`mcp.connect:${s}`);
    capabilities.add(`mcp.call:${s}`);
  }
  return { tools: [...tools].sort(), capabilities: [...capabilities].sort(), mcpServers: [...mcpServers] };
}

/** Levenshtein distance, bounded: stops counting past `max`. */
function distance(a: string, b: string, max: number): number {
  if (Math.abs(a.length - b.length) > max) return max + 1;
  let prev = Array.from({ length: b.length + 1 }, (_, j) => j);
  for (let i = 1; i <= a.length; i++) {
    const cur = [i];
    let best = i;
    for (let j = 1; j <= b.length; j++) {
      const v = Math.min(prev[j]! + 1, cur[j - 1]! + 1, prev[j - 1]! + (a[i - 1] === b[j - 1] ? 0 : 1));
      cur.push(v);
      best = Math.min(best, v);
    }
    if (best > max) return max + 1;
    prev = cur;
  }
  return prev[b.length]!;
}

/** The closest of `candidates` to `word`: a case-insensitive match first, then the smallest edit distance (at most a third of the word, at least 2). */
export function closestSpelling(word: string, candidates: readonly string[]): string | undefined {
  const w = word.trim();
  const lower = w.toLowerCase();
  const same = candidates.find((c) => c.toLowerCase() === lower);
  if (same !== undefined) return same;
  const max = Math.max(2, Math.floor(w.length / 3));
  let best: { c: string; d: number } | undefined;
  for (const c of candidates) {
    const d = distance(lower, c.toLowerCase(), max);
    if (d <= max && (best === undefined || d < best.d)) best = { c, d };
  }
  return best?.c;
}

/** Spellings a capability pattern may have: each capability, and its wildcard prefixes (`terminal.*`, `mcp.call:*`). */
function patternSpellings(capabilities: readonly string[]): string[] {
  const out = new Set<string>(capabilities);
  for (const c of capabilities) {
    const colon = c.indexOf(':');
    if (colon > 0) out.add(`${c.slice(0, colon)}:*`);
    const head = colon > 0 ? c.slice(0, colon) : c;
    const dot = head.indexOf('.');
    if (dot > 0) out.add(`${head.slice(0, dot)}.*`);
  }
  return [...out].sort();
}

function flagOf(verdict: RuleVerdict): string {
  return verdict === 'approve' ? '--approve' : '--deny';
}

function listed(words: readonly string[]): string {
  const shown = words.slice(0, 12).join(', ');
  return words.length > 12 ? `${shown}, … (${words.length} in all; supervisor catalog <core> lists them)` : shown;
}

/** True if the grant-syntax `pattern` covers at least one of the capabilities. */
export function patternReaches(pattern: Capability, capabilities: readonly string[]): boolean {
  return capabilities.some((c) => {
    try {
      return capabilityCovers(pattern, parseCapability(c, 'requirement'));
    } catch {
      return false;
    }
  });
}

/** What the operator probably meant by a rule that names nothing, as a whole rule. */
function suggestRule(text: string, verdict: RuleVerdict, vocab: RuleVocabulary): string | undefined {
  const flag = flagOf(verdict);
  const t = text.trim();
  const colon = t.indexOf(':');
  const head = colon < 0 ? t : t.slice(0, colon);
  const rest = colon < 0 ? undefined : t.slice(colon + 1);
  if (head.toLowerCase() === 'capability' && rest !== undefined) {
    const cap = closestSpelling(rest, patternSpellings(vocab.capabilities));
    return cap === undefined ? undefined : `${flag} capability:${cap}`;
  }
  // A capability written without its `capability:` prefix (mcp.connect:memory, terminal.exec).
  if (vocab.capabilities.includes(t)) return `${flag} capability:${t}`;
  const asConnect = head === 'mcp.connect' && rest !== undefined ? closestSpelling(`mcp.connect.${rest}`, vocab.tools) : undefined;
  if (asConnect !== undefined) return `${flag} ${asConnect}`;
  const tool = closestSpelling(head, vocab.tools);
  if (tool === undefined) return undefined;
  return rest === undefined || rest.trim() === '' || rest.trim() === '*' ? `${flag} ${tool}` : `${flag} '${tool}:${rest}'`;
}

function refuse(text: string, verdict: RuleVerdict, reason: string, vocab: RuleVocabulary): never {
  const suggestion = suggestRule(text, verdict, vocab);
  const fix = suggestion !== undefined ? `did you mean  ${suggestion}  ? (tool names match exactly, case included)` : `name a tool of this catalog (${listed(vocab.tools)}) or write capability:PATTERN`;
  throw new ApprovalRuleError(flagOf(verdict), text, reason, fix);
}

/** An MCP tool name of a declared server, not yet discovered. */
function mcpServerOf(tool: string, vocab: RuleVocabulary): string | undefined {
  return vocab.mcpServers.find((s) => tool.startsWith(`${s.replace(/[^a-zA-Z0-9_-]/g, '_')}_`));
}

/**
 * Parses one rule and checks it reaches something that exists; throws ApprovalRuleError naming
 * the closest valid spelling otherwise.
 */
export function checkedApprovalRule(text: string, verdict: RuleVerdict, vocab: RuleVocabulary): ApprovalRule {
  let rule: ApprovalRule;
  try {
    rule = parseApprovalRule(text, verdict);
  } catch (err) {
    const suggestion = typeof text === 'string' ? suggestRule(text, verdict, vocab) : undefined;
    if (err instanceof ApprovalRuleError && suggestion !== undefined) {
      throw new ApprovalRuleError(flagOf(verdict), text, err.message.replace(/^.*? is invalid: /, '').replace(/\. Fix: .*$/s, ''), `did you mean  ${suggestion}  ?`);
    }
    throw err;
  }
  if (rule.capabilityPattern !== undefined) {
    if (!patternReaches(rule.capabilityPattern, vocab.capabilities)) {
      refuse(text, verdict, `no tool in this catalog requires a capability ${rule.capabilityPattern.text} covers (capabilities: ${listed(vocab.capabilities)})`, vocab);
    }
    return rule;
  }
  const tool = rule.toolName!;
  if (vocab.tools.includes(tool)) return rule;
  if (mcpServerOf(tool, vocab) !== undefined) return rule; // checked again after discovery
  return refuse(text, verdict, `there is no tool named ${JSON.stringify(tool)} in this catalog`, vocab);
}

/**
 * After MCP discovery: a rule naming `<server>_<tool>` of a server that connected must name one of
 * the tools it offers (a server that did not connect offers none, so its rules cannot be reached).
 */
export function checkDiscoveredToolRules(rules: readonly ApprovalRule[], vocab: RuleVocabulary, connected: readonly string[]): void {
  for (const rule of rules) {
    const tool = rule.toolName;
    if (tool === undefined || vocab.tools.includes(tool)) continue;
    const server = mcpServerOf(tool, vocab);
    if (server === undefined || !connected.includes(server)) continue;
    refuse(rule.text, rule.verdict, `MCP server ${server} offers no tool named ${JSON.stringify(tool)}`, vocab);
  }
}

/**
 * agent.yaml approval.rules: each key is a capability pattern that must cover some capability of
 * the catalog. Returns a message naming the file, the field and the closest spelling, or undefined.
 */
export function unreachableConfigRule(pattern: string, index: number, vocab: RuleVocabulary): string | undefined {
  let parsed: Capability;
  try {
    parsed = parseCapability(pattern, 'grant');
  } catch {
    return undefined; // the core loader already refused it
  }
  if (patternReaches(parsed, vocab.capabilities)) return undefined;
  const near = closestSpelling(pattern, patternSpellings(vocab.capabilities));
  return (
    `agent.yaml: approval.rules[${index}].capability ${JSON.stringify(pattern)}: no tool in this catalog requires a capability it covers, so the rule can never apply; ` +
    (near !== undefined ? `did you mean ${JSON.stringify(near)}?` : `capabilities of this catalog: ${listed(vocab.capabilities)}`)
  );
}
