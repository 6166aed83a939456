// The approval cache key: a hash over everything an approval is about, so that remembering an
// approval ("always") can never authorize a different action, another session, principal, core
// revision, grant set, policy or catalog entry.
//
// Canonical form: a versioned tag, then JSON with object keys sorted by UTF-16 code unit. JSON
// quotes and escapes every string (lone surrogates included), so no delimiter inside a field can
// shift a boundary: ('a:b','c') and ('a','b:c') serialize differently. Strings are kept byte for
// byte (no Unicode normalization): two command lines that look alike but differ must not share
// an approval.
import { createHash } from 'node:crypto';
import { type ApprovalPolicy, parseApprovalPolicy } from './approval-policy.js';
import { ApprovalKeyError } from './errors.js';
import { canonicalJson as storeCanonicalJson } from '../store/canonical-json.js';

/** JSON data with no undefined, no non-finite numbers, no class instances. */
export type CanonicalValue = string | number | boolean | null | readonly CanonicalValue[] | { readonly [key: string]: CanonicalValue };

/** What is being done and to what, e.g. terminal: { command, cwd }; MCP call: { server, tool }. */
export interface ApprovalAction {
  /** e.g. 'terminal.exec', 'mcp.call', 'mcp.connect', 'evolve_core.promote'. */
  readonly kind: string;
  /** Everything that makes this a different action must be in here. */
  readonly target: CanonicalValue;
}

export interface ApprovalBinding {
  readonly principal: string;
  readonly session: string;
  readonly coreRevision: string;
  /** CapabilitySnapshot.digest (64 lowercase hex). */
  readonly capabilitySnapshot: string;
  /** The effective policy after foldGlobal and refine. */
  readonly policy: ApprovalPolicy;
  /** The resolved catalog entry: its opaque reference and its name. */
  readonly effect: { readonly ref: string; readonly name: string };
  readonly action: ApprovalAction;
}

/** A computed key: `id` is what the cache stores; the scope fields allow targeted invalidation. */
export interface ApprovalKey {
  /** 'ak1:' + sha256 hex of the canonical binding. */
  readonly id: string;
  readonly principal: string;
  readonly session: string;
  readonly coreRevision: string;
  readonly policy: ApprovalPolicy;
}

const KEY_VERSION = 'approval-key/v1';
const DIGEST = /^[0-9a-f]{64}$/;

/** Canonical JSON of a value; throws ApprovalKeyError naming the path of anything non-canonical. */
/** One canonical form for every hash the supervisor computes: the store's (sorted keys, no whitespace). */
export function canonicalJson(value: unknown): string {
  try {
    return storeCanonicalJson(value);
  } catch (err) {
    throw new ApprovalKeyError(`${(err as Error).message}; approval bindings hold strings, numbers, booleans, arrays and plain objects`);
  }
}

function nonEmpty(value: unknown, field: string): string {
  if (typeof value !== 'string' || value === '') {
    throw new ApprovalKeyError(`approval binding field ${field} must be a non-empty string (got ${JSON.stringify(value) ?? typeof value})`);
  }
  return value;
}

/** The exact canonical text that is hashed (exported for audit records and tests). */
export function canonicalApprovalBinding(binding: ApprovalBinding): string {
  const b = binding as Partial<ApprovalBinding> | undefined;
  if (b === null || typeof b !== 'object') throw new ApprovalKeyError('approval binding must be an object');
  const digest = nonEmpty(b.capabilitySnapshot, 'capabilitySnapshot');
  if (!DIGEST.test(digest)) throw new ApprovalKeyError('approval binding field capabilitySnapshot must be a CapabilitySnapshot digest (64 lowercase hex)');
  const principal = nonEmpty(b.principal, 'principal');
  const session = nonEmpty(b.session, 'session');
  const coreRevision = nonEmpty(b.coreRevision, 'coreRevision');
  const policy = parseApprovalPolicy(b.policy, 'approval binding field policy');
  const ref = nonEmpty(b.effect?.ref, 'effect.ref');
  const name = nonEmpty(b.effect?.name, 'effect.name');
  const kind = nonEmpty(b.action?.kind, 'action.kind');
  const target = b.action?.target === undefined ? missingTarget() : b.action.target;
  // canonicalJson({v, principal, session, coreRevision, capabilitySnapshot, policy, effect, action})
  // written out with its keys in sorted order (every effect pays for this key; a test checks the
  // text against canonicalJson of the object): strings as JSON.stringify writes them.
  const j = JSON.stringify;
  let targetJson: string;
  try {
    targetJson = canonicalJson(target);
  } catch {
    // Again in place, so the error names the field's whole path ($.action.target...).
    canonicalJson({ action: { target } });
    throw new ApprovalKeyError('approval binding field action.target is not canonical JSON');
  }
  return (
    `${KEY_VERSION}\n{"action":{"kind":${j(kind)},"target":${targetJson}},"capabilitySnapshot":${j(digest)},"coreRevision":${j(coreRevision)},` +
    `"effect":{"name":${j(name)},"ref":${j(ref)}},"policy":${j(policy)},"principal":${j(principal)},"session":${j(session)},"v":1}`
  );
}

/** The same text built the general way (for the test that pins the two together). */
export function canonicalApprovalBindingGeneric(binding: ApprovalBinding): string {
  return `${KEY_VERSION}\n${canonicalJson({
    v: 1,
    principal: binding.principal,
    session: binding.session,
    coreRevision: binding.coreRevision,
    capabilitySnapshot: binding.capabilitySnapshot,
    policy: binding.policy,
    effect: { ref: binding.effect.ref, name: binding.effect.name },
    action: { kind: binding.action.kind, target: binding.action.target },
  })}`;
}

function missingTarget(): never {
  throw new ApprovalKeyError('approval binding field action.target is required (use null only if the action really has no target)');
}

export function approvalKey(binding: ApprovalBinding): ApprovalKey {
  const canonical = canonicalApprovalBinding(binding);
  const id = `ak1:${createHash('sha256').update(canonical, 'utf8').digest('hex')}`;
  return Object.freeze({ id, principal: binding.principal, session: binding.session, coreRevision: binding.coreRevision, policy: binding.policy });
}

// Shapes for the actions the seeds name, so every caller binds the same fields.

/** terminal: the exact command line and the actual cwd (plus env overlay keys, if any). */
export function terminalExecAction(command: string, cwd: string, envKeys: readonly string[] = []): ApprovalAction {
  return { kind: 'terminal.exec', target: { command, cwd, envKeys: [...envKeys].sort() } };
}

/** An MCP tool call: server + tool. */
export function mcpCallAction(server: string, tool: string): ApprovalAction {
  return { kind: 'mcp.call', target: { server, tool } };
}

/** MCP connect/discovery: server + the declaration fingerprint (a changed declaration needs reapproval). */
export function mcpConnectAction(server: string, declarationFingerprint: string): ApprovalAction {
  return { kind: 'mcp.connect', target: { server, declaration: declarationFingerprint } };
}

/** evolve_core: the action (start/review/promote/discard) is part of the kind, the run is the target. */
export function evolveCoreAction(action: string, runId: string | null): ApprovalAction {
  return { kind: `evolve_core.${action}`, target: { run: runId } };
}
