// A small flag parser for the core commands: booleans, single values, repeatable values and
// positionals; `--name=value` and `--name value` both work; `--` ends the flags.
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

export function parseFlags(argv: readonly string[], spec: FlagSpec, command: string): ParsedFlags {
  const out: ParsedFlags = { help: false, bool: new Set(), value: new Map(), multi: new Map(), positionals: [] };
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') {
      out.positionals.push(...argv.slice(i + 1));
      break;
    }
    if (arg === '-h' || arg === '--help') {
      out.help = true;
      continue;
    }
    if (!arg.startsWith('--')) {
      out.positionals.push(arg);
      continue;
    }
    const eq = arg.indexOf('=');
    const name = arg.slice(2, eq < 0 ? undefined : eq);
    const inline = eq < 0 ? undefined : arg.slice(eq + 1);
    const take = (): string => {
      const v = inline ?? argv[++i];
      if (v === undefined) throw new UsageError(`--${name} needs a value; see supervisor ${command} --help`);
      return v;
    };
    if (spec.bool?.includes(name)) {
      if (inline !== undefined) throw new UsageError(`--${name} takes no value`);
      out.bool.add(name);
    } else if (spec.value?.includes(name)) {
      if (out.value.has(name)) throw new UsageError(`--${name} given twice`);
      out.value.set(name, take());
    } else if (spec.multi?.includes(name)) {
      out.multi.set(name, [...(out.multi.get(name) ?? []), take()]);
    } else {
      throw new UsageError(`unknown option --${name} for ${command}; see supervisor ${command} --help`);
    }
  }
  return out;
}
