// The policy component's public surface: capabilities, approval policies, approval keys and cache,
// argument previews, the approval broker and its approvers.
export {
  type Capability,
  type CapabilityRole,
  CapabilitySnapshot,
  capabilityCovers,
  grantAllows,
  parseCapability,
} from './capability.js';
export {
  APPROVAL_POLICIES,
  type ApprovalPolicy,
  type AutoApprovalAllowance,
  type CapabilityPolicyRule,
  foldGlobal,
  foldGlobalExplained,
  type ApprovalFloor,
  isApprovalPolicy,
  NO_AUTO_ALLOWANCE,
  parseApprovalPolicy,
  type PolicyCheck,
  refine,
  refineByClass,
  type RefinedPolicy,
  stricter,
  strictness,
  validatePolicyRules,
} from './approval-policy.js';
export {
  type ApprovalAction,
  type ApprovalBinding,
  type ApprovalKey,
  approvalKey,
  type CanonicalValue,
  canonicalApprovalBinding,
  canonicalJson,
  evolveCoreAction,
  mcpCallAction,
  mcpConnectAction,
  terminalExecAction,
} from './approval-key.js';
export { ApprovalCache, type ApprovalCacheOptions, type ApprovalCacheScope, type CachedApproval } from './approval-cache.js';
export { type ApprovalDecision, approvalDecision, type ApprovalSource } from './approval-decision.js';
export { type ArgumentPreview, DEFAULT_PREVIEW_LIMITS, isSensitiveFieldName, previewArguments, type PreviewLimits } from './argument-preview.js';
export {
  ApprovalBroker,
  type ApprovalBrokerOptions,
  type ApprovalRequest,
  type Approver,
  DEFAULT_REMEMBER_MS,
  NonInteractiveApprover,
} from './approval-broker.js';
export { type ApprovalRule, ApprovalRules, parseApprovalRule, RuleApprover, type RuleSubject, type RuleVerdict } from './approval-rules.js';
export { checkDiscoveredToolRules, closestSpelling, ruleVocabulary, type RuleVocabulary, unreachableConfigRule } from './rule-vocabulary.js';
export { DEFAULT_PROMPT_TIMEOUT_MS, renderApprovalPrompt, TerminalApprover, type TerminalApproverOptions, terminalSafe } from './terminal-approver.js';
export {
  ApprovalBrokerError,
  ApprovalKeyError,
  ApprovalPolicyError,
  ApprovalRuleError,
  CapabilityDeniedError,
  CapabilitySyntaxError,
} from './errors.js';
export { intersectGrants } from './grant-intersection.js';
export { StoreApprover, type StoreApproverOptions } from './store-approver.js';
