export { AuditCommitError, EffectRuntime, type EffectRuntimeOptions } from './effect-runtime.js';
export type * from './types.js';
export { MODEL_CONTENT_MAX, REDACTION_FAILED_VIEWS, redactDeep, textRedactor, type TextRedactor } from './views.js';
