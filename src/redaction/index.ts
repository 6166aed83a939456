export { StreamRedactor, type StreamRedactorOptions } from './stream-redactor.js';
export { RedactionPatterns, type RedactionOptions } from './patterns.js';
export { redactText } from './redact-text.js';
export { chooseMarker } from './marker.js';
export { secretForms, FORM_FLOOR, type SecretFormKind } from './secret-forms.js';
export { RedactionError, type RedactionErrorCode } from './errors.js';
export { MAX_TABLE_BYTES } from './automaton.js';
export { LiveStreamRedactor, type ChunkRedactor } from './live-stream-redactor.js';
export { RedactionSet, isLiveRedaction, type LiveRedaction, type RedactionSource } from './redaction-set.js';
