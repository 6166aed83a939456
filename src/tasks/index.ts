export { RuntimeTaskWorker, TaskLimitError, type InProcessTaskEnd, type InProcessTaskSpec, type TerminalTaskSpec, type TaskWorkerOptions } from './task-worker.js';
