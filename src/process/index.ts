export { ProcessSupervisor, type ProcessSupervisorOptions, type ReconcileReport, type ReconciledTree } from './supervisor.js';
export { SPAWN_ID_ENV } from './supervised-tree.js';
export { SpawnError } from './errors.js';
export type * from './types.js';
export type { ProcessPlatform, PlatformCapabilities } from './platform.js';
export {
  sandboxCommand,
  sandboxAvailability,
  hiddenRootShown,
  homeRoots,
  SandboxSpecError,
  SandboxUnavailableError,
  type SandboxAvailability,
  type SandboxSpec,
  type SandboxedCommand,
  type SandboxSpecErrorCode,
} from './sandbox/index.js';
export { CleanupStack } from './cleanup-stack.js';
export { observeTrees, type ObservedProcess, type RecordedTree } from './tree-observer.js';
export type { ProcessUsage } from './platform.js';
export { ownProcessIdentity, type OwnProcessIdentity } from './own-identity.js';
