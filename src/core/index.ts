// The core loader's public surface; everything else in src/core is internal.
export { loadCore, AGENT_FILE, type LoadCoreOptions } from './load-core.js';
export { computeRevision, type CoreSnapshot, type AuthoredToolManifest, type McpDeclaration, type CoreFileRecord, type AgentDefinition } from './snapshot.js';
export { AGENTS_DIR } from './load-agents.js';
export { CoreLoadError, formatIssue, MAX_LISTED_ISSUES, type CoreIssue } from './errors.js';
export { checkGrant, grantCovers, type GrantCheck } from './grants.js';
export {
  BUILTIN_TOOLSETS,
  TOOL_NAME_PATTERN,
  SECRET_NAME_PATTERN,
  MAX_CORE_FILE_BYTES,
  MAX_CORE_FILES,
  MAX_CORE_TOTAL_BYTES,
  type BuiltinToolset,
} from './names.js';
export { APPROVAL_POLICIES, RISK_LEVELS, type ApprovalPolicy, type RiskLevel, type LiteralOrSecret, type SecretRef } from './fields.js';
export { secretSourcePaths } from './secret-source-rules.js';
export { DEFAULT_SESSION_CAPS, DEFAULT_MAX_DELEGATION_DEPTH, RUNTIME_TARGETS, TERMINAL_SANDBOX_MODES, type TerminalConfig, type AgentConfig, type ApprovalConfig, type ModelConfig, type ToolOverride, type RuntimeTarget } from './agent-schema.js';
export { ISOLATION_TIERS, type IsolationTier, type IsolationHints, type ReadPathHint } from './tool-manifest-schema.js';
export type { StdioTransport, HttpTransport, McpApproval, DiscoveredMcpTool } from './mcp-schema.js';
export { mcpNetworkAllowlist } from './load-mcp.js';
export {
  ScriptedModelScriptSchema,
  checkScriptedModelScript,
  parseScriptedModelScript,
  type ScriptedModelScript,
  type ScriptedTurn,
  type ScriptedToolCall,
} from './scripted-model-script.js';
export { deepFreeze, type DeepReadonly } from './deep-freeze.js';
export { compileInputSchema, type CompiledInputSchema, type InputValidator } from './input-schema.js';
export { checkModuleSyntax, type SyntaxCheck } from './module-syntax.js';
