// A counting semaphore for server operations (connect, tools/list): one per connection manager,
// shared by every session, so a burst of sessions cannot start more than `limit` servers at once.
export class Semaphore {
  private active = 0;
  private highest = 0;
  private readonly waiting: (() => void)[] = [];

  constructor(readonly limit: number) {
    if (!Number.isInteger(limit) || limit < 1) throw new RangeError(`semaphore limit must be a positive integer, got ${limit}`);
  }

  /** The most operations that ever held a slot at the same time. */
  get highWater(): number {
    return this.highest;
  }

  get inUse(): number {
    return this.active;
  }

  async run<T>(op: () => Promise<T>): Promise<T> {
    if (this.active >= this.limit) await new Promise<void>((resolve) => this.waiting.push(resolve));
    else this.active++;
    this.highest = Math.max(this.highest, this.active);
    try {
      return await op();
    } finally {
      const next = this.waiting.shift();
      // Hand the slot over directly: `active` stays the same, nobody can slip in between.
      if (next) next();
      else this.active--;
    }
  }
}
