// One-shot bindings: after approval, for one effect, each requested secret is checked (grant,
// target, expiry), resolved, and handed over as an environment overlay that can be applied once.
// Every check runs before any value is read, so a refused binding reads nothing.
import { inspect } from 'node:util';
import type { SecretBindingDecl } from '../core/secrets-schema.js';
import { SecretError } from './errors.js';
import { exactSecretGrants, secretCapability, type SecretGrantCheck } from './grants.js';
import type { SecretStore } from './secret-store.js';
import type { SecretSource } from './sources.js';
import type { SecretValue } from './secret-value.js';
import { forbiddenTargetReason } from './targets.js';

/** A binding as agent.yaml declares it (tools.terminal.secrets[i]), or as a caller builds one. */
export type SecretBindingRequest = Readonly<SecretBindingDecl>;

export interface BindSecretsOptions {
  /** Exact grant check for `secret:NAME`; a list of granted capability strings is matched exactly. */
  readonly grants: SecretGrantCheck | readonly string[];
  /** Epoch milliseconds; defaults to Date.now(). */
  readonly now?: number;
  /** A background task: bindings are refused (their expiry and redaction cannot follow the task). */
  readonly background?: boolean;
  readonly platform?: NodeJS.Platform;
}

/** What the audit view records for one binding: never the value. */
export interface SecretBindingMetadata {
  readonly secret: string;
  readonly target: string;
  readonly source: SecretSource['kind'];
  /** ISO time at which the binding ends (the process holding it is stopped by then). */
  readonly expiresAt: string;
}

export interface SecretBindingSet {
  readonly overlay: SecretEnvOverlay;
  /** Epoch ms of the earliest binding expiry (clamps the effect's timeout); null with no bindings. */
  readonly deadline: number | null;
  readonly metadata: readonly SecretBindingMetadata[];
  /** Copies of the bound values, for the redactor of this effect's output. */
  values(): Buffer[];
}

export async function bindSecrets(store: SecretStore, bindings: readonly SecretBindingRequest[], opts: BindSecretsOptions): Promise<SecretBindingSet> {
  const now = opts.now ?? Date.now();
  const granted = typeof opts.grants === 'function' ? opts.grants : exactSecretGrants(opts.grants);
  const platform = opts.platform ?? process.platform;
  if (bindings.length === 0) return freezeSet(new SecretEnvOverlay([], null, platform), null, []);
  if (opts.background === true) {
    throw new SecretError(
      'secret.background_refused',
      `background tasks cannot take secret bindings (${bindings.map((b) => b.secret).join(', ')}): a task outlives its effect, so the binding's expiry and the output redaction could not follow it; run the command in the foreground or remove the binding`,
    );
  }

  const planned: { b: SecretBindingRequest; expiresAt: number }[] = [];
  const targets = new Map<string, string>();
  for (const b of bindings) {
    const where = { secret: b.secret, target: b.env };
    const why = forbiddenTargetReason(b.env);
    if (why !== null) throw new SecretError('secret.forbidden_target', `secret ${b.secret} cannot be bound to '${clip(b.env)}': it ${why}; bind it to a variable the program reads as a credential, e.g. GH_TOKEN`, where);
    // Windows folds case, so GH_TOKEN and gh_token would be one variable there.
    const key = b.env.toUpperCase();
    const prior = targets.get(key);
    if (prior !== undefined) throw new SecretError('secret.duplicate_target', `target ${b.env} is bound twice (to ${prior} and ${b.secret}; names compare case-insensitively); bind each variable once`, where);
    targets.set(key, b.secret);
    // The grant is checked before existence, so an ungranted caller cannot probe which secrets exist.
    if (!grantedSafely(granted, b.secret)) {
      throw new SecretError('secret.not_granted', `secret ${b.secret} is not granted; add the exact grant 'secret:${b.secret}' (wildcards never grant a secret)`, where);
    }
    if (!store.has(b.secret)) throw new SecretError('secret.unknown', `secret ${b.secret} is not declared; declare it under secrets: in agent.yaml`, where);
    planned.push({ b, expiresAt: expiryOf(b, now, where) });
  }

  const resolved: { b: SecretBindingRequest; value: SecretValue; expiresAt: number }[] = [];
  try {
    for (const p of planned) {
      const value = await store.resolve(p.b.secret);
      resolved.push({ ...p, value });
      checkEnvSafe(value, p.b);
    }
  } catch (err) {
    for (const r of resolved) r.value.wipe();
    throw err;
  }
  const deadline = Math.min(...resolved.map((r) => r.expiresAt));
  const metadata = resolved.map((r) =>
    Object.freeze({ secret: r.b.secret, target: r.b.env, source: store.describe(r.b.secret)?.kind ?? 'env', expiresAt: new Date(r.expiresAt).toISOString() }),
  );
  const overlay = new SecretEnvOverlay(resolved.map((r) => ({ target: r.b.env, value: r.value })), deadline, platform);
  return freezeSet(overlay, deadline, metadata);
}

/** A predicate that throws (a malformed name given to a strict parser) counts as "not granted". */
function grantedSafely(granted: SecretGrantCheck, name: string): boolean {
  try {
    return granted(secretCapability(name)) === true;
  } catch {
    return false;
  }
}

function expiryOf(b: SecretBindingRequest, now: number, where: { secret: string; target: string }): number {
  let end = Number.POSITIVE_INFINITY;
  if (b.ttl_ms !== null) {
    if (!Number.isFinite(b.ttl_ms) || b.ttl_ms <= 0) throw new SecretError('secret.expired', `binding of ${b.secret} has a ttl of ${String(b.ttl_ms)} ms, which ends before it starts; give a positive ttl`, where);
    end = now + b.ttl_ms;
  }
  if (b.expires_at !== null) {
    const t = Date.parse(b.expires_at);
    if (!Number.isFinite(t)) throw new SecretError('secret.expired', `binding of ${b.secret} has an unreadable expiry; write expires as an ISO time with a zone`, where);
    if (t <= now) throw new SecretError('secret.expired', `binding of ${b.secret} to ${b.env} expired at ${new Date(t).toISOString()}; renew it in agent.yaml (expires) if it is still meant to be used`, where);
    end = Math.min(end, t);
  }
  if (end === Number.POSITIVE_INFINITY) throw new SecretError('secret.expired', `binding of ${b.secret} has no expiry; add ttl or expires`, where);
  return end;
}

const utf8 = new TextDecoder('utf-8', { fatal: true });

/** An env value is a NUL-free string; Node's spawn error for a bad one would quote the value. */
function checkEnvSafe(value: SecretValue, b: SecretBindingRequest): void {
  const bytes = value.bytes();
  try {
    const where = { secret: b.secret, target: b.env };
    if (bytes.includes(0)) throw new SecretError('secret.source_failed', `secret ${b.secret} holds a NUL byte, which an environment variable cannot carry; store the credential as text`, where);
    try {
      utf8.decode(bytes);
    } catch {
      throw new SecretError('secret.source_failed', `secret ${b.secret} is not valid UTF-8 text, so it cannot be an environment variable; store it encoded (e.g. base64)`, where);
    }
  } finally {
    bytes.fill(0);
  }
}

function freezeSet(overlay: SecretEnvOverlay, deadline: number | null, metadata: readonly SecretBindingMetadata[]): SecretBindingSet {
  const set: SecretBindingSet = {
    overlay,
    deadline,
    metadata: Object.freeze([...metadata]),
    values: () => overlay.values(),
  };
  Object.defineProperty(set, inspect.custom, { value: () => `SecretBindingSet { targets: [${overlay.targets.join(', ')}], deadline: ${deadline === null ? 'none' : new Date(deadline).toISOString()} }` });
  return Object.freeze(set);
}

/**
 * The environment variables of one binding set. It can be applied once: a binding is for one
 * effect, and applying after the deadline is refused. JSON and util.inspect show targets only.
 */
export class SecretEnvOverlay {
  readonly targets: readonly string[];
  readonly #entries: readonly { target: string; value: SecretValue }[];
  readonly #deadline: number | null;
  readonly #platform: NodeJS.Platform;
  #used = false;

  constructor(entries: readonly { target: string; value: SecretValue }[], deadline: number | null, platform: NodeJS.Platform) {
    this.#entries = entries;
    this.#deadline = deadline;
    this.#platform = platform;
    this.targets = Object.freeze(entries.map((e) => e.target));
  }

  /**
   * A new environment: `base` plus the bound variables (on Windows, a case variant of a target in
   * `base` is dropped, since it names the same variable). Throws secret.expired when the deadline
   * passed or the overlay was applied before.
   */
  apply(base: Readonly<Record<string, string>>, now = Date.now()): Record<string, string> {
    if (this.#used) throw new SecretError('secret.expired', 'these secret bindings were already applied to one effect; bindings are one-shot, bind again for the next effect');
    if (this.#deadline !== null && now >= this.#deadline) {
      throw new SecretError('secret.expired', `these secret bindings expired at ${new Date(this.#deadline).toISOString()} before they were applied; bind again`);
    }
    this.#used = true;
    const upper = new Set(this.targets.map((t) => t.toUpperCase()));
    const targets = new Set(this.targets);
    // Built from entries (own data properties), never by assignment: a "__proto__" key, in the base
    // (parsed JSON has it as an own key) or as a target, stays a variable; assigned, it would be
    // dropped or become the environment's prototype, whose keys a spawn would then inherit.
    const pairs: [string, string][] = Object.entries(base).filter(([k]) => !targets.has(k) && !(this.#platform === 'win32' && upper.has(k.toUpperCase())));
    for (const e of this.#entries) {
      const bytes = e.value.bytes();
      pairs.push([e.target, bytes.toString('utf8')]);
      bytes.fill(0);
    }
    return Object.fromEntries(pairs);
  }

  /** Copies of the bound values, for the redactor. */
  values(): Buffer[] {
    return this.#entries.map((e) => e.value.bytes());
  }

  /** Zeroes the held bytes (strings already handed to a child's environment are not reached). */
  wipe(): void {
    for (const e of this.#entries) e.value.wipe();
  }

  toJSON(): { targets: readonly string[] } {
    return { targets: this.targets };
  }

  [inspect.custom](): string {
    return `SecretEnvOverlay { ${this.#entries.map((e) => `${e.target}: [secret ${e.value.name}]`).join(', ')} }`;
  }
}

function clip(s: string): string {
  return s.length > 70 ? `${s.slice(0, 67)}...` : s;
}
