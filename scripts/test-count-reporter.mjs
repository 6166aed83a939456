// A reporter for Node's test runner that writes one JSON line of counts when the run ends, so
// scripts/run-tests.mjs can print one total over its parallel and serial groups. It counts what
// the spec reporter's summary counts: tests (not suites), passed, failed (cancelled included),
// skipped and todo.
export default async function* countTests(source) {
  const n = { tests: 0, pass: 0, fail: 0, cancelled: 0, skipped: 0, todo: 0 };
  for await (const ev of source) {
    if (ev.type !== 'test:pass' && ev.type !== 'test:fail') continue;
    if (ev.data.details?.type === 'suite') continue;
    n.tests++;
    if (ev.data.skip) n.skipped++;
    else if (ev.data.todo) n.todo++;
    else if (ev.type === 'test:pass') n.pass++;
    else {
      n.fail++;
      if (ev.data.details?.error?.failureType === 'cancelledByParent') n.cancelled++;
    }
  }
  yield `${JSON.stringify(n)}\n`;
}
