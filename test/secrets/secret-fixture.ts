// Shared setup for the secrets tests: real files in a temp dir, a store over them, and a leak check
// that looks at every way an object or error could be printed or serialised.
import assert from 'node:assert/strict';
import * as fs from 'node:fs';
import * as os from 'node:os';
import * as path from 'node:path';
import { inspect } from 'node:util';
import { SecretError, SecretStore, type SecretBindingRequest, type SecretErrorCode } from '../../src/secrets/index.js';
import type { SecretDeclaration } from '../../src/core/secrets-schema.js';

const made: string[] = [];

export function tempDir(): string {
  const dir = fs.mkdtempSync(path.join(os.tmpdir(), 'secrets-'));
  made.push(dir);
  return dir;
}

export function removeTempDirs(): void {
  for (const d of made.splice(0)) fs.rmSync(d, { recursive: true, force: true });
}

/** Writes `content` to dir/rel with `mode` (chmod after write, so the umask does not decide). */
export function writeSecretFile(dir: string, rel: string, content: string | Buffer, mode = 0o600): string {
  const abs = path.join(dir, rel);
  fs.mkdirSync(path.dirname(abs), { recursive: true });
  fs.writeFileSync(abs, content);
  fs.chmodSync(abs, mode);
  return abs;
}

export function storeOf(dir: string, decls: Record<string, SecretDeclaration>, env: NodeJS.ProcessEnv = {}): SecretStore {
  return new SecretStore(decls, { coreDir: dir, env });
}

export function binding(secret: string, env: string, opts: { ttl_ms?: number | null; expires_at?: string | null } = {}): SecretBindingRequest {
  return { secret, env, ttl_ms: opts.ttl_ms === undefined ? 60_000 : opts.ttl_ms, expires_at: opts.expires_at ?? null };
}

/** Every printed or serialised form of `x` must be free of every value (and its base64). */
export function assertNoLeak(x: unknown, values: readonly string[], what: string): void {
  const forms = [
    JSON.stringify(x) ?? '',
    inspect(x, { showHidden: true, depth: Infinity, getters: true }),
    String(x),
    `${(x as { message?: unknown })?.message ?? ''}`,
    `${(x as { stack?: unknown })?.stack ?? ''}`,
  ];
  for (const v of values) {
    for (const f of forms) {
      assert.ok(!f.includes(v), `${what} shows a secret value in: ${f.slice(0, 300)}`);
      assert.ok(!f.includes(Buffer.from(v).toString('base64')), `${what} shows a secret value (base64) in: ${f.slice(0, 300)}`);
      assert.ok(!f.includes(Buffer.from(v).toString('hex')), `${what} shows a secret value (hex) in: ${f.slice(0, 300)}`);
      // util.inspect prints a Buffer as '<Buffer 68 75 ...>'.
      const spaced = [...Buffer.from(v)].map((b) => b.toString(16).padStart(2, '0')).join(' ');
      assert.ok(!f.includes(spaced), `${what} shows a secret value (Buffer bytes) in: ${f.slice(0, 300)}`);
    }
  }
}

/** Awaits `p`, expects a SecretError with `code`, checks it leaks none of `values`, returns it. */
export async function rejectsWith(p: Promise<unknown>, code: SecretErrorCode, values: readonly string[] = []): Promise<SecretError> {
  try {
    await p;
  } catch (err) {
    assert.ok(err instanceof SecretError, `expected SecretError ${code}, got ${String(err)}`);
    assert.equal(err.code, code, err.message);
    assertNoLeak(err, values, `error ${code}`);
    return err;
  }
  assert.fail(`expected ${code}, but it succeeded`);
}
