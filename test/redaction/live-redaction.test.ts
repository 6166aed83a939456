// A stream redactor follows its session's secret set: values resolved after the stream started are
// redacted from the next bytes on, including an occurrence that straddles the switch.
import { describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { randomBytes } from 'node:crypto';
import { LiveStreamRedactor, RedactionSet } from '../../src/redaction/index.js';

const run = (r: LiveStreamRedactor, steps: (string | (() => void))[]): string => {
  let out = '';
  for (const s of steps) {
    if (typeof s === 'function') s();
    else out += r.push(Buffer.from(s)).toString('utf8');
  }
  return out + r.flush().toString('utf8');
};

describe('live redaction', () => {
  test('a secret added after the stream started is redacted from the next chunk on', () => {
    const set = new RedactionSet();
    const secret = 'ghp_live0123456789abcdef';
    const out = run(new LiveStreamRedactor(set), ['before\n', () => set.add([secret]), `token=${secret}\n`, `again ${secret.slice(0, 9)}`, `${secret.slice(9)} end\n`]);
    assert.ok(!out.includes(secret), out);
    assert.equal(out, 'before\ntoken=[REDACTED]\nagain [REDACTED] end\n');
  });

  test("the old redactor's held-back bytes are examined by the new one: a secret straddling the switch is found", () => {
    // The new secret shares its opening with a known one, so its start is held back by the old set.
    const known = 'tok-AAAA-1111111111';
    const fresh = 'tok-AAAA-2222222222';
    const set = new RedactionSet([known]);
    const out = run(new LiveStreamRedactor(set), ['hello tok-AAAA-', () => set.add([fresh]), '2222222222 bye\n']);
    assert.equal(out, 'hello [REDACTED] bye\n');
  });

  test('a grown set that cannot be redacted safely withholds the rest of the stream, never raw bytes', () => {
    const set = new RedactionSet(['first-secret-value-0001']);
    const r = new LiveStreamRedactor(set);
    // Sixteen 16 KiB secrets: more patterns than the matcher's table may hold (MAX_TABLE_BYTES).
    const big = Array.from({ length: 16 }, () => randomBytes(12288).toString('base64'));
    const out = run(r, ['visible\n', () => set.add(big), `${big[0]!.slice(0, 40)}\n`, 'more\n']);
    assert.ok(out.startsWith('visible\n'), out);
    assert.ok(!out.includes(big[0]!.slice(0, 40)) && !out.includes('more'), out);
    assert.match(out, /output withheld/);
  });
});
