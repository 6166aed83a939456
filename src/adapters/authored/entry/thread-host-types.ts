// What the trusted tool host's main thread and its worker threads pass each other.
import type { CallMessage, FromHostMessage, SpawnedMessage } from '../../../ipc/index.js';

export interface ThreadWorkerData {
  maxResultBytes: number;
}

/** Main thread → a worker thread, on the worker's own port. */
export type ThreadTask = Pick<CallMessage, 'id' | 'tool' | 'input' | 'secrets'> & { type: 'call' };
export type ToThreadMessage = ThreadTask | { type: 'cancel'; id: string } | SpawnedMessage;

/**
 * A worker thread → the main thread: `ready` once its module ran, then per call its log and progress
 * frames, an `idle` frame only when the call left work running (the thread is then retired), and
 * the reply frame (`result` or `error`), in that order on one port. Everything but `ready` is a
 * channel frame the main thread forwards as it is.
 */
export type FromThreadMessage = { type: 'ready' } | FromHostMessage;
