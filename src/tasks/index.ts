export { RuntimeTaskWorker, TaskLimitError, type AgentTaskEnd, type AgentTaskSpec, type TerminalTaskSpec, type TaskWorkerOptions } from './task-worker.js';
