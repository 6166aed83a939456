// Step 8: one result, separate views. If building them fails, every view is one fixed failed
// result; raw adapter output is never the fallback.
import { RedactionPatterns, redactText } from '../redaction/index.js';
import type { EffectTrace } from './effect-trace.js';
import type { EffectErrorCode, EffectStep, EffectViews } from './types.js';

/** Model-facing content is bounded: the model sees the end of long output, with a note. */
export const MODEL_CONTENT_MAX = 16_000;

export const REDACTION_FAILED_VIEWS: EffectViews = Object.freeze({
  model: Object.freeze({ ok: false, content: 'The tool result could not be safely redacted and was withheld.' }),
  operator: Object.freeze({ status: 'failed', code: 'REDACTION_FAILED' }),
  event: Object.freeze({ status: 'failed', code: 'REDACTION_FAILED' }),
  durable: Object.freeze({ status: 'failed', code: 'REDACTION_FAILED' }),
  debug: Object.freeze({ status: 'failed', code: 'REDACTION_FAILED' }),
});

export function boundForModel(text: string): string {
  if (text.length <= MODEL_CONTENT_MAX) return text;
  return `[${text.length - MODEL_CONTENT_MAX} earlier characters omitted]\n${text.slice(-MODEL_CONTENT_MAX)}`;
}

/** Removes every secret (and its encoded forms) from text; identity when there are none. */
export type TextRedactor = (text: string) => string;

/** The redactor when there is no secret: views are built without walking them. */
export const NO_REDACTION: TextRedactor = (t) => t;

/** The redactor for a set of secret values; throws RedactionError if no safe redaction exists. */
export function textRedactor(secrets: readonly string[]): TextRedactor {
  const live = secrets.filter((s) => s.length > 0);
  if (live.length === 0) return NO_REDACTION;
  const patterns = RedactionPatterns.compile(live);
  return (t) => redactText(t, patterns);
}

/** Every string in a JSON-like value with every secret removed (keys included). */
export function redactDeep<T>(value: T, redact: TextRedactor): T {
  if (redact === NO_REDACTION) return value;
  const walk = (v: unknown): unknown => {
    if (typeof v === 'string') return redact(v);
    if (Array.isArray(v)) return v.map(walk);
    // fromEntries defines own properties: a "__proto__" key from a model's arguments stays a key
    // (assigning it would set the copy's prototype, and the store would refuse the object).
    if (v !== null && typeof v === 'object') return Object.fromEntries(Object.entries(v).map(([k, x]) => [redact(k), walk(x)]));
    return v;
  };
  return walk(value) as T;
}

function withBindings(c: EffectTrace): Record<string, unknown> {
  return c.bindings.length === 0 ? {} : { secret_bindings: c.bindings };
}

export function successViews(c: EffectTrace, out: { text: string; isError: boolean; detail: Readonly<Record<string, unknown>> }): EffectViews {
  const content = boundForModel(c.redact(out.text));
  const event = { call_id: c.callId, tool: c.tool, status: out.isError ? 'tool_error' : 'ok', duration_ms: c.durationMs };
  const durable = redactDeep(
    {
      ...event,
      capability: c.capability,
      policy: c.policy,
      approval: c.approval,
      summary: c.summary,
      audit: c.audit,
      ...withBindings(c),
      detail: out.detail,
    },
    c.redact,
  );
  return { model: { ok: !out.isError, content }, operator: { ...durable, output: content }, event, durable, debug: debugView(c, durable, content) };
}

export function errorViews(c: EffectTrace, code: EffectErrorCode, step: EffectStep, message: string): EffectViews {
  const safe = c.redact(message);
  const event = { call_id: c.callId, tool: c.tool, status: 'error', code, step, duration_ms: c.durationMs };
  const durable = redactDeep({ ...event, capability: c.capability, policy: c.policy, approval: c.approval, summary: c.summary, audit: c.audit, ...withBindings(c), message: safe }, c.redact);
  return { model: { ok: false, content: `${code}: ${safe}` }, operator: durable, event, durable, debug: debugView(c, durable, null) };
}

function debugView(c: EffectTrace, durable: Readonly<Record<string, unknown>>, output: string | null): Record<string, unknown> {
  return { ...durable, approval_key: c.approvalKey, deadline_ms: c.deadlineMs, output };
}
