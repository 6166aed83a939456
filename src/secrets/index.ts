// The secrets layer's public surface: the store, one-shot bindings, exact secret grants and the
// forbidden binding targets. Values leave only through SecretValue.bytes(), SecretEnvOverlay.apply(),
// values() and knownValues(); everything else prints names.
export { SecretError, type SecretErrorCode } from './errors.js';
export { SecretValue } from './secret-value.js';
export { SecretStore, type SecretStoreOptions } from './secret-store.js';
export { EnvSecretSource, FileSecretSource, KeychainSecretSource, MAX_SECRET_BYTES, resolveSecretPath, sourceFor, type SecretSource, type SourceContext } from './sources.js';
export { bindSecrets, SecretEnvOverlay, type BindSecretsOptions, type SecretBindingMetadata, type SecretBindingRequest, type SecretBindingSet } from './bindings.js';
export { exactSecretGrants, secretCapability, type SecretGrantCheck } from './grants.js';
export { FORBIDDEN_TARGETS, forbiddenTargetReason, type ForbiddenTargetFamily } from './targets.js';
