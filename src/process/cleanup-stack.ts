// One cleanup path for what a component opened: each resource registers its own close as it is
// opened, and a failed construction and a normal close both unwind the same stack, newest first.
// (Node 20 has no AsyncDisposableStack.)

export class CleanupStack {
  private readonly closers: Array<() => unknown> = [];
  private unwinding: Promise<void> | null = null;

  /** Registers how to close what was just opened; it runs before everything registered earlier. */
  defer(close: () => unknown): void {
    if (this.unwinding) throw new Error('CleanupStack: defer() after unwind()');
    this.closers.push(close);
  }

  /**
   * Runs every close, newest first, each even when an earlier one threw; rejects with the first
   * error once all have run. Later calls return the same promise.
   */
  unwind(): Promise<void> {
    this.unwinding ??= (async () => {
      let failed: { err: unknown } | null = null;
      for (const close of this.closers.splice(0).reverse()) {
        try {
          await close();
        } catch (err) {
          failed ??= { err };
        }
      }
      if (failed) throw failed.err;
    })();
    return this.unwinding;
  }
}

/**
 * The same for what must be closed synchronously (a constructor that throws): newest first, each
 * even when an earlier one threw; throws the first error once all have run. A second unwind()
 * finds nothing left to close.
 */
export class SyncCleanupStack {
  private readonly closers: Array<() => void> = [];
  private unwound = false;

  defer(close: () => void): void {
    if (this.unwound) throw new Error('SyncCleanupStack: defer() after unwind()');
    this.closers.push(close);
  }

  unwind(): void {
    this.unwound = true;
    let failed: { err: unknown } | null = null;
    for (const close of this.closers.splice(0).reverse()) {
      try {
        close();
      } catch (err) {
        failed ??= { err };
      }
    }
    if (failed) throw failed.err;
  }
}
