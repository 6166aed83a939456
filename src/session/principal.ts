// The local principal, in a module of its own: the operator commands need it without loading the
// session machinery the rest of this folder brings in.
import { userInfo } from 'node:os';

/** The principal a session of this user on this machine runs as: `local:<username>`. */
export function localPrincipal(): string {
  return `local:${userInfo().username}`;
}
