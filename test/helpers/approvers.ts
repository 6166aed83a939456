// Approvers for tests of the approval path: the answer is the test's, every request is kept.
import { approvalDecision, type ApprovalRequest, type Approver } from '../../src/index.js';

/** Says yes and asks to remember it ("always"), keeping every request it was asked. */
export class AlwaysApprove implements Approver {
  readonly asked: ApprovalRequest[] = [];
  async decide(r: ApprovalRequest) {
    this.asked.push(r);
    return approvalDecision(true, 'operator', 'test says always', true);
  }
}
