// What the classification answers: a command's kind and class, each part's verdict with the
// reason for it, and how a fragment of the command is quoted inside a reason.

export type CommandKind = 'read-only' | 'project-code' | 'other';

export type CommandClass = {
  kind: CommandKind;
  /** A short human sentence saying why; for 'other', the first part that failed. */
  reason: string;
  /** Each simple command as written (words joined by one space), for the audit view. */
  parts: string[];
};

export type Verdict = { kind: CommandKind; reason: string };

export const other = (reason: string): Verdict => ({ kind: 'other', reason });
export const readOnly = (reason: string): Verdict => ({ kind: 'read-only', reason });
export const projectCode = (reason: string): Verdict => ({ kind: 'project-code', reason });

/** Quotes a fragment for a reason string, cut short so a hostile command cannot flood the audit. */
export function show(s: string, max = 40): string {
  const cut = s.length > max ? `${s.slice(0, max)}…` : s;
  return `'${cut}'`;
}
