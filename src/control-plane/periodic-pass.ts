// A pass that runs every interval and once more on stop, never two at once: what a run's copies to
// the control plane share (its chain, decision 124; its tasks, decision 126). A pass that is still
// running when the next tick comes is joined, not doubled; stop() waits for it and then runs the last.

export class PeriodicPass {
  private timer: NodeJS.Timeout | null = null;
  private inFlight: Promise<void> | null = null;

  constructor(
    private readonly pass: () => Promise<void>,
    private readonly intervalMs: number,
  ) {}

  start(): void {
    this.timer ??= setInterval(() => void this.run(), this.intervalMs);
    this.timer.unref();
  }

  /** Ends the interval and runs a last pass (what is left at the run's end). */
  async stop(): Promise<void> {
    if (this.timer) clearInterval(this.timer);
    this.timer = null;
    await this.inFlight;
    await this.run();
  }

  /** One pass now, or the one already running. */
  run(): Promise<void> {
    this.inFlight ??= this.pass().finally(() => {
      this.inFlight = null;
    });
    return this.inFlight;
  }
}
