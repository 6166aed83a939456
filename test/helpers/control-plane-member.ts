// A supervisor-like member process for the control-plane chaos test: it opens a ProcessSupervisor
// on its own state dir (its SQLite store, spawn records and reconcile, as a real supervisor does),
// joins the control plane, owns one session, and claims and runs queued tasks until SIGTERM. Each
// task runs a real supervised tree (`sleep`) that is stopped when the task ends; when the member
// fences itself, the lifecycle layer's killAllSync() ends every tree before the process exits.
// Every step is one JSON line on stdout.
//
//   node control-plane-member.js <url> <state-dir> <name> <lease-ms>
//
// Task kinds: `work` ({ms}) runs its tree for ms then succeeds; `poison` SIGKILLs this member.
import { mkdirSync, writeFileSync } from 'node:fs';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  ControlPlaneMember,
  MemberFencedError,
  OwnershipLostError,
  appendAsOwner,
  claimTask,
  createOwnedSession,
  finishTask,
  openPool,
  recordTaskEvent,
} from '../../src/control-plane/index.js';
import { ownProcessIdentity, ProcessSupervisor } from '../../src/process/index.js';

const [url, stateDir, name, leaseArg] = process.argv.slice(2);
if (!url || !stateDir || !name || !leaseArg) {
  console.error('usage: control-plane-member.js <url> <state-dir> <name> <lease-ms>');
  process.exit(2);
}
const say = (event: string, fields: Record<string, unknown> = {}): void => {
  process.stdout.write(`${JSON.stringify({ event, name, pid: process.pid, ...fields })}\n`);
};

mkdirSync(stateDir, { recursive: true, mode: 0o700 });
const supervisor = ProcessSupervisor.open({ stateDir });
writeFileSync(join(stateDir, 'member.pid'), String(process.pid));

const pool = await openPool(url, { max: 3, applicationName: `member-${name}` });
const member = await ControlPlaneMember.join(pool, ownProcessIdentity({ hostId: name }), {
  leaseMs: Number(leaseArg),
  reclaimEveryMs: 200,
  onFenced: (reason) => {
    // The process layer's part: this host's trees die before anyone else can own their work.
    const killed = supervisor.killAllSync();
    say('fenced', { reason, killed });
    process.exit(3);
  },
  onReclaimed: (r) => say('reclaimed', { members: r.map((m) => ({ id: m.memberId, tasks: m.tasks, sessions: m.sessions })) }),
});
const session = await createOwnedSession(member, { name });
say('joined', { member: member.id, session: session.id });

let stopping = false;
process.once('SIGTERM', () => {
  stopping = true;
});

async function runTask(): Promise<boolean> {
  const task = await claimTask(member);
  if (!task) return false;
  say('claimed', { task: task.id, epoch: task.epoch, attempt: task.attempt, kind: task.kind });
  if (task.kind === 'poison') process.kill(process.pid, 'SIGKILL');
  const ms = (task.input as { ms?: number }).ms ?? 100;
  const tree = supervisor.spawnTree({ command: 'sleep', args: ['60'], artifacts: false });
  say('tree', { task: task.id, treePid: tree.pid });
  try {
    await recordTaskEvent(member, task, 'task.progress', { tree_pid: tree.pid });
    await sleep(ms);
    await finishTask(member, task, { status: 'succeeded', result: { by: name } });
    say('finished', { task: task.id, epoch: task.epoch });
  } catch (err) {
    if (err instanceof OwnershipLostError) say('ownership_lost', { task: task.id, epoch: task.epoch });
    else throw err;
  } finally {
    await tree.stop();
  }
  return true;
}

try {
  while (!stopping) {
    if (!(await runTask())) await sleep(50);
  }
  await appendAsOwner(member, session, [{ kind: 'note.leaving', payload: { name } }]);
  await member.leave('SIGTERM');
  await pool.end();
  await supervisor.close();
  say('left');
  process.exit(0);
} catch (err) {
  if (err instanceof MemberFencedError) {
    const killed = supervisor.killAllSync();
    say('fenced', { reason: err.message, killed });
    process.exit(3);
  }
  say('error', { message: (err as Error).message });
  process.exit(1);
}
