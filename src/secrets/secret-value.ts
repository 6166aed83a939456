// The holder of one resolved value. Everything that prints or serialises it sees `[secret NAME]`,
// so a value that slips into a log line, an event or JSON shows its name, not its bytes.
import { inspect } from 'node:util';

export class SecretValue {
  readonly name: string;
  // An ES private field: not an own enumerable property, so no generic walker (JSON.stringify,
  // util.inspect with showHidden, structuredClone of the holder) can reach the bytes.
  readonly #bytes: Buffer;

  constructor(name: string, bytes: Buffer) {
    this.name = name;
    this.#bytes = Buffer.from(bytes);
    Object.freeze(this);
  }

  get length(): number {
    return this.#bytes.length;
  }

  /**
   * A copy of the value, for the binding step and the supervisor's own use (a provider API key
   * header). Never for output: nothing that reaches a log, an event, the store or a model.
   */
  bytes(): Buffer {
    return Buffer.from(this.#bytes);
  }

  /** Overwrites the held bytes; the holder then yields zeros. Strings made from it are not reached. */
  wipe(): void {
    this.#bytes.fill(0);
  }

  toString(): string {
    return `[secret ${this.name}]`;
  }

  toJSON(): string {
    return `[secret ${this.name}]`;
  }

  [inspect.custom](): string {
    return `[secret ${this.name}]`;
  }
}
