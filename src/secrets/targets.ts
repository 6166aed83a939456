// Binding targets: the written list lives in core/secrets-schema.ts (the loader refuses a bad
// target at load time, and core sits below this layer); the binding step checks it again.
export { FORBIDDEN_TARGETS, forbiddenTargetReason, type ForbiddenTargetFamily } from '../core/secrets-schema.js';
