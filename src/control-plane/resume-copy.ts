// A session of another machine, taken over by a run here (decision 129): its newest copy on the
// control plane, checked before anything of it is trusted, since its messages become the history a
// model reads. A machine that died leaves its session interrupted there, and the run that resumes
// it elsewhere starts from what was copied before it stopped.
import { verifyControlPlaneChain } from './chain.js';
import type { ControlPlanePool } from './connect.js';
import { checkCopies } from './copy-check.js';
import { newestCopyOf } from './sessions.js';
import { readCopiedMessages } from './transcripts.js';

/** A session's newest copy, as a run on another machine takes it over (decision 129). */
export interface ResumableCopy {
  /** The copy's control-plane id (`local@member`) and the local session id it copies. */
  sessionId: string;
  localSession: string;
  status: string;
  /** What its run recorded when it made the copy's session (its core, its host). */
  created: Record<string, unknown>;
  /** The copy's chain head when it was read. */
  head: string | null;
  /** Messages 1..n in order: the copy's unbroken prefix. */
  messages: { role: string; content: unknown }[];
  /** Messages its chain vouches for that were not copied (its host stopped first); 0: none. */
  notCopied: number;
}

/**
 * The principal's newest copy of session `id` (a local session id, or a copy's `local@member`),
 * checked before anything of it is trusted: its chain verifies, its copies still form the host's
 * chain, and every copied message is the one its chain event vouches for. `{ refused }` says why
 * it cannot be resumed (running still, or a copy that does not verify); undefined: none of yours.
 */
export async function resumableCopy(q: ControlPlanePool, principal: string, id: string): Promise<ResumableCopy | { refused: string } | undefined> {
  const local = id.split('@')[0]!;
  const row = await newestCopyOf(q, principal, id.includes('@') ? id : local);
  if (!row) return undefined;
  const see = `see supervisor audit verify --store … --session ${local}`;
  if (row.status === 'running') return { refused: `session ${local} is running on another machine (${row.id}); cancel it there first (supervisor cancel ${row.id} --store …) or wait for it to end` };
  const chain = await verifyControlPlaneChain(q, row.id);
  if (!chain.ok) return { refused: `its copy ${row.id} on the control plane does not verify (event ${chain.seq}, ${chain.field}: ${chain.detail}); ${see}` };
  const copies = await checkCopies(q, row.id);
  if (copies.links.breakAt !== null) return { refused: `its copy ${row.id} is not its host's chain at local seq ${copies.links.breakAt} (${copies.links.why}); ${see}` };
  if (copies.transcript.differsAt !== null) return { refused: `its copied message seq ${copies.transcript.differsAt} is not what its chain vouches for (${copies.transcript.why}); ${see}` };
  const copied = (await readCopiedMessages(q, principal, row.id, 0, 10_000)) ?? [];
  let n = 0;
  while (n < copied.length && copied[n]!.seq === n + 1) n++;
  return {
    sessionId: row.id,
    localSession: local,
    status: row.status,
    created: row.created,
    head: chain.head,
    messages: copied.slice(0, n).map((m) => ({ role: m.role, content: m.content })),
    notCopied: Math.max(0, copies.vouchedMessages - n),
  };
}
