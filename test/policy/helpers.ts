// Builders shared by the broker and approver tests.
import type { ApprovalRequest } from '../../src/policy/approval-broker.js';
import { type ApprovalAction, approvalKey, terminalExecAction } from '../../src/policy/approval-key.js';
import type { ApprovalPolicy } from '../../src/policy/approval-policy.js';
import { previewArguments } from '../../src/policy/argument-preview.js';
import { CapabilitySnapshot } from '../../src/policy/capability.js';

export const SNAPSHOT = CapabilitySnapshot.from(['terminal.exec', 'mcp.call:github', 'secret:GITHUB_TOKEN']);

export interface RequestOptions {
  policy?: ApprovalPolicy;
  toolName?: string;
  capability?: string;
  actionSummary?: string;
  action?: ApprovalAction;
  args?: unknown;
  session?: string;
}

/** A consistent request: the key binds the same policy, principal and session as the request. */
export function request(o: RequestOptions = {}): ApprovalRequest {
  const policy = o.policy ?? 'prompt';
  const toolName = o.toolName ?? 'terminal';
  const actionSummary = o.actionSummary ?? 'ls -la';
  const session = o.session ?? 'ses_1';
  const key = approvalKey({
    principal: 'operator:alice',
    session,
    coreRevision: 'rev_1',
    capabilitySnapshot: SNAPSHOT.digest,
    policy,
    effect: { ref: `entry:${toolName}`, name: toolName },
    action: o.action ?? terminalExecAction(actionSummary, '/work/ws'),
  });
  return {
    key,
    policy,
    toolName,
    capability: o.capability ?? 'terminal.exec',
    preview: previewArguments(o.args ?? { command: actionSummary }),
    actionSummary,
    principalId: 'operator:alice',
    sessionId: session,
  };
}
