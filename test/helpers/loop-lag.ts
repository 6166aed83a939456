// How long the event loop was held while `work` ran: a 5 ms timer's longest gap between ticks.
// A synchronous stall (a backtracking regex) shows up as one long gap, even if no tick fired.
export async function withLoopLag<T>(work: () => Promise<T>): Promise<{ value: T; maxLagMs: number }> {
  let last = performance.now();
  let maxGap = 0;
  const tick = setInterval(() => {
    const now = performance.now();
    maxGap = Math.max(maxGap, now - last);
    last = now;
  }, 5);
  try {
    const value = await work();
    maxGap = Math.max(maxGap, performance.now() - last);
    return { value, maxLagMs: maxGap };
  } finally {
    clearInterval(tick);
  }
}
