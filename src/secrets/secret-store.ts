// The supervisor's secret store: built from the core's declarations, it resolves a value only when
// a binding asks for it, and remembers every value it handed out so the redactor can remove them.
import type { CoreSnapshot } from '../core/index.js';
import type { SecretDeclaration } from '../core/secrets-schema.js';
import { RedactionSet } from '../redaction/index.js';
import { SecretError } from './errors.js';
import { SecretValue } from './secret-value.js';
import { sourceFor, type SecretSource } from './sources.js';

export interface SecretStoreOptions {
  /** Absolute core directory; relative file sources resolve against it. */
  readonly coreDir: string;
  /** The supervisor's environment for env sources; defaults to process.env, read at resolve time. */
  readonly env?: NodeJS.ProcessEnv;
  readonly platform?: NodeJS.Platform;
}

export class SecretStore {
  readonly #sources = new Map<string, SecretSource>();
  /** Every distinct value resolved so far (latin1 key → bytes), for knownValues(). */
  readonly #known = new Map<string, Buffer>();
  /** The same values as text, live: running streams of this session redact what is resolved later. */
  readonly #redaction = new RedactionSet();

  constructor(declarations: Readonly<Record<string, Readonly<SecretDeclaration>>>, opts: SecretStoreOptions) {
    const ctx = { coreDir: opts.coreDir, env: opts.env ?? process.env, platform: opts.platform ?? process.platform };
    for (const [name, decl] of Object.entries(declarations)) this.#sources.set(name, sourceFor(decl, { ...ctx, name }));
  }

  /** The store for a loaded core: its `secrets:` declarations, relative files below its directory. */
  static fromCore(core: Pick<CoreSnapshot, 'dir' | 'agent'>, opts: Omit<SecretStoreOptions, 'coreDir'> = {}): SecretStore {
    return new SecretStore((core.agent.secrets ?? {}) as Record<string, SecretDeclaration>, { ...opts, coreDir: core.dir });
  }

  has(name: string): boolean {
    return this.#sources.has(name);
  }

  /** Declared names, sorted. */
  names(): string[] {
    return [...this.#sources.keys()].sort();
  }

  /** What kind of source holds `name` and where, for audit metadata; null when undeclared. */
  describe(name: string): { kind: SecretSource['kind']; where: string } | null {
    const s = this.#sources.get(name);
    return s === undefined ? null : { kind: s.kind, where: s.where };
  }

  /**
   * Reads the value now (no cache: a rotated source is picked up) for the binding step. Throws
   * SecretError secret.unknown or secret.source_failed. Callers check the grant first.
   */
  async resolve(name: string): Promise<SecretValue> {
    const source = this.#sources.get(name);
    if (source === undefined) {
      const known = this.#sources.size === 0 ? 'the core declares none' : `declared: ${this.names().join(', ')}`;
      throw new SecretError('secret.unknown', `secret ${name} is not declared (${known}); declare it under secrets: in agent.yaml`, { secret: name });
    }
    const bytes = await source.read();
    const value = new SecretValue(name, bytes);
    const key = bytes.toString('latin1');
    if (!this.#known.has(key)) {
      this.#known.set(key, Buffer.from(bytes));
      // Before the value is handed to anyone: every running stream redacts it from its next bytes.
      this.#redaction.add([bytes.toString('utf8')]);
    }
    bytes.fill(0);
    return value;
  }

  /** How many distinct values were resolved so far: it only grows, so callers can cache by it. */
  get knownCount(): number {
    return this.#known.size;
  }

  /** Every value resolved so far as text, updated as values are resolved (for running streams). */
  get redaction(): RedactionSet {
    return this.#redaction;
  }

  /** Copies of every value resolved so far, for the redactor (a rotated secret's old value stays). */
  knownValues(): Buffer[] {
    return [...this.#known.values()].map((b) => Buffer.from(b));
  }

  toJSON(): { secrets: string[] } {
    return { secrets: this.names() };
  }

  [Symbol.for('nodejs.util.inspect.custom')](): string {
    return `SecretStore { secrets: [${this.names().join(', ')}], resolved: ${this.#known.size} }`;
  }
}
