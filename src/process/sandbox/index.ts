export { sandboxCommand } from './sandbox-command.js';
export { sandboxAvailability, type SandboxAvailability } from './availability.js';
export { SandboxSpecError, SandboxUnavailableError, type SandboxSpecErrorCode } from './errors.js';
export { seatbeltProfile, type SeatbeltProfile } from './seatbelt.js';
export { hiddenRootShown, homeRoots, validateSpec, type SandboxSpec, type SandboxedCommand, type ValidatedSpec, type HostLayout } from './spec.js';
