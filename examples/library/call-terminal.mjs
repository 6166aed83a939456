// The library next to the CLI (docs/library.md): open a session of a small core, call the builtin
// terminal through the supervisor's pipeline with an approver that approves it, print, close.
// Run from the project after `npm run build`:  node examples/library/call-terminal.mjs
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { approvalDecision, openSession } from 'isolation-supervisor';

// A core of one toolset: the terminal, granted, and every call asks (approval.default: prompt).
const core = mkdtempSync(join(tmpdir(), 'library-core-'));
const stateDir = mkdtempSync(join(tmpdir(), 'library-state-'));
writeFileSync(join(core, 'agent.yaml'), 'name: library-example\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: prompt\n');

// Approvals stay explicit: without this approver every call that asks would be refused.
const approver = {
  async decide(request) {
    const yes = request.toolName === 'terminal';
    console.log(`approval asked: ${request.toolName}: ${request.actionSummary} -> ${yes ? 'yes' : 'no'}`);
    return approvalDecision(yes, 'operator', yes ? 'the example approves the terminal' : 'only the terminal is approved here');
  },
};

const session = await openSession({ core, stateDir, approver });
try {
  // The same eight steps as a model's call: schema, principal, capability, checks, approval,
  // secrets, the command in a supervised process tree, redacted views and the audit chain.
  const outcome = await session.callTool('terminal', { command: 'echo hello from a supervised tree' });
  if (outcome.ok) console.log(`result (${outcome.isError ? 'error' : 'ok'}):\n${outcome.views.model.content.trimEnd()}`);
  else console.log(`refused at step ${outcome.step}: ${outcome.code}: ${outcome.message}`);
  console.log(`session ${session.id}: ${session.catalog.entries.length} tool(s) in its catalog`);
} finally {
  await session.close();
  rmSync(core, { recursive: true, force: true });
  rmSync(stateDir, { recursive: true, force: true });
}
