// Admission under a per-tick budget (issue 16, decision 58): a burst of calls uses at most about
// ADMISSION_BUDGET_MS of one turn of the event loop; the rest are let in one per later turn, in
// order, so timers and I/O run in between.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { performance } from 'node:perf_hooks';
import { admit, ADMISSION_BUDGET_MS } from '../../src/effects/admission.js';

const busy = (ms: number): void => {
  const end = performance.now() + ms;
  while (performance.now() < end);
};

test('a burst runs at once until the turn’s budget is used; the rest get a turn each, in order', async () => {
  await new Promise((r) => setImmediate(r)); // a fresh turn
  let turns = 0;
  const counter = setInterval(() => undefined, 1);
  const onTurn = (): void => {
    turns++;
    if (turns < 1000) setImmediate(onTurn);
  };
  setImmediate(onTurn);
  const ran: { i: number; turn: number }[] = [];
  const start = performance.now();
  const calls = Array.from({ length: 20 }, async (_, i) => {
    const gate = admit();
    if (gate) await gate;
    ran.push({ i, turn: turns });
    busy(2); // each call's synchronous steps
  });
  const firstTurn = ran.filter((r) => r.turn === 0).length;
  await Promise.all(calls);
  clearInterval(counter);
  turns = 1000;
  assert.ok(firstTurn >= 1, 'the first call is not delayed');
  assert.ok(firstTurn <= Math.ceil(ADMISSION_BUDGET_MS / 2) + 1, `at most the budget in the first turn (ran ${firstTurn})`);
  assert.deepEqual(ran.map((r) => r.i), ran.map((_, i) => i), 'first come, first served');
  const later = ran.slice(firstTurn).map((r) => r.turn);
  for (let k = 1; k < later.length; k++) assert.ok(later[k]! > later[k - 1]!, `one queued call per turn (turns ${later.join(',')})`);
  assert.ok(performance.now() - start < 5_000);
});

test('an ordinary call, with nothing queued and budget left, is not delayed by a turn', async () => {
  await new Promise((r) => setImmediate(r));
  assert.equal(admit(), null);
});
