// The core commands' flags: booleans, single values, repeatable values and positionals;
// `--name=value` and `--name value` both work; `--` ends the flags. Node's util.parseArgs does the
// tokenizing; this file keeps the rules and the messages (a value may look like a flag, a single
// dash is a positional, a single value given twice is refused).
import { parseArgs } from 'node:util';
import { UsageError } from './usage.js';

export interface FlagSpec {
  bool?: readonly string[];
  value?: readonly string[];
  multi?: readonly string[];
}

export interface ParsedFlags {
  help: boolean;
  bool: Set<string>;
  value: Map<string, string>;
  multi: Map<string, string[]>;
  positionals: string[];
}

type OptionSpec = { type: 'boolean' | 'string'; multiple?: boolean };

export function parseFlags(argv: readonly string[], spec: FlagSpec, command: string): ParsedFlags {
  const out: ParsedFlags = { help: false, bool: new Set(), value: new Map(), multi: new Map(), positionals: [] };
  const options: Record<string, OptionSpec> = {};
  for (const name of spec.bool ?? []) options[name] = { type: 'boolean' };
  for (const name of spec.value ?? []) options[name] = { type: 'string' };
  for (const name of spec.multi ?? []) options[name] = { type: 'string', multiple: true };
  // Not strict: unknown flags and dash-led values come back as tokens, judged below.
  const { tokens } = parseArgs({ args: [...argv], options, strict: false, allowPositionals: true, tokens: true });
  let lastShortIndex = -1;
  for (const t of tokens) {
    if (t.kind === 'positional') out.positionals.push(t.value);
    else if (t.kind === 'option-terminator') continue;
    else if (t.rawName === '-h' || t.rawName === '--help') out.help = true;
    else if (!t.rawName.startsWith('--')) {
      // -x, -5, -abc (one token per letter, same index): not flags here, one positional each.
      if (t.index !== lastShortIndex) out.positionals.push(argv[t.index]!);
      lastShortIndex = t.index;
    } else takeOption(out, spec, command, t.name, t.value, t.inlineValue === true);
  }
  return out;
}

function takeOption(out: ParsedFlags, spec: FlagSpec, command: string, name: string, value: string | undefined, inline: boolean): void {
  const needValue = (): string => {
    if (value === undefined) throw new UsageError(`--${name} needs a value; see supervisor ${command} --help`);
    return value;
  };
  if (spec.bool?.includes(name)) {
    if (inline) throw new UsageError(`--${name} takes no value`);
    out.bool.add(name);
  } else if (spec.value?.includes(name)) {
    if (out.value.has(name)) throw new UsageError(`--${name} given twice`);
    out.value.set(name, needValue());
  } else if (spec.multi?.includes(name)) {
    out.multi.set(name, [...(out.multi.get(name) ?? []), needValue()]);
  } else {
    throw new UsageError(`unknown option --${name} for ${command}; see supervisor ${command} --help`);
  }
}
