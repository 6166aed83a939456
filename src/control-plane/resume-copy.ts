// A session of another machine, taken over by a run here (decision 129): its newest copy on the
// control plane, checked before anything of it is trusted, since its messages become the history a
// model reads. A machine that died leaves its session interrupted there, and the run that resumes
// it elsewhere starts from what was copied before it stopped.
import { parseCanonicalJson } from '../store/canonical-json.js';
import { anchoredLinkBreak } from './chain-shipper.js';
import { readChainEvents, verifyControlPlaneChain } from './chain.js';
import type { ControlPlanePool } from './connect.js';
import { readCopiedMessages, verifyCopiedMessages } from './transcripts.js';

/** What the copy's run recorded when it made its session (its core, its host); {} when unreadable. */
function createdPayload(text: string | null): Record<string, unknown> {
  const parsed = text === null ? null : parseCanonicalJson(text);
  return parsed?.ok && parsed.value !== null && typeof parsed.value === 'object' && !Array.isArray(parsed.value) ? (parsed.value as Record<string, unknown>) : {};
}

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
  const r = await q.query<{ id: string; status: string; payload: string | null }>(
    `SELECT s.id, s.status, e.payload FROM sessions s
       LEFT JOIN LATERAL (SELECT payload FROM runtime_events WHERE session_id = s.id AND seq = 1
                          UNION ALL SELECT payload FROM runtime_events_archive WHERE session_id = s.id AND seq = 1 LIMIT 1) e ON true
      WHERE s.principal = $1 AND (s.id = $2 OR split_part(s.id, '@', 1) = $3) ORDER BY s.created_at DESC, s.id DESC LIMIT 1`,
    [principal, id, local],
  );
  const row = r.rows[0];
  if (!row) return undefined;
  if (row.status === 'running') return { refused: `session ${local} is running on another machine (${row.id}); cancel it there first (supervisor cancel ${row.id} --store …) or wait for it to end` };
  const chain = await verifyControlPlaneChain(q, row.id);
  if (!chain.ok) return { refused: `its copy ${row.id} on the control plane does not verify (event ${chain.seq}, ${chain.field}: ${chain.detail}); see supervisor audit verify --store … --session ${local}` };
  const links = anchoredLinkBreak(await readChainEvents(q, row.id, 0, Number.MAX_SAFE_INTEGER));
  if (links.breakAt !== null) return { refused: `its copy ${row.id} is not its host's chain at local seq ${links.breakAt} (${links.why}); see supervisor audit verify --store … --session ${local}` };
  const transcript = await verifyCopiedMessages(q, row.id);
  if (transcript.differsAt !== null) return { refused: `its copied message seq ${transcript.differsAt} is not what its chain vouches for (${transcript.why}); see supervisor audit verify --store … --session ${local}` };
  const copied = (await readCopiedMessages(q, principal, row.id, 0, 10_000)) ?? [];
  let n = 0;
  while (n < copied.length && copied[n]!.seq === n + 1) n++;
  const vouched = await q.query<{ n: number }>(
    `SELECT count(*)::int AS n FROM (SELECT kind FROM runtime_events WHERE session_id = $1 UNION ALL SELECT kind FROM runtime_events_archive WHERE session_id = $1) e WHERE kind = 'message.added'`,
    [row.id],
  );
  return {
    sessionId: row.id,
    localSession: local,
    status: row.status,
    created: createdPayload(row.payload),
    head: chain.head,
    messages: copied.slice(0, n).map((m) => ({ role: m.role, content: m.content })),
    notCopied: Math.max(0, vouched.rows[0]!.n - n),
  };
}
