// Where a value lives. Each source reads at resolve time (so a rotated file or variable is picked
// up by the next binding) and fails with secret.source_failed, naming where it looked, never what
// it found there.
import * as fs from 'node:fs/promises';
import { constants as fsc } from 'node:fs';
import * as path from 'node:path';
import type { SecretDeclaration } from '../core/secrets-schema.js';
import { SecretError } from './errors.js';

/** Upper bound for one value: a credential, not a data file. Larger files are refused unread. */
export const MAX_SECRET_BYTES = 64 * 1024;

export interface SecretSource {
  readonly kind: 'env' | 'file' | 'keychain';
  /** Where the value lives, for audit metadata and messages ('file /run/secrets/db'); never the value. */
  readonly where: string;
  /** The raw value; throws SecretError('secret.source_failed'). */
  read(): Promise<Buffer>;
}

export interface SourceContext {
  /** The secret's declared name, for messages. */
  readonly name: string;
  /** Absolute core directory: relative file paths resolve against it. */
  readonly coreDir: string;
  /** The supervisor's environment (process.env unless a caller passes another). */
  readonly env: NodeJS.ProcessEnv;
  readonly platform: NodeJS.Platform;
}

export function sourceFor(decl: SecretDeclaration, ctx: SourceContext): SecretSource {
  if (decl.env !== undefined) return new EnvSecretSource(ctx.name, decl.env, ctx.env);
  if (decl.file !== undefined) return new FileSecretSource(ctx.name, resolveSecretPath(decl.file, ctx.coreDir), ctx.platform);
  if (decl.keychain !== undefined) return new KeychainSecretSource(ctx.name, decl.keychain.service, decl.keychain.account, ctx.platform);
  throw new SecretError('secret.source_failed', `secret ${ctx.name} declares no source; write env: VAR or file: path under secrets.${ctx.name} in agent.yaml`, { secret: ctx.name });
}

/** Absolute paths stay as written; relative ones are relative to the core directory. */
export function resolveSecretPath(written: string, coreDir: string): string {
  if (path.isAbsolute(written)) return path.normalize(written);
  return path.resolve(coreDir, ...written.split('/'));
}

export class EnvSecretSource implements SecretSource {
  readonly kind = 'env' as const;
  readonly where: string;
  constructor(
    private readonly name: string,
    private readonly variable: string,
    private readonly env: NodeJS.ProcessEnv,
  ) {
    this.where = `environment variable ${variable}`;
  }

  async read(): Promise<Buffer> {
    const v = this.env[this.variable];
    if (v === undefined) {
      throw new SecretError('secret.source_failed', `secret ${this.name}: the supervisor's environment variable ${this.variable} is not set; export it before starting the supervisor`, { secret: this.name });
    }
    if (v.length === 0) {
      throw new SecretError('secret.source_failed', `secret ${this.name}: the supervisor's environment variable ${this.variable} is empty; an empty value cannot be bound or redacted, set the credential`, { secret: this.name });
    }
    return Buffer.from(v, 'utf8');
  }
}

/**
 * A file read whole at resolve time; one trailing newline (\n or \r\n) is trimmed because editors
 * and `echo` add it and no credential ends in one. On POSIX the file must not be readable or
 * writable by group or others (as ssh demands of private keys): a secret every local user can read
 * is already leaked, and a writable one can be swapped.
 */
export class FileSecretSource implements SecretSource {
  readonly kind = 'file' as const;
  readonly where: string;
  constructor(
    private readonly name: string,
    private readonly file: string,
    private readonly platform: NodeJS.Platform,
  ) {
    this.where = `file ${file}`;
  }

  async read(): Promise<Buffer> {
    const fail = (why: string): never => {
      throw new SecretError('secret.source_failed', `secret ${this.name}: file ${this.file} ${why}`, { secret: this.name });
    };
    let fh: fs.FileHandle | undefined;
    try {
      // O_NONBLOCK: opening a FIFO must not hang the supervisor; it is refused below as not regular.
      const flags = fsc.O_RDONLY | (this.platform === 'win32' ? 0 : fsc.O_NONBLOCK);
      fh = await fs.open(this.file, flags).catch((err: NodeJS.ErrnoException) => fail(openProblem(err)));
      const st = await fh.stat();
      if (!st.isFile()) fail('is not a regular file; point file: at a plain file holding only the credential');
      if (this.platform !== 'win32' && (st.mode & 0o077) !== 0) {
        fail(`is accessible by group or others (mode ${(st.mode & 0o777).toString(8).padStart(4, '0')}); restrict it with chmod 600`);
      }
      // A second hard link is a second name for the credential that no sandbox mask covers.
      if (this.platform !== 'win32' && st.nlink > 1) fail(`has ${st.nlink} hard links, so it can be read under another name; keep one link (remove the others, or copy the credential into a new file with chmod 600)`);
      if (st.size > MAX_SECRET_BYTES) fail(`is larger than ${MAX_SECRET_BYTES} bytes (${st.size}); a secret file holds one credential`);
      const buf = Buffer.alloc(MAX_SECRET_BYTES + 1);
      let n = 0;
      for (;;) {
        const { bytesRead } = await fh.read(buf, n, buf.length - n, n);
        if (bytesRead === 0) break;
        n += bytesRead;
        if (n > MAX_SECRET_BYTES) fail(`grew beyond ${MAX_SECRET_BYTES} bytes while it was read; a secret file holds one credential`);
      }
      let end = n;
      if (end > 0 && buf[end - 1] === 0x0a) end--;
      if (end > 0 && buf[end - 1] === 0x0d && end < n) end--;
      if (end === 0) fail('is empty; an empty value cannot be bound or redacted, write the credential into it');
      const out = Buffer.from(buf.subarray(0, end));
      buf.fill(0);
      return out;
    } finally {
      await fh?.close().catch(() => undefined);
    }
  }
}

function openProblem(err: NodeJS.ErrnoException): string {
  switch (err.code) {
    case 'ENOENT':
      return 'does not exist; create it (mode 600) or fix file: in agent.yaml (relative paths are relative to the core)';
    case 'EACCES':
    case 'EPERM':
      return 'cannot be read by the supervisor (permission denied); make it readable by the user the supervisor runs as, and by nobody else';
    case 'EISDIR':
      return 'is a directory; point file: at a plain file holding only the credential';
    default:
      return `cannot be opened (${err.code ?? 'unknown error'}); check the path and its permissions`;
  }
}

/** Declared for cores that name an OS keychain entry; no platform is implemented yet. */
export class KeychainSecretSource implements SecretSource {
  readonly kind = 'keychain' as const;
  readonly where: string;
  constructor(
    private readonly name: string,
    service: string,
    account: string,
    private readonly platform: NodeJS.Platform,
  ) {
    this.where = `keychain ${service}/${account}`;
  }

  async read(): Promise<Buffer> {
    throw new SecretError(
      'secret.source_failed',
      `secret ${this.name}: keychain sources are not implemented on this platform (${this.platform}); declare it with env: VAR or file: path in agent.yaml`,
      { secret: this.name },
    );
  }
}
