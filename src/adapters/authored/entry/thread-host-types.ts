// What the trusted tool host's main thread and its piscina workers pass each other.
import type { CallMessage, FromHostMessage } from '../../../ipc/index.js';

export interface ThreadWorkerData {
  /** The BroadcastChannel name for log/progress lines and cancels (one per host process). */
  relay: string;
  maxResultBytes: number;
}

export type ThreadTask = Pick<CallMessage, 'id' | 'tool' | 'input' | 'secrets'>;

export interface ThreadTaskResult {
  reply: FromHostMessage;
  /** Log and progress frames the call posted on the relay before its reply. */
  relayed: number;
}
