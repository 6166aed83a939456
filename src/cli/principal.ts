// The local principal, in a module of its own (src/session/principal.ts): the operator commands
// need it without loading the session machinery core-session.ts brings in.
export { localPrincipal } from '../session/principal.js';
