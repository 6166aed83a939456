export { RuntimeTaskWorker, TaskLimitError, type TerminalTaskSpec, type TaskWorkerOptions } from './task-worker.js';
