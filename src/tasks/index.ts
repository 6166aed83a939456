export { RuntimeTaskWorker, type TerminalTaskSpec, type TaskWorkerOptions } from './task-worker.js';
