// What the sessions of one process share (issue 19, decision 114): one MCP connection manager and
// the process supervisor that runs its servers. A server is then started once per (principal,
// workspace, server, declaration) and joined by every session that passes its own gate (its grant
// and its connect approval), instead of once per session. Everything else a session runs (tool
// hosts, terminal trees, tasks) stays on the session's own supervisor: a warm tool host holds a
// module's state, which is not shared between sessions.
import { resolve } from 'node:path';
import { McpConnectionManager } from '../adapters/mcp/index.js';
import { ProcessSupervisor } from '../process/index.js';
import { defaultStateDir } from './state-dir.js';

export interface SessionHost {
  /** The state dir every session of this host uses (its store holds the servers' spawn records). */
  readonly stateDir: string;
  /** Runs the shared MCP servers, each a supervised tree. */
  readonly supervisor: ProcessSupervisor;
  /** The shared manager: a session joins it at open and lets go of what it held at close. */
  readonly mcp: McpConnectionManager;
  /** Stops every server (whole trees) and the supervisor; sessions still open lose their servers. */
  close(): Promise<void>;
}

/** One host per process (or per group of sessions that may share MCP servers). */
export function openSessionHost(o: { stateDir?: string } = {}): SessionHost {
  const stateDir = resolve(o.stateDir ?? defaultStateDir());
  const supervisor = ProcessSupervisor.open({ stateDir });
  const mcp = new McpConnectionManager({ supervisor });
  let closing: Promise<void> | null = null;
  return {
    stateDir,
    supervisor,
    mcp,
    close() {
      closing ??= mcp.close().finally(() => supervisor.close());
      return closing;
    },
  };
}
