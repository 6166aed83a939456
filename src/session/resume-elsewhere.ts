// `run --resume <session> --store …` on a machine that does not hold the session (decision 129):
// the session another machine ran is taken over from its copy on the control plane, checked there
// before it is read (resume-copy.ts), and imported into this machine's store under the same id.
// Its messages become the history the model reads first, as a local resume's do.
import { SessionError } from './errors.js';
import type { SessionOwner, SessionStore } from '../store/index.js';
import type { CoreSnapshot } from '../core/index.js';

/** The copy to resume from, as the control plane gives it (already checked there). */
export interface SessionElsewhere {
  /** The copy's id there (`local@member`), and its chain head when it was read. */
  from: string;
  head: string | null;
  /** The core's name its run recorded (agent.yaml name:), when it did. */
  coreName: string | null;
  messages: readonly { role: string; content: unknown }[];
  /** Messages its chain vouches for that were never copied (its host stopped first). */
  notCopied: number;
}

/** Looks the session up on the control plane: the copy, why it cannot be resumed, or undefined (none of yours). */
export type ResumeElsewhere = (principal: string, id: string) => Promise<SessionElsewhere | { refused: string } | undefined>;

/**
 * Imports the checked copy as this store's session `id`, running and owned by this run; returns
 * it with its history. Refuses (exit 2 at the CLI) a copy the control plane refused, or one of
 * another core.
 */
export function importElsewhere(
  found: SessionElsewhere | { refused: string },
  c: { id: string; sessions: SessionStore; core: CoreSnapshot; principal: string; runtime: string; owner: SessionOwner; onNotice?: (text: string) => void },
): { id: string; history: unknown[] } {
  if ('refused' in found) throw new SessionError('RESUME_REFUSED', `session ${c.id} cannot be resumed here: ${found.refused}`);
  if (found.coreName !== null && found.coreName !== c.core.agent.name) {
    throw new SessionError('RESUME_REFUSED', `session ${c.id} ran the core named ${JSON.stringify(found.coreName)}, not ${JSON.stringify(c.core.agent.name)}; resume it with that core`);
  }
  const imported = c.sessions.importSession(
    { principal: c.principal },
    {
      id: c.id,
      coreDir: c.core.dir,
      coreRevision: c.core.revision,
      runtime: c.runtime,
      owner: c.owner,
      importedFrom: { session: found.from, head: found.head },
      messages: found.messages.map((m) => ({ role: m.role as never, content: m.content })),
    },
  );
  c.onNotice?.(
    `session ${c.id} resumed from its copy ${found.from} on the control plane: ${found.messages.length} message(s)` +
      (found.notCopied > 0 ? `; the last ${found.notCopied} it recorded were not copied before its machine stopped, and are not in this history` : ''),
  );
  return { id: imported.id, history: found.messages.map((m) => m.content) };
}
