// The library API: what an embedder needs to run an agent's effects under the supervisor, the same
// pipeline the CLI uses (docs/library.md). Every export keeps the guarantees the CLI gives.

/** Opens a session of a core: catalog, store, process supervisor, secrets and MCP host assembled as `supervisor run` does; nothing of the agent runs yet. */
export { openSession } from './session/index.js';
/** An open session: callTool runs the eight steps (capability, approval, audit included); close() stops every tree it started. */
export type { Session, OpenSessionOptions, CallToolOptions, RunTurnOptions, RunSessionOptions, SessionStatus, DroppedTool } from './session/index.js';
/** Several sessions of one process sharing MCP servers: pass the host to openSession; each session still passes its own gate; host.close() stops the servers. */
export { openSessionHost, type SessionHost } from './session/index.js';
/** Why a session could not be opened or asked (CORE_INVALID, RULE_INVALID, RESUME_REFUSED, UNKNOWN_TOOL, SESSION_CLOSED, HOST_STATE_DIR); nothing ran. */
export { SessionError, type SessionErrorCode } from './session/index.js';
/** Runs one command as a whole supervised tree and resolves once every process of it is gone (the tree-safe `timeout` of `supervisor exec`). */
export { exec, type ExecOptions } from './session/index.js';
/** The store and artifacts' default place: $SUPERVISOR_STATE_DIR, $XDG_STATE_HOME/isolation-supervisor or ~/.local/state/isolation-supervisor. */
export { defaultStateDir } from './session/index.js';
/** The lifecycle layer: ProcessSupervisor.open() reconciles a dead supervisor's trees; spawnTree() starts a tree that is only ever signalled whole and by verified pid. */
export { ProcessSupervisor, SpawnError } from './process/index.js';
/** A tree's options, handle and outcome (reason, exit code or signal, bounded redacted tails, what was killed). */
export type { SpawnTreeOptions, SupervisedTree, TreeOutcome } from './process/index.js';
/** Who answers a `prompt` decision: decide() gets the exact action and returns approvalDecision(...); a plain "no" must not throw. */
export { approvalDecision, NonInteractiveApprover, type Approver, type ApprovalRequest, type ApprovalDecision } from './policy/index.js';
/** What one call returns: separate model, operator, event and durable views, each bounded and redacted; ok: false names the refusing step. */
export type { EffectOutcome } from './effects/index.js';
/** What a runtime reports while it runs and when it ends. */
export type { RuntimeEvent, RuntimeRunResult, PreparedRun } from './runtimes/index.js';
/** One user turn's result: completed, limit_hit or cancelled, the final text, iterations and effects counted. */
export type { TurnResult } from './turns/index.js';
/** A runtime's refusal before anything of the agent ran (a flag, a missing binary, an unusable model section). */
export { RuntimeSetupError } from './runtimes/index.js';
