// Admission of effects under a per-tick budget: a burst of calls (a client or an external runtime
// issuing hundreds at once) must not run the synchronous steps of all of them in one macrotask.
// The first calls of a turn of the event loop run at once until ADMISSION_BUDGET_MS of it is
// used; the rest queue, first come first served, and are let in one per turn after that, so
// timers, I/O and other trees' signals and deadlines are served in between.
import { performance } from 'node:perf_hooks';

/** Synchronous time per turn of the event loop that new calls may use before they queue. */
export const ADMISSION_BUDGET_MS = 8;

let sliceStart = -1;
let pumping = false;
const waiting: (() => void)[] = [];

const endSlice = (): void => {
  sliceStart = -1;
};

/** Null: run now (no await, so an ordinary call keeps its ordering); else resolves on a later turn. */
export function admit(): Promise<void> | null {
  if (waiting.length === 0) {
    const now = performance.now();
    if (sliceStart < 0) {
      sliceStart = now;
      setImmediate(endSlice);
      return null;
    }
    if (now - sliceStart < ADMISSION_BUDGET_MS) return null;
  }
  return new Promise<void>((resolve) => {
    waiting.push(resolve);
    pump();
  });
}

function pump(): void {
  if (pumping) return;
  pumping = true;
  setImmediate(() => {
    pumping = false;
    // This turn belongs to the call let in now (its steps run in the microtasks after this callback).
    sliceStart = performance.now();
    setImmediate(endSlice);
    waiting.shift()?.();
    if (waiting.length > 0) pump();
  });
}
