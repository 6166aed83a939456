// How long the event loop could have been held while `work` ran.
// - cpuMs: the CPU time this process spent meanwhile (every thread). A synchronous stall (a
//   backtracking regex) is CPU time on the loop's thread, so it can never hold the loop longer
//   than this, and a busy machine does not inflate it: the bound the tests assert.
// - maxLagMs: a 5 ms timer's longest gap between ticks. It includes the time the machine left
//   this process descheduled, so it is printed for the record, not asserted in the parallel group.
export async function withLoopLag<T>(work: () => Promise<T>): Promise<{ value: T; maxLagMs: number; cpuMs: number }> {
  let last = performance.now();
  let maxGap = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 5);
  const cpu0 = process.cpuUsage();
  try {
    const value = await work();
    maxGap = Math.max(maxGap, performance.now() - last);
    const cpu = process.cpuUsage(cpu0);
    return { value, maxLagMs: maxGap, cpuMs: (cpu.user + cpu.system) / 1000 };
  } finally {
    clearInterval(tick);
  }
}

/** The assertion message of a bound on `cpuMs`, with the loop's lag for the record. */
export function stallReport(r: { maxLagMs: number; cpuMs: number }): string {
  return `the call used ${r.cpuMs.toFixed(0)} ms of CPU (the event loop's longest gap, load included: ${r.maxLagMs.toFixed(0)} ms)`;
}
