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
