// Frames and the channel: round trips across any chunking, and every protocol error typed, with
// an oversized length refused before its payload is buffered.
import assert from 'node:assert/strict';
import { PassThrough } from 'node:stream';
import { describe, test } from 'node:test';
import { Channel, encodeFrame, FrameDecoder, FromHostSchema, IpcError, type FromHostMessage } from '../../src/ipc/index.js';

const header = (n: number): Buffer => {
  const b = Buffer.alloc(4);
  b.writeUInt32BE(n, 0);
  return b;
};
const code = (fn: () => unknown): string => {
  try {
    fn();
  } catch (err) {
    assert.ok(err instanceof IpcError, String(err));
    return err.code;
  }
  return 'no error';
};

describe('frames', () => {
  test('round trip, whole and split one byte at a time, several frames per chunk', () => {
    const msgs = [{ a: 1 }, { text: 'héllo ✓ 😀' }, [1, 2, 3], 'x'.repeat(70_000)];
    const bytes = Buffer.concat(msgs.map((m) => encodeFrame(m)));
    assert.deepEqual(new FrameDecoder().push(bytes), msgs);
    const d = new FrameDecoder();
    const out: unknown[] = [];
    for (const byte of bytes) out.push(...d.push(Buffer.from([byte])));
    assert.deepEqual(out, msgs);
    assert.equal(d.pending, 0);
  });

  test('an oversized length is refused from its header alone, before any payload is held', () => {
    const d = new FrameDecoder(1024);
    assert.equal(code(() => d.push(header(1025))), 'IPC_FRAME_TOO_LARGE');
    assert.equal(d.pending, 0);
    // Spent after a failure: nothing more is read.
    assert.equal(code(() => d.push(encodeFrame({ ok: 1 }))), 'IPC_FRAME_TOO_LARGE');
    assert.equal(code(() => new FrameDecoder().push(header(0xffffffff))), 'IPC_FRAME_TOO_LARGE');
    assert.equal(code(() => encodeFrame('x'.repeat(2000), 1024)), 'IPC_FRAME_TOO_LARGE');
  });

  test('malformed JSON and invalid UTF-8 are IPC_MALFORMED', () => {
    const bad = Buffer.from('{"a":');
    assert.equal(code(() => new FrameDecoder().push(Buffer.concat([header(bad.length), bad]))), 'IPC_MALFORMED');
    const notUtf8 = Buffer.from([0x22, 0xff, 0xfe, 0x22]);
    assert.equal(code(() => new FrameDecoder().push(Buffer.concat([header(4), notUtf8]))), 'IPC_MALFORMED');
  });
});

describe('Channel', () => {
  // A PassThrough is its own peer: what the channel sends, it reads back.
  function loop() {
    const stream = new PassThrough();
    const got: FromHostMessage[] = [];
    const errors: IpcError[] = [];
    const ch = new Channel<FromHostMessage, FromHostMessage>(stream, { incoming: FromHostSchema, maxFrameBytes: 4096, onMessage: (m) => got.push(m), onError: (e) => errors.push(e) });
    return { stream, ch, got, errors };
  }
  const tick = () => new Promise((r) => setImmediate(r));

  test('typed messages go through validated', async () => {
    const { ch, got, errors } = loop();
    ch.send({ type: 'hello', protocol: 1, pid: 42 });
    ch.send({ type: 'progress', id: 'c1', done: 1, total: 3 });
    await tick();
    assert.deepEqual(got, [
      { type: 'hello', protocol: 1, pid: 42 },
      { type: 'progress', id: 'c1', done: 1, total: 3 },
    ]);
    assert.deepEqual(errors, []);
  });

  for (const [name, bytes, expected] of [
    ['a frame failing its schema (unknown type)', encodeFrame({ type: 'shell', cmd: 'rm -rf /' }), 'IPC_MALFORMED'],
    ['a frame with an extra field', encodeFrame({ type: 'hello', protocol: 1, pid: 1, extra: true }), 'IPC_MALFORMED'],
    ['an oversized frame', Buffer.concat([header(5000), Buffer.alloc(10)]), 'IPC_FRAME_TOO_LARGE'],
    ['garbage', Buffer.from([0, 0, 0, 3, 0xff, 0xff, 0xff]), 'IPC_MALFORMED'],
  ] as const) {
    test(`${name} ends the channel once with ${expected}; later frames are not read`, async () => {
      const { stream, got, errors, ch } = loop();
      stream.write(bytes);
      stream.write(encodeFrame({ type: 'hello', protocol: 1, pid: 1 }));
      await tick();
      assert.deepEqual(got, []);
      assert.deepEqual(errors.map((e) => e.code), [expected]);
      assert.equal(ch.closed, true);
      assert.equal(ch.send({ type: 'hello', protocol: 1, pid: 1 }), false);
    });
  }

  test('the peer closing is IPC_CLOSED; close() itself reports nothing', async () => {
    const a = loop();
    a.stream.destroy();
    await tick();
    assert.deepEqual(a.errors.map((e) => e.code), ['IPC_CLOSED']);
    const b = loop();
    b.ch.close();
    await tick();
    assert.deepEqual(b.errors, []);
  });
});
