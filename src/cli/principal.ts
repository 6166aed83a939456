// The local principal, in a module of its own: the operator commands need it without loading the
// session machinery core-session.ts brings in.
import { userInfo } from 'node:os';

export function localPrincipal(): string {
  return `local:${userInfo().username}`;
}
