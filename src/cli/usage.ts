// Usage errors name the flag and the fix; they exit with status 2.
export class UsageError extends Error {
  readonly code = 'USAGE';
  constructor(message: string, options?: { cause?: unknown }) {
    super(message, options);
    this.name = 'UsageError';
  }
}

/** Parses "2", "2s", "1.5", "500ms", "1m" into milliseconds. */
export function parseDuration(flag: string, value: string | undefined): number {
  if (value === undefined) throw new UsageError(`${flag} needs a value, e.g. ${flag} 30 (seconds) or ${flag} 500ms`);
  const m = /^(\d+(?:\.\d+)?)(ms|s|m)?$/.exec(value.trim());
  if (!m) throw new UsageError(`${flag} ${JSON.stringify(value)} is not a duration; use seconds (30, 1.5, 30s), milliseconds (500ms) or minutes (2m)`);
  const n = Number(m[1]);
  const unit = m[2] ?? 's';
  const ms = unit === 'ms' ? n : unit === 'm' ? n * 60_000 : n * 1000;
  if (!Number.isFinite(ms) || ms > 7 * 24 * 3600_000) throw new UsageError(`${flag} ${value} is out of range (at most 7 days)`);
  return Math.round(ms);
}
