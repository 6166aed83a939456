// The store's public surface for the layers above (effects, turns, cli). Spawn records are written
// by process/ only, which imports them directly; above it, only the principal-scoped read is used.
export { openStore, StoreError, type Database } from './database.js';
export { canonicalJson, parseCanonicalJson, CanonicalJsonError, MAX_CANONICAL_DEPTH, type JsonValue } from './canonical-json.js';
export {
  appendEvent,
  appendEvents,
  appendEventsGrouped,
  appendEventsDeferred,
  deferWrite,
  flushDeferredWrites,
  deferredWriteCount,
  chainHead,
  chainHashes,
  readEvents,
  readEventRows,
  genesisHash,
  eventHash,
  eventEnvelope,
  EVENT_KIND_PATTERN,
  MAX_EVENT_PAYLOAD_BYTES,
  type AppendedEvent,
  type StoredEvent,
  type ChainHead,
} from './event-chain.js';
export { verifyChain, verifyAllChains, auditedSessionIds, sessionKnown, type ChainVerification, type ChainBreakField } from './chain-verify.js';
export {
  SessionStore,
  MAX_MESSAGE_CONTENT_BYTES,
  type PrincipalScope,
  type SessionStatus,
  type EndStatus,
  type MessageRole,
  type ApprovalDecisionValue,
  type SessionRecord,
  type TurnRecord,
  type MessageRecord,
  type ApprovalRecord,
  type SessionStoreOptions,
  type SessionOwner,
  readStoredMessages,
  type StoredMessage,
} from './session-store.js';
export { SessionNotFoundError, TurnNotFoundError, SessionEndedError, StoreInputError, ChainInconsistentError } from './store-errors.js';
export { TaskStore, WriteScopeConflictError, type TaskRecord, type TaskStatus, type TaskStream, type TaskLogChunk, type NewTask } from './task-store.js';
export { PENDING_SUMMARY_MAX, PendingApprovalStore, type ListedApproval, type PendingApproval, type PendingStatus } from './pending-approvals.js';
export { SessionSearch, SearchQueryError, checkedSearch, type CheckedSearch, MAX_SEARCH_QUERY_CHARS, MAX_SEARCH_RESULTS, type SessionSearchHit, type SessionSearchQuery } from './session-search.js';
// The search language both engines share (decision 128): the control plane indexes and queries with these.
export {
  parseSearchQuery,
  searchTokens,
  searchableText,
  snippetOf,
  toFts5,
  toPartsQuery,
  toTsquery,
  tsvectorDocuments,
  MAX_QUERY_TOKENS,
  MAX_NEAR_DISTANCE,
  PART_OVERLAP_TOKENS,
  type PartsQuery,
  type Phrase,
  type SearchQuery,
} from './search-query.js';
export { reconcileDeadOwners, type OwnerAlive, type InterruptedSession, type OwnerReconcileReport } from './owner-reconcile.js';
export { ensurePrivateDir, ensurePrivateFile, writePrivateFile, withPrivateUmask, ALLOW_SHARED_STATE_DIR_ENV } from './private-files.js';
// Test-only (SUPERVISOR_FAULT_AT): the store's write path is where a run can be crashed at a chosen point.
export { faultPoint, FAULT_ENV } from './fault-injection.js';
export { OperatorChangeFeed, OPERATOR_CHANGES_KEPT, type OperatorChange, type OperatorChangeKind } from './operator-changes.js';
export { SpawnRecordStore, type OwnedSpawn, type PendingTreeCancel, type SpawnRecord, type SpawnStatus, type TreeCancelRequest } from './spawn-records.js';
