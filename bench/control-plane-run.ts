// The control plane's figures inside `npm run bench`: bench/control-plane.ts runs as a child of
// its own (it starts and stops a PostgreSQL cluster, and spawns member processes), and its JSON
// comes back here. Where no PostgreSQL server binaries exist, it says so instead of failing.
import { spawn } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { pgUnavailableReason } from '../test/helpers/pg-cluster.js';

export interface ControlPlaneBench {
  skipped: string | null;
  result: Record<string, unknown> | null;
  text: string;
}

const SCRIPT = fileURLToPath(new URL('./control-plane.js', import.meta.url));

export async function runControlPlane(quick: boolean): Promise<ControlPlaneBench> {
  const why = pgUnavailableReason();
  if (why) return { skipped: why, result: null, text: `skipped: ${why}` };
  const child = spawn(process.execPath, [SCRIPT, '--json', ...(quick ? ['--quick'] : [])], { stdio: ['ignore', 'pipe', 'inherit'] });
  let out = '';
  child.stdout.on('data', (b: Buffer) => (out += b.toString('utf8')));
  const code = await new Promise<number | null>((resolve) => child.once('exit', resolve));
  if (code !== 0) throw new Error(`bench/control-plane.js exited ${code}`);
  const r = JSON.parse(out.trim().split('\n').at(-1)!) as {
    effectsPerSecond: { sqlite: number; postgres1Member: number; postgres3Members: number; loopsPerMember: number };
    claimLatencyMs: { p50: number; p99: number; n: number };
    approvalDeliveryMs: { p50: number; p99: number; n: number };
    reclaimMs: { leaseMs: number; fromKillP50: number; fromHeartbeatP50: number; fromHeartbeatMax: number; n: number };
  };
  const e = r.effectsPerSecond;
  const text = [
    `durable no-op effects/s: SQLite ${e.sqlite}; PostgreSQL 1 member ${e.postgres1Member} (${(e.postgres1Member / e.sqlite).toFixed(2)}x SQLite), 3 members ${e.postgres3Members} (${e.loopsPerMember} sessions per member)`,
    `task claim latency, 3 members: p50 ${r.claimLatencyMs.p50} ms, p99 ${r.claimLatencyMs.p99} ms (n ${r.claimLatencyMs.n})`,
    `approval delivery (answer committed -> waiter woken by NOTIFY): p50 ${r.approvalDeliveryMs.p50} ms, p99 ${r.approvalDeliveryMs.p99} ms (n ${r.approvalDeliveryMs.n})`,
    `reclaim after SIGKILL (lease ${r.reclaimMs.leaseMs} ms): p50 ${r.reclaimMs.fromKillP50} ms from the kill; from the last heartbeat p50 ${r.reclaimMs.fromHeartbeatP50} ms, max ${r.reclaimMs.fromHeartbeatMax} ms (n ${r.reclaimMs.n})`,
  ].join('\n');
  return { skipped: null, result: r, text };
}
