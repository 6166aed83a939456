// Pool and recycling settings for tool hosts: agent.yaml `tool_hosts`, defaults filled in here.

export interface ToolHostConfig {
  /** Warm workers kept per tool and permission set. */
  poolSize: number;
  /** A worker is replaced after this many calls. */
  maxCallsPerWorker: number;
  /** V8 old-space limit (--max-old-space-size); a worker whose heap passes 3/4 of it is replaced. */
  heapMb: number;
  /** A worker whose resident set passes this is replaced after its call. */
  rssMb: number;
  /** Frame cap on the channel, both directions. */
  maxFrameBytes: number;
  /** Cap on a result's JSON. */
  maxResultBytes: number;
  /** How long a new worker may take to say hello. */
  startTimeoutMs: number;
  /** TERM→KILL grace when a worker is stopped; in the thread tier, also how long a cancelled thread may take to stop. */
  graceMs: number;
  /** Worker threads of the trusted tool host (thread tier). */
  threads: number;
}

export const DEFAULT_TOOL_HOST_CONFIG: Readonly<ToolHostConfig> = Object.freeze({
  poolSize: 2,
  // A fresh host runs cold (unoptimised) for its first few thousand calls, and starting one costs
  // ~50 ms of CPU; the heap, RSS and leak checks after every call already recycle a host that needs it.
  maxCallsPerWorker: 10_000,
  heapMb: 256,
  rssMb: 512,
  maxFrameBytes: 1024 * 1024,
  maxResultBytes: 256 * 1024,
  startTimeoutMs: 15_000,
  graceMs: 500,
  threads: 2,
});

/** agent.yaml's section (already validated by the core loader) over the defaults. */
export function toolHostConfig(section: { pool_size?: number; max_calls_per_worker?: number; heap_mb?: number; rss_mb?: number; threads?: number } | undefined, extra: Partial<ToolHostConfig> = {}): ToolHostConfig {
  const heapMb = section?.heap_mb ?? DEFAULT_TOOL_HOST_CONFIG.heapMb;
  return {
    ...DEFAULT_TOOL_HOST_CONFIG,
    poolSize: section?.pool_size ?? DEFAULT_TOOL_HOST_CONFIG.poolSize,
    maxCallsPerWorker: section?.max_calls_per_worker ?? DEFAULT_TOOL_HOST_CONFIG.maxCallsPerWorker,
    heapMb,
    threads: section?.threads ?? DEFAULT_TOOL_HOST_CONFIG.threads,
    rssMb: section?.rss_mb ?? Math.max(DEFAULT_TOOL_HOST_CONFIG.rssMb, heapMb * 2),
    ...extra,
  };
}
