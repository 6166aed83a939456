// macOS: a sandbox-exec (Seatbelt) profile with the bubblewrap tier's semantics: deny by default,
// read the system libraries and the granted paths, write only the writable paths, no network
// unless granted. Paths enter as -D parameters, never spliced into the profile text, so no path
// can change the profile. UNVERIFIED: built and unit-tested on Linux, never run on a Mac yet.
import { realpathSync } from 'node:fs';
import { dirname } from 'node:path';
import { within, type HostLayout, type ValidatedSpec } from './spec.js';

export const SANDBOX_EXEC = '/usr/bin/sandbox-exec';

/** Read-only in every profile: what dyld, libSystem, a shell and node load. */
const SYSTEM_READ = ['/usr/lib', '/usr/bin', '/usr/share', '/bin', '/System/Library', '/Library/Apple', '/private/var/db/dyld', '/private/var/db/timezone', '/private/etc'];
/** Devices a program expects; written only where harmless. */
const DEVICES_READ = ['/dev/null', '/dev/zero', '/dev/random', '/dev/urandom', '/dev/dtracehelper'];
const DEVICES_WRITE = ['/dev/null', '/dev/zero', '/dev/dtracehelper'];

export function darwinLayout(): HostLayout {
  const nodeDir = dirname(safeRealpath(process.execPath));
  const visible = [...SYSTEM_READ];
  if (!visible.some((r) => within(nodeDir, r))) visible.push(nodeDir);
  return { visibleRoots: visible, noWriteRoots: [...visible, '/usr', '/Library', '/Applications', '/etc'], reserved: ['/dev', '/proc'] };
}

export interface SeatbeltProfile {
  /** The profile text (SBPL); every path in it is a (param "…") reference. */
  profile: string;
  /** -D NAME=VALUE pairs, in order. */
  params: [string, string][];
}

export function seatbeltProfile(spec: ValidatedSpec, layout: HostLayout = darwinLayout()): SeatbeltProfile {
  const params: [string, string][] = [];
  const param = (prefix: string, path: string): string => {
    const name = `${prefix}_${params.length}`;
    // Seatbelt matches resolved paths (/tmp is /private/tmp): give it the real one.
    params.push([name, safeRealpath(path)]);
    return `(subpath (param "${name}"))`;
  };
  const lines = [
    '(version 1)',
    '(deny default)',
    // Its own children and signals among them; nothing outside the sandbox.
    '(allow process-fork)',
    '(allow process-exec)',
    '(allow signal (target same-sandbox))',
    '(allow process-info* (target same-sandbox))',
    '(allow sysctl-read)',
    // stat() on any path: realpath and module resolution walk every parent. Leaks existence, not contents.
    '(allow file-read-metadata)',
    `(allow file-read* ${layout.visibleRoots.map((r) => param('SYS', r)).join(' ')})`,
    `(allow file-read* ${DEVICES_READ.map((d) => `(literal "${d}")`).join(' ')})`,
    `(allow file-write* ${DEVICES_WRITE.map((d) => `(literal "${d}")`).join(' ')})`,
    '(allow file-ioctl (literal "/dev/dtracehelper"))',
  ];
  for (const b of spec.binds) {
    const ref = param(b.writable ? 'RW' : 'RO', b.path);
    lines.push(b.writable ? `(allow file-read* file-write* ${ref})` : `(allow file-read* ${ref})`);
  }
  // Seatbelt applies the last matching rule: masks after the allows hide secret sources and the state dir.
  for (const m of spec.masks) lines.push(`(deny file-read* file-write* ${param('MASK', m)})`);
  if (spec.network) lines.push('(allow network*)', '(allow system-socket)', '(allow mach-lookup (global-name "com.apple.dnssd.service"))');
  return { profile: `${lines.join('\n')}\n`, params };
}

export function sandboxExecArgs(spec: ValidatedSpec, layout?: HostLayout): string[] {
  const { profile, params } = seatbeltProfile(spec, layout);
  const args = ['-p', profile];
  for (const [k, v] of params) args.push('-D', `${k}=${v}`);
  // spec.command is absolute (validated), so sandbox-exec's option parser cannot mistake it for a flag.
  args.push(spec.command, ...spec.args);
  return args;
}

function safeRealpath(p: string): string {
  try {
    return realpathSync(p);
  } catch {
    return p;
  }
}
