// `node dist/bench/delegation.js [--n N] [--json]`: delegation overhead (issue 18). A child agent
// that answers at once, started from a parent with delegate_task, against the same kind of answer
// from a tool call in the parent (tools_list, in-process, no child). Reports p50/p95 of each call
// as the turn engine sees it (tool_call → tool_result) and the store rows written per delegation.
import { mkdtempSync, rmSync, writeFileSync, mkdirSync } from 'node:fs';
import { loadavg, tmpdir } from 'node:os';
import { join } from 'node:path';
import Database from 'better-sqlite3';
import { openSession } from '../src/index.js';

const arg = (name: string, dflt: number): number => {
  const i = process.argv.indexOf(`--${name}`);
  return i < 0 ? dflt : Number(process.argv[i + 1]);
};
const n = arg('n', 40);
const json = process.argv.includes('--json');

const TABLES = ['sessions', 'turns', 'messages', 'runtime_events', 'tasks', 'approvals'];

function counts(file: string): Record<string, number> {
  const db = new Database(file, { readonly: true });
  try {
    return Object.fromEntries(TABLES.map((t) => [t, (db.prepare(`SELECT count(*) AS c FROM ${t}`).get() as { c: number }).c]));
  } finally {
    db.close();
  }
}

const pct = (xs: number[], p: number): number => {
  const s = [...xs].sort((a, b) => a - b);
  return s[Math.min(s.length - 1, Math.floor((p / 100) * s.length))]!;
};

async function measure(tool: 'delegate_task' | 'tools_list'): Promise<{ ms: number[]; rows: Record<string, number> }> {
  const core = mkdtempSync(join(tmpdir(), 'bench-deleg-core-'));
  const state = mkdtempSync(join(tmpdir(), 'bench-deleg-state-'));
  try {
    const call = tool === 'delegate_task' ? { name: 'delegate_task', arguments: { agent: 'echo', task: 'say hi' } } : { name: 'tools_list', arguments: {} };
    writeFileSync(join(core, 'agent.yaml'), JSON.stringify({ name: 'bench', toolsets: ['agents'], grants: ['agent.spawn'], approval: { default: 'auto' }, limits: { max_iterations: n + 2 }, model: { provider: 'scripted', script: 'script.yaml' } }));
    writeFileSync(join(core, 'script.yaml'), JSON.stringify({ turns: [...Array.from({ length: n }, () => ({ tool_calls: [call] })), { text: 'done' }] }));
    mkdirSync(join(core, 'agent', 'agents'), { recursive: true });
    writeFileSync(join(core, 'agent', 'agents', 'echo.yaml'), JSON.stringify({ description: 'answers at once', model: { provider: 'scripted', script: 'echo.yaml' } }));
    writeFileSync(join(core, 'echo.yaml'), JSON.stringify({ turns: [{ text: 'hi' }] }));
    const s = await openSession({ core, stateDir: state });
    const before = counts(join(state, 'supervisor.db'));
    const started = new Map<string, number>();
    const ms: number[] = [];
    try {
      await s.runTurn('go', {
        onEvent: (e) => {
          if (e.type === 'tool_call') started.set(e.callId, performance.now());
          if (e.type === 'tool_result') {
            if (!e.outcome.ok) throw new Error(`${tool} failed: ${e.outcome.message}`);
            ms.push(performance.now() - started.get(e.outcome.callId)!);
          }
        },
      });
    } finally {
      await s.close();
    }
    const after = counts(join(state, 'supervisor.db'));
    return { ms, rows: Object.fromEntries(TABLES.map((t) => [t, (after[t]! - before[t]!) / n])) };
  } finally {
    rmSync(core, { recursive: true, force: true });
    rmSync(state, { recursive: true, force: true });
  }
}

const load = loadavg()[0]!.toFixed(2);
const base = await measure('tools_list');
const deleg = await measure('delegate_task');
const row = (name: string, r: { ms: number[] }) => ({ name, p50: +pct(r.ms, 50).toFixed(2), p95: +pct(r.ms, 95).toFixed(2) });
const out = { n, load1: Number(load), baseline: row('tools_list in the parent', base), delegation: row('delegate_task, child answers at once', deleg), rowsPerDelegation: deleg.rows, rowsPerBaselineCall: base.rows };
if (json) process.stdout.write(`${JSON.stringify(out)}\n`);
else {
  process.stdout.write(`delegation overhead (n=${n}, load ${load})\n`);
  for (const r of [out.baseline, out.delegation]) process.stdout.write(`  ${r.name.padEnd(40)} p50 ${r.p50} ms  p95 ${r.p95} ms\n`);
  process.stdout.write(`  rows written per delegation: ${JSON.stringify(deleg.rows)}\n  rows written per baseline call: ${JSON.stringify(base.rows)}\n`);
}
