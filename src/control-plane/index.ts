// The PostgreSQL control plane (issue 21, first slice): members with heartbeats, leases with
// fencing epochs, a SKIP LOCKED work queue with rescue counters, and the per-session audit chain.
// It sits beside store/ (it reuses the chain's hashing and verifier) and below process/: the
// member's identity and what to do when it fences itself are passed in.
export { openPool, checkUrl, redactUrl, inTransaction, type ControlPlanePool, type PoolOptions } from './connect.js';
export { ControlPlaneError, OwnershipLostError, MemberFencedError } from './errors.js';
export { migrateControlPlane, CONTROL_PLANE_MIGRATIONS, type ControlPlaneMigration } from './migrations.js';
export { ControlPlaneMember, MAX_LEASE_MS, type MemberIdentity, type MemberOptions } from './member.js';
export { fenceRow, fencedUpdate, reclaimExpiredMembers, type Lease, type OwnedTable, type ReclaimedMember, type ReclaimedTask } from './leases.js';
export { appendChainEvents, verifyControlPlaneChain, controlPlaneSessionIds, readChainEvents, principalSessionIds, type NewChainEvent } from './chain.js';
export { createOwnedSession, createSharedSession, appendAsOwner, endOwnedSession, listSessions, getListedSession, requestSessionCancel, CANCEL_CHANNEL, type ListedSession } from './sessions.js';
export { enqueueTask, claimTask, recordTaskEvent, finishTask, listTasks, DEFAULT_MAX_RESCUES, type NewQueuedTask, type ClaimedTask, type ListedTask } from './work-queue.js';
export { requestApproval, getApproval, listPendingApprovals, answerApproval, closeApproval, APPROVAL_CHANNEL, type ControlPlaneApproval, type ControlPlaneApprovalStatus, type NewApproval } from './approvals.js';
export { ControlPlaneListener, LISTENER_APPLICATION_NAME, type ListenerOptions } from './listener.js';
export { archiveFinished, type ArchiveOptions, type Archived } from './archive.js';
export { ChainShipper, anchoredPayloadJson, type AnchoredPayload, type ChainShipperOptions, type LocalChainReader } from './chain-shipper.js';
export { checkCopies, type AnchorRow, type AnchorLinkCheck, type CopyCheck, type TranscriptCheck } from './copy-check.js';
export { changeFeedHead, changeFeedContinuousAfter, changesAfter } from './operator-changes.js';
export { holdRunTask, requestTaskCancel, type RunTask } from './run-tasks.js';
export { RunTaskMirror, type LocalTask, type RunTaskMirrorOptions } from './run-task-mirror.js';
export { copyMessages, copyTaskLogs, readCopiedMessages, readCopiedTaskLogs, type CopiedMessage } from './transcripts.js';
export { messageSearchDocuments, searchCopiedMessages } from './message-search.js';
export { resumableCopy, type ResumableCopy } from './resume-copy.js';
