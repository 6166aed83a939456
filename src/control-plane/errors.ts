// One error class per kind of control-plane failure, each with a stable `code` callers switch on.

export class ControlPlaneError extends Error {
  readonly code: string;
  constructor(code: string, message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'ControlPlaneError';
    this.code = code;
  }
}

/**
 * An owner write matched no row: the row's epoch moved on (it was reclaimed, or claimed again by
 * someone else), or this member's lease lapsed. The write did not happen; the caller must stop
 * working on the row (Temporal's ShardOwnershipLostError).
 */
export class OwnershipLostError extends ControlPlaneError {
  readonly table: string;
  readonly id: string;
  readonly epoch: number;
  constructor(table: string, id: string, epoch: number, memberId: string) {
    super('OWNERSHIP_LOST', `${table} row ${JSON.stringify(id)} is no longer owned by member ${memberId} at epoch ${epoch}: it was reclaimed or the member's lease lapsed; nothing was written`);
    this.name = 'OwnershipLostError';
    this.table = table;
    this.id = id;
    this.epoch = epoch;
  }
}

/** This member could not renew its lease in time and fenced itself: it writes nothing more. */
export class MemberFencedError extends ControlPlaneError {
  constructor(memberId: string, why: string) {
    super('MEMBER_FENCED', `member ${memberId} stopped writing: ${why}`);
    this.name = 'MemberFencedError';
  }
}

/** Whether a write failed because this member may not write there any more (moved, fenced, lapsed): the caller stops. */
export function lostOwnership(err: unknown): boolean {
  return err instanceof OwnershipLostError || err instanceof MemberFencedError || (err instanceof ControlPlaneError && err.code === 'MEMBER_LEASE_LAPSED');
}
