// The secrets a session has resolved so far, as one growing set with a version. Streams that are
// already running (background tasks, long foreground trees) read it before every chunk, so a secret
// resolved after they started is redacted from their next bytes on (docs/security-model.md).
// Leaf module: imports nothing from src/.

/** What a live stream redactor reads: the values now, and a version that changes when they grow. */
export interface LiveRedaction {
  readonly version: number;
  values(): readonly string[];
}

/** A fixed list (compiled once) or a live set (recompiled when its version changes). */
export type RedactionSource = readonly string[] | LiveRedaction;

export function isLiveRedaction(source: RedactionSource | undefined): source is LiveRedaction {
  return source !== undefined && !Array.isArray(source) && typeof (source as LiveRedaction).values === 'function';
}

/** The session's set: values are only ever added (a rotated secret's old value stays redacted). */
export class RedactionSet implements LiveRedaction {
  #values: string[] = [];
  readonly #seen = new Set<string>();
  #version = 0;

  constructor(initial: Iterable<string> = []) {
    this.add(initial);
  }

  get version(): number {
    return this.#version;
  }

  /** The values in the order they were first added (stable, so compiled sets are shared). */
  values(): readonly string[] {
    return this.#values;
  }

  /** Adds values; the version changes only when one of them is new and non-empty. */
  add(values: Iterable<string>): void {
    let grew = false;
    for (const v of values) {
      if (v.length === 0 || this.#seen.has(v)) continue;
      this.#seen.add(v);
      grew = true;
    }
    if (!grew) return;
    this.#values = [...this.#seen];
    this.#version++;
  }

  /** A live view of this set plus fixed values of one stream (a run's bearer token, say). */
  withExtra(extra: readonly string[]): LiveRedaction {
    const set = this;
    return {
      get version() {
        return set.version;
      },
      values: () => [...extra.filter((v) => v.length > 0 && !this.#seen.has(v)), ...this.#values],
    };
  }
}
