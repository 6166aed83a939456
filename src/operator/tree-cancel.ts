// Cancelling one live process tree, for every operator front end (`supervisor cancel sp_…` at a
// terminal, the `supervisor web` page): one copy of the request (the store's principal check and
// compare-and-swap, src/store/spawn-records.ts) and of the words a refusal is given in. The tree is
// stopped by the supervisor that owns it, which polls for requests (src/process/supervisor.ts).
import { displayText } from '../redaction/index.js';
import { SpawnRecordStore, type Database, type PrincipalScope, type SpawnRecord, type TreeCancelRequest } from '../store/index.js';

/** The one spawn-id alphabet (decision 11): anything else is refused before the store is asked. */
export const SPAWN_ID = /^sp_[0-9a-f]{24}$/;

export type TreeCancelOutcome = TreeCancelRequest | { kind: 'malformed' };

/** Asks the owner of the principal's tree `spawnId` to stop it; `requestedBy` is kept for the audit record. */
export function requestTreeCancel(db: Database, scope: PrincipalScope, spawnId: string, requestedBy: string): TreeCancelOutcome {
  if (!SPAWN_ID.test(spawnId)) return { kind: 'malformed' };
  return new SpawnRecordStore(db).requestCancel(scope, spawnId, requestedBy);
}

/** The tree's state now (after a request, while waiting for its end). */
export function treeRecord(db: Database, spawnId: string): SpawnRecord | undefined {
  return new SpawnRecordStore(db).get(spawnId);
}

const when = (ms: number | null): string => (ms === null ? '' : ` at ${new Date(ms).toISOString().replace('T', ' ').slice(0, 19)} UTC`);

/** What an operator reads about the request: a sentence naming the tree and what happens next. */
export function treeCancelText(id: string, o: TreeCancelOutcome): string {
  const tree = displayText(id.slice(0, 64));
  switch (o.kind) {
    case 'malformed':
      return `${tree} is not a spawn id (sp_ and 24 hex digits; supervisor ps lists your trees)`;
    case 'not-found':
      return `no live process tree ${tree} of yours (supervisor ps lists your trees)`;
    case 'ended':
      return `tree ${tree} ended already (${displayText(o.record.status)}${when(o.record.endedAt)}); nothing to cancel`;
    case 'pending':
      return `tree ${tree}: a cancel was asked already by ${displayText(o.requestedBy)}; its run is stopping it`;
    case 'requested':
      return `asked the run (pid ${o.record.ownerPid}) that owns tree ${tree} to stop it`;
  }
}
