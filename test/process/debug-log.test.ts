// NODE_DEBUG=supervisor (issue 17): a real supervisor in a child process (test/scenarios/
// debug-log-tree.ts) stops a tree that ignores TERM and force-kills another; with the variable its
// stderr holds one line per lifecycle event, each naming the spawn id and the leader's pid, and
// never the command's arguments; without it, not one such line.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { commandName, logValue, pidList } from '../../src/process/debug-log.js';
import { alive, killMarked, markedPids, tempDir } from '../helpers/procs.js';

const scenario = fileURLToPath(new URL('../scenarios/debug-log-tree.js', import.meta.url));

interface ScenarioResult {
  spawnId: string;
  pid: number;
  cgroup: string | null;
  members: number[];
  subreaper: boolean;
  signal: string | null;
  survivors: number;
  second: { spawnId: string; pid: number; forced: number; signal: string | null };
}

/** Runs the scenario to its end; every process it started is gone when this returns. */
async function runScenario(mode: 'cgroup' | 'no-cgroup', path: 'thread' | 'main', nodeDebug: string | null): Promise<{ result: ScenarioResult; stderr: string }> {
  const dir = tempDir();
  const env: NodeJS.ProcessEnv = { ...process.env };
  delete env.NODE_DEBUG;
  delete env.SUPERVISOR_SPAWN; // the spawn path is the scenario's choice
  if (nodeDebug !== null) env.NODE_DEBUG = nodeDebug;
  const child = spawn(process.execPath, [scenario, dir.path, mode, path], { env, stdio: ['ignore', 'pipe', 'pipe'] });
  let stdout = '';
  let stderr = '';
  child.stdout.on('data', (c: Buffer) => (stdout += c.toString()));
  child.stderr.on('data', (c: Buffer) => (stderr += c.toString()));
  const ids = (): string[] => [...stdout.matchAll(/sp_[0-9a-f]{24}/g), ...stderr.matchAll(/sp_[0-9a-f]{24}/g)].map((m) => m[0]);
  try {
    const timer = setTimeout(() => child.kill('SIGKILL'), 30_000);
    const [code, signal] = await new Promise<[number | null, NodeJS.Signals | null]>((r) => child.once('close', (c, s) => r([c, s])));
    clearTimeout(timer);
    assert.equal(code, 0, `the scenario failed (${code ?? signal}):\n${stderr}`);
    const result = JSON.parse(stdout.trim().split('\n').pop()!) as ScenarioResult;
    for (const id of [result.spawnId, result.second.spawnId]) assert.deepEqual(markedPids(id), [], `nothing of ${id} outlived the scenario`);
    for (const pid of [result.pid, ...result.members, result.second.pid]) assert.equal(alive(pid), false, `pid ${pid} is gone`);
    return { result, stderr };
  } finally {
    if (child.exitCode === null && child.signalCode === null) child.kill('SIGKILL');
    killMarked(ids());
    dir.remove();
  }
}

/** The log lines of one tree: `SUPERVISOR <scenario pid>: <event> <spawn id> pid=<leader> …`. */
function linesOf(stderr: string, spawnId: string): string[] {
  return stderr.split('\n').filter((l) => /^SUPERVISOR \d+: /.test(l) && l.includes(` ${spawnId} `));
}

function expectLine(lines: string[], re: RegExp, what: string): string {
  const hit = lines.find((l) => re.test(l));
  assert.ok(hit, `${what}: no line matches ${re} in:\n${lines.join('\n')}`);
  return hit;
}

describe('NODE_DEBUG=supervisor', { skip: process.platform !== 'linux' }, () => {
  for (const [mode, path] of [['cgroup', 'thread'], ['no-cgroup', 'main']] as const) {
    test(`logs spawn, TERM, escalation, KILL, sweeps, reaps and the forced kill of each tree (${mode}, path=posix_spawn-${path})`, async () => {
      const { result: r, stderr } = await runScenario(mode, path, 'supervisor');
      assert.equal(r.signal, 'SIGKILL', 'the tree ignored TERM and was killed');
      assert.equal(r.survivors, 0);
      const lines = linesOf(stderr, r.spawnId);
      // Every line of the tree names the leader's pid.
      for (const l of lines) assert.match(l, new RegExp(`^SUPERVISOR \\d+: [a-z-]+ ${r.spawnId} pid=${r.pid}( |$)`), l);

      expectLine(lines, new RegExp(`: spawn ${r.spawnId} pid=${r.pid} pgid=${r.pid} sid=${r.pid} .*path=posix_spawn-${path} cmd=sh$`), 'spawn');
      // The cgroup where this machine has a writable cgroup v2 (the cgroup suites insist on one).
      if (r.cgroup) expectLine(lines, new RegExp(`: spawn .* cgroup=\\S*${r.spawnId} `), 'spawn with the cgroup');
      else assert.doesNotMatch(lines[0]!, /cgroup=/);
      expectLine(lines, /: stop .* reason=cancelled grace=300$/, 'stop');
      expectLine(lines, new RegExp(`: signal .* sig=TERM via=group pgid=${r.pid}$`), 'TERM to the group');
      expectLine(lines, /: signal .* sig=TERM via=(pidfd|verified-pid) target=\d+ sent=true$/, 'TERM to a verified pid');
      expectLine(lines, /: sweep .* phase=term found=[1-9]\d* pids=\d/, 'the TERM sweep');
      const esc = expectLine(lines, /: escalate .* after=\d+ms grace=300 left=[1-9]/, 'escalation');
      expectLine(lines, new RegExp(`: signal .* sig=KILL via=group pgid=${r.pid}$`), 'KILL to the group');
      if (r.cgroup) expectLine(lines, /: signal .* sig=KILL via=cgroup\.kill$/, 'cgroup.kill');
      expectLine(lines, /: sweep .* phase=kill round=0 found=[1-9]/, 'the KILL sweep');
      // The ladder ends on a sweep that found nothing: a re-check, or a KILL round's own scan.
      expectLine(lines, /: sweep .* phase=kill(-check)? .*found=0 /, 'a sweep that found nothing');
      expectLine(lines, /: reap .* who=leader code=null signal=SIGKILL$/, 'the leader’s reap');
      const end = expectLine(lines, /: end .* reason=cancelled code=null signal=SIGKILL descendants=\d+ escapees=\d+ survivors=0 ms=\d+$/, 'end');
      assert.ok(lines.indexOf(esc) > lines.findIndex((l) => / sig=TERM /.test(l)), 'TERM came before the escalation');
      assert.ok(lines.findIndex((l) => / sig=KILL /.test(l)) > lines.indexOf(esc), 'KILL came after the escalation');
      assert.equal(lines.indexOf(end), lines.length - 1, 'end is the tree’s last line');
      if (r.subreaper) {
        // `(sleep 61 &)`: the subshell exits at once, its child is re-parented to the supervisor.
        const adopt = expectLine(lines, /: adopt .* member=(\d+) ppid=self /, 'the orphan’s adoption');
        const orphan = /member=(\d+)/.exec(adopt)![1];
        expectLine(lines, new RegExp(`: reap .* who=${orphan} code=null signal=SIGKILL$`), 'the adopted orphan’s reap');
      }

      const s = r.second;
      const second = linesOf(stderr, s.spawnId);
      expectLine(second, new RegExp(`: spawn ${s.spawnId} pid=${s.pid} .*cmd=sleep$`), 'the second spawn');
      expectLine(second, new RegExp(`: sweep ${s.spawnId} pid=${s.pid} phase=sync-kill round=0 found=1 pids=${s.pid}$`), 'the forced kill’s sweep');
      expectLine(second, new RegExp(`: force-kill ${s.spawnId} pid=${s.pid} descendants=0 survivors=0$`), 'the forced kill');

      // The command's arguments are never logged (they can hold secrets), nor is any environment.
      assert.doesNotMatch(stderr, /not-in-the-log|trap|SUPERVISOR_SPAWN_ID|PATH=/);
    });
  }

  test('without NODE_DEBUG=supervisor nothing is logged', async () => {
    for (const nodeDebug of [null, 'net']) {
      const { result: r, stderr } = await runScenario('no-cgroup', 'thread', nodeDebug);
      assert.equal(r.signal, 'SIGKILL');
      assert.doesNotMatch(stderr, /^SUPERVISOR \d+:/m);
      assert.ok(!stderr.includes(r.spawnId), `no line names the tree:\n${stderr}`);
    }
  });
});

describe('debug log fields', () => {
  test('a value cannot break a line, forge a field or hide behind bidi controls', () => {
    assert.equal(logValue('sh'), 'sh');
    assert.equal(logValue(null), 'null');
    assert.equal(logValue(''), '""');
    assert.equal(logValue('my tool'), '"my tool"');
    assert.equal(logValue('a\nSUPERVISOR 1: spawn'), '"a\\u000aSUPERVISOR 1: spawn"');
    assert.equal(logValue('x=1'), '"x=1"');
    assert.equal(logValue('evil\u202etxt.sh'), '"evil\\u202etxt.sh"');
  });

  test('a command is logged by its name, a sweep by its first eight pids', () => {
    assert.equal(commandName('/usr/bin/python3'), 'python3');
    assert.equal(commandName('C:\\tools\\node.exe'), 'node.exe');
    assert.equal(commandName('sh'), 'sh');
    assert.equal(pidList([]), '-');
    assert.equal(pidList([1, 2, 3].map((pid) => ({ pid }))), '1,2,3');
    assert.equal(pidList(Array.from({ length: 20 }, (_, i) => ({ pid: 100 + i }))), '100,101,102,103,104,105,106,107,+12');
  });
});
