export { StreamRedactor, type StreamRedactorOptions } from './stream-redactor.js';
export { RedactionPatterns, type RedactionOptions } from './patterns.js';
export { redactText } from './redact-text.js';
export { chooseMarker } from './marker.js';
export { secretForms, FORM_FLOOR, type SecretFormKind } from './secret-forms.js';
export { RedactionError, type RedactionErrorCode } from './errors.js';
export { MAX_TABLE_BYTES } from './automaton.js';
export { displayText, displayPreview, displayJson, type DisplayOptions } from './display-text.js';
