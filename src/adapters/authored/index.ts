export { authoredToolHosts, authoredAdapter, type AuthoredToolsHandle } from './authored-adapter.js';
export { AuthoredToolError, type AuthoredToolErrorCode } from './errors.js';
export { DEFAULT_TOOL_HOST_CONFIG, toolHostConfig, type ToolHostConfig } from './host-config.js';
export { ToolHostPool, type PoolCallResult, type PoolStats } from './tool-host-pool.js';
export type { CallHooks, HostReply, RetireReason } from './tool-host-worker.js';
export { THREAD_HOST_ENTRY, ThreadToolHost, type ThreadRetired } from './thread-host.js';
