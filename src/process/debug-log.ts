// NODE_DEBUG=supervisor: one short line per lifecycle event of a supervised tree, on stderr,
// through Node's util.debuglog: `SUPERVISOR <own pid>: <event> <spawn id> pid=<leader> key=value…`.
// For whoever debugs a stuck kill with more than the store record. Lines carry the command's name
// at most, never its arguments nor any environment (either can hold a secret).
import { debuglog } from 'node:util';

/** Created once: debuglog reads NODE_DEBUG when the section is first used. */
const debug = debuglog('supervisor');

/** The section's logger itself (printf-style, formats only when enabled), for the supervisor's other layers. */
export const supervisorDebug = debug;

export type DebugFields = Readonly<Record<string, string | number | boolean | null | undefined>>;

/**
 * True when NODE_DEBUG names `supervisor`. Call sites check it before building a line's fields,
 * so a disabled log costs one property read.
 */
export function debugOn(): boolean {
  return debug.enabled;
}

/**
 * One event of tree `spawnId` whose leader is `pid` (`-` while it is not known yet). Fields that
 * are undefined are left out; a value with spaces, quotes or control characters is JSON-quoted.
 */
export function debugTree(event: string, spawnId: string, pid: number | undefined, fields?: DebugFields): void {
  if (!debug.enabled) return;
  let line = `${event} ${spawnId} pid=${pid !== undefined && pid > 0 ? pid : '-'}`;
  if (fields) {
    for (const k of Object.keys(fields)) {
      const v = fields[k];
      if (v !== undefined) line += ` ${k}=${logValue(v)}`;
    }
  }
  debug('%s', line);
}

/** At most `max` pids, then how many more: a fork storm's sweep stays one short line. */
export function pidList(members: Iterable<{ pid: number }>, max = 8): string {
  const pids: number[] = [];
  let more = 0;
  for (const m of members) {
    if (pids.length < max) pids.push(m.pid);
    else more++;
  }
  return pids.length === 0 ? '-' : `${pids.join(',')}${more > 0 ? `,+${more}` : ''}`;
}

/** The command's last path component only: short, and a path is not needed to grep for it. */
export function commandName(command: string): string {
  const i = Math.max(command.lastIndexOf('/'), command.lastIndexOf('\\'));
  return i >= 0 && i < command.length - 1 ? command.slice(i + 1) : command;
}

/** A field value as it is printed: bare, or quoted with control, format and bidi characters escaped. */
export function logValue(v: string | number | boolean | null): string {
  const s = String(v);
  if (s !== '' && !/[\s"\\=\p{Cc}\p{Cf}]/u.test(s)) return s;
  // Control, format and bidi characters as \uXXXX, so a name cannot forge or hide a line.
  return `"${s.replace(/[\s"\\\p{Cc}\p{Cf}]/gu, (c) => (c === ' ' ? c : `\\u${c.charCodeAt(0).toString(16).padStart(4, '0')}`))}"`;
}
