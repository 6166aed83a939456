// Pure parsers for what macOS hands out about processes: struct proc_bsdinfo (proc_pidinfo), the
// KERN_PROCARGS2 buffer (argc, exec path, argv, environment), struct timeval (kern.boottime) and
// `ps` output. No OS access here: everything is unit-tested on Linux with synthetic buffers.

/**
 * struct proc_bsdinfo, from <sys/proc_info.h> (xnu bsd/sys/proc_info.h, checked against
 * apple-oss-distributions/xnu and the cgo -godefs output for darwin/amd64 in elastic/go-sysinfo,
 * which the compiler produced from the real header):
 *
 *   off  size  field
 *     0     4  uint32_t pbi_flags          PROC_FLAG_* (SYSTEM 0x1, TRACED 0x2, INEXIT 0x4, SLEADER 0x20, ...)
 *     4     4  uint32_t pbi_status         p_stat: SIDL 1, SRUN 2, SSLEEP 3, SSTOP 4, SZOMB 5 (<sys/proc.h>)
 *     8     4  uint32_t pbi_xstatus
 *    12     4  uint32_t pbi_pid
 *    16     4  uint32_t pbi_ppid
 *    20     4  uid_t    pbi_uid
 *    24     4  gid_t    pbi_gid
 *    28     4  uid_t    pbi_ruid
 *    32     4  gid_t    pbi_rgid
 *    36     4  uid_t    pbi_svuid
 *    40     4  gid_t    pbi_svgid
 *    44     4  uint32_t rfu_1              reserved
 *    48    16  char     pbi_comm[MAXCOMLEN]       MAXCOMLEN = 16 (<sys/param.h>)
 *    64    32  char     pbi_name[2 * MAXCOMLEN]
 *    96     4  uint32_t pbi_nfiles
 *   100     4  uint32_t pbi_pgid
 *   104     4  uint32_t pbi_pjobc
 *   108     4  uint32_t e_tdev
 *   112     4  uint32_t e_tpgid
 *   116     4  int32_t  pbi_nice
 *   120     8  uint64_t pbi_start_tvsec    8-aligned already: no padding before it
 *   128     8  uint64_t pbi_start_tvusec
 *   136        sizeof(struct proc_bsdinfo), a multiple of 8: no tail padding
 *
 * The kernel fills pbi_start_* from p->p_start (microtime() at fork; exec keeps it) and pbi_pgid
 * from p->p_pgrpid (xnu bsd/kern/proc_info.c, proc_pidbsdinfo). Both macOS ABIs are little-endian.
 */
export const BSDINFO = {
  size: 136,
  flags: 0,
  status: 4,
  xstatus: 8,
  pid: 12,
  ppid: 16,
  uid: 20,
  gid: 24,
  ruid: 28,
  rgid: 32,
  svuid: 36,
  svgid: 40,
  rfu1: 44,
  comm: 48,
  commLen: 16,
  name: 64,
  nameLen: 32,
  nfiles: 96,
  pgid: 100,
  pjobc: 104,
  tdev: 108,
  tpgid: 112,
  nice: 116,
  startSec: 120,
  startUsec: 128,
} as const;

/** p_stat values, <sys/proc.h>. */
export const SIDL = 1;
export const SRUN = 2;
export const SSLEEP = 3;
export const SSTOP = 4;
export const SZOMB = 5;
export const PROC_FLAG_SYSTEM = 0x1;
export const PROC_FLAG_INEXIT = 0x4;
export const PROC_FLAG_SLEADER = 0x20;

export interface BsdInfo {
  pid: number;
  ppid: number;
  pgid: number;
  status: number;
  flags: number;
  uid: number;
  ruid: number;
  comm: string;
  name: string;
  startSec: bigint;
  startUsec: number;
  /** Microseconds since the epoch, decimal: the start marker. */
  startTime: string;
  zombie: boolean;
}

function cString(buf: Buffer, start: number, len: number): string {
  const end = buf.indexOf(0, start);
  return buf.toString('utf8', start, end >= start && end < start + len ? end : start + len);
}

/** Parses a struct proc_bsdinfo. Null when the buffer is short or the time is not a valid timeval. */
export function parseBsdInfo(buf: Buffer): BsdInfo | null {
  if (buf.length < BSDINFO.size) return null;
  const startSec = buf.readBigUInt64LE(BSDINFO.startSec);
  const usec = buf.readBigUInt64LE(BSDINFO.startUsec);
  if (usec >= 1_000_000n) return null;
  const startUsec = Number(usec);
  const status = buf.readUInt32LE(BSDINFO.status);
  return {
    pid: buf.readUInt32LE(BSDINFO.pid),
    ppid: buf.readUInt32LE(BSDINFO.ppid),
    pgid: buf.readUInt32LE(BSDINFO.pgid),
    status,
    flags: buf.readUInt32LE(BSDINFO.flags),
    uid: buf.readUInt32LE(BSDINFO.uid),
    ruid: buf.readUInt32LE(BSDINFO.ruid),
    comm: cString(buf, BSDINFO.comm, BSDINFO.commLen),
    name: cString(buf, BSDINFO.name, BSDINFO.nameLen),
    startSec,
    startUsec,
    startTime: startTimeOf(startSec, startUsec),
    zombie: status === SZOMB,
  };
}

/** The start marker: microseconds since the epoch as a decimal string. */
export function startTimeOf(sec: bigint, usec: number): string {
  return (sec * 1_000_000n + BigInt(usec)).toString();
}

/**
 * Start times from `ps` have whole seconds only (`coarse`). A marker taken with microseconds is
 * then compared by its second; inside one source the strings are compared exactly.
 */
export function sameStart(a: string, b: string, coarse: boolean): boolean {
  if (!coarse) return a === b;
  return BigInt(a) / 1_000_000n === BigInt(b) / 1_000_000n;
}

/** True when `a` started strictly before `b` (at the source's precision). */
export function startedBefore(a: string, b: string, coarse: boolean): boolean {
  if (!coarse) return BigInt(a) < BigInt(b);
  return BigInt(a) / 1_000_000n < BigInt(b) / 1_000_000n;
}

export interface ProcArgs {
  argc: number;
  execPath: string;
  argv: string[];
  /**
   * Every non-empty string after argv. On macOS the kernel-generated "apple" strings
   * (ptr_munge=, executable_file=, ...) may follow the environment in the same area; their keys
   * never collide with SUPERVISOR_SPAWN_ID, so they are kept here rather than guessed apart.
   */
  env: string[];
  /** The buffer ended inside a string: that partial string was dropped, never matched. */
  truncated: boolean;
}

/**
 * Parses a KERN_PROCARGS2 buffer: int32 argc (host order: little-endian), the exec path, NUL
 * padding up to alignment, then argc NUL-terminated argv strings, then the environment (absent
 * when the kernel withholds it). Bytes are decoded as latin1, so values compare byte for byte.
 * Null when the buffer cannot be the start of such a block (shorter than argc, negative argc).
 */
export function parseProcArgs2(buf: Buffer): ProcArgs | null {
  if (buf.length < 4) return null;
  const argc = buf.readInt32LE(0);
  if (argc < 0 || argc > buf.length) return null;
  const out: ProcArgs = { argc, execPath: '', argv: [], env: [], truncated: false };
  let pos = 4;
  const pathEnd = buf.indexOf(0, pos);
  if (pathEnd < 0) {
    out.truncated = true;
    return out;
  }
  out.execPath = buf.toString('latin1', pos, pathEnd);
  pos = pathEnd + 1;
  while (pos < buf.length && buf[pos] === 0) pos++;
  for (let i = 0; i < argc; i++) {
    if (pos >= buf.length) {
      out.truncated = true;
      return out;
    }
    const end = buf.indexOf(0, pos);
    if (end < 0) {
      out.truncated = true;
      return out;
    }
    out.argv.push(buf.toString('latin1', pos, end));
    pos = end + 1;
  }
  while (pos < buf.length) {
    const end = buf.indexOf(0, pos);
    if (end < 0) {
      // A string cut by the end of the buffer could be a prefix of a longer value: never use it.
      out.truncated = true;
      break;
    }
    if (end > pos) out.env.push(buf.toString('latin1', pos, end));
    pos = end + 1;
  }
  return out;
}

/** True when the environment holds exactly `NAME=value` (not a longer name, not a longer value, not in argv). */
export function envHas(args: ProcArgs | null, name: string, value: string): boolean {
  if (!args) return false;
  const entry = `${name}=${value}`;
  return args.env.includes(entry);
}

/** struct timeval on LP64 macOS: int64 tv_sec, int32 tv_usec, 4 bytes of padding. */
export function parseTimeval(buf: Buffer | null): { sec: bigint; usec: number } | null {
  if (!buf || buf.length < 12) return null;
  const sec = buf.readBigInt64LE(0);
  const usec = buf.readInt32LE(8);
  if (sec <= 0n || usec < 0 || usec >= 1_000_000) return null;
  return { sec, usec };
}

/**
 * The boot identity: kern.bootsessionuuid (a fresh UUID every boot), or else `boottime-<sec>`
 * from kern.boottime (which the kernel may nudge when the clock is set, hence seconds only).
 * Never contains ':' (the spawn record joins platform, boot id and start time with ':').
 */
export function bootIdentity(uuid: string | null, boottime: { sec: bigint } | null): string {
  if (uuid && /^[0-9A-Fa-f-]{16,64}$/.test(uuid)) return uuid.toUpperCase();
  if (boottime) return `boottime-${boottime.sec}`;
  return '';
}

// ---- ps, the fallback when ffi-rs cannot be loaded ----

/**
 * `ps` columns the fallback asks for, in this order. No command column: macOS ps prints p_comm
 * raw, so a program named with a newline could forge a row; these fields are all numbers, a
 * state and a date the kernel formats. LC_ALL=C and TZ=UTC0 make `lstart` (strftime %c)
 * "Mon Jan  2 15:04:05 2006" in UTC.
 */
export const PS_TABLE_ARGS: readonly string[] = ['-axo', 'pid=,ppid=,pgid=,stat=,lstart='];
export const PS_ENV: Readonly<Record<string, string>> = { LC_ALL: 'C', TZ: 'UTC0', PATH: '/usr/bin:/bin:/usr/sbin:/sbin' };

export interface PsRow {
  pid: number;
  ppid: number;
  pgid: number;
  stat: string;
  zombie: boolean;
  /** Whole seconds, in microseconds since the epoch (the same unit as proc_pidinfo's marker). */
  startTime: string;
}

const MONTHS = ['Jan', 'Feb', 'Mar', 'Apr', 'May', 'Jun', 'Jul', 'Aug', 'Sep', 'Oct', 'Nov', 'Dec'];
const DAYS = ['Sun', 'Mon', 'Tue', 'Wed', 'Thu', 'Fri', 'Sat'];
const ROW = /^\s*(\d+)\s+(\d+)\s+(\d+)\s+(\S+)\s+([A-Z][a-z]{2})\s+([A-Z][a-z]{2})\s+(\d{1,2})\s+(\d{2}):(\d{2}):(\d{2})\s+(\d{4})\s*$/;

/** `lstart` in the C locale and UTC, "Mon Jan  2 15:04:05 2006", to seconds since the epoch. */
export function parseLstart(day: string, mon: string, mday: number, h: number, m: number, s: number, year: number): bigint | null {
  const month = MONTHS.indexOf(mon);
  if (month < 0 || !DAYS.includes(day)) return null;
  if (mday < 1 || mday > 31 || h > 23 || m > 59 || s > 60) return null;
  const ms = Date.UTC(year, month, mday, h, m, s);
  const d = new Date(ms);
  // Reject dates that Date.UTC rolled over (Feb 30) and weekdays that do not match the date.
  if (d.getUTCDate() !== mday || DAYS[d.getUTCDay()] !== day) return null;
  return BigInt(ms / 1000);
}

/**
 * Parses `ps -axo pid=,ppid=,pgid=,stat=,lstart=`. A line that does not match the format exactly
 * is rejected, and so is every row of a pid that appears twice (a forged or torn line must not
 * decide membership). Returns the rows and how many lines were rejected.
 */
export function parsePsTable(text: string): { rows: PsRow[]; rejected: number } {
  const byPid = new Map<number, PsRow | null>();
  let rejected = 0;
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const m = ROW.exec(line);
    if (!m) {
      rejected++;
      continue;
    }
    const sec = parseLstart(m[5]!, m[6]!, Number(m[7]), Number(m[8]), Number(m[9]), Number(m[10]), Number(m[11]));
    if (sec === null) {
      rejected++;
      continue;
    }
    const pid = Number(m[1]);
    const row: PsRow = {
      pid,
      ppid: Number(m[2]),
      pgid: Number(m[3]),
      stat: m[4]!,
      zombie: m[4]!.startsWith('Z'),
      startTime: (sec * 1_000_000n).toString(),
    };
    if (byPid.has(pid)) {
      if (byPid.get(pid) !== null) rejected++;
      rejected++;
      byPid.set(pid, null);
      continue;
    }
    byPid.set(pid, row);
  }
  const rows: PsRow[] = [];
  for (const r of byPid.values()) if (r) rows.push(r);
  return { rows, rejected };
}

/**
 * For `ps -wwE -o command= -p <pid>`: the command line with the environment appended (ps reads it
 * through KERN_PROCARGS2 as well). True when `NAME=value` appears as a whole whitespace-separated
 * token. Command names may hold spaces, parentheses or newlines; a token that merely starts or
 * ends with the marker does not count. An argument that is exactly the marker counts too: ps does
 * not separate argv from the environment, which is why this is the fallback only.
 */
export function psCommandHasEnv(text: string, name: string, value: string): boolean {
  const entry = `${name}=${value}`;
  for (const token of text.split(/\s+/)) if (token === entry) return true;
  return false;
}

/** `sysctl -n kern.boottime` prints "{ sec = 1712345678, usec = 123456 } Fri Apr  5 19:34:38 2024". */
export function parseBoottimeText(text: string | null): { sec: bigint } | null {
  const m = text ? /\bsec = (\d+)/.exec(text) : null;
  return m ? { sec: BigInt(m[1]!) } : null;
}

// ---- ps for one process's figures (`supervisor ps`, the web page) ----

/**
 * The columns of one process's figures: ppid, state, resident KiB, CPU time, elapsed time, and its
 * accounting name (p_comm, no arguments) last, since it is the one field the process chose.
 */
export const PS_USAGE_FIELDS = 'pid=,ppid=,stat=,rss=,time=,etime=,ucomm=';

/** One process as `ps -o PS_USAGE_FIELDS -p PID` shows it. */
export interface PsUsage {
  pid: number;
  ppid: number;
  /** The first letter of `stat` (R, S, T, U, Z, I), as Linux shows it. */
  state: string;
  rssKib: number;
  cpuMs: number;
  elapsedMs: number;
  name: string;
}

const USAGE_ROW = /^\s*(\d+)\s+(\d+)\s+([A-Z]\S*)\s+(\d+)\s+(\S+)\s+(\S+)\s?(.*)$/;

/**
 * A `time` or `etime` of ps: "[days-][hours:]minutes:seconds[.fraction]" (macOS prints CPU time as
 * "1:02.50", minutes unbounded; procps prints "01:02:03"). Milliseconds, or null if it is not one.
 */
export function parsePsDuration(text: string): number | null {
  const m = /^(?:(\d+)-)?(?:(\d+):)?(\d+):(\d+)(?:\.(\d{1,3}))?$/.exec(text);
  if (!m) return null;
  const [, d, h, min, s, frac] = m;
  if (Number(s) > 59 || (h !== undefined && Number(min) > 59)) return null;
  const ms = frac === undefined ? 0 : Number(frac.padEnd(3, '0'));
  return (((Number(d ?? 0) * 24 + Number(h ?? 0)) * 60 + Number(min)) * 60 + Number(s)) * 1000 + ms;
}

function usageRow(line: string): PsUsage | null {
  const m = USAGE_ROW.exec(line);
  if (!m) return null;
  const cpuMs = parsePsDuration(m[5]!);
  const elapsedMs = parsePsDuration(m[6]!);
  if (cpuMs === null || elapsedMs === null) return null;
  return { pid: Number(m[1]), ppid: Number(m[2]), state: m[3]!.charAt(0), rssKib: Number(m[4]), cpuMs, elapsedMs, name: m[7]!.trimEnd() };
}

/**
 * The row of `pid` in ps's answer: its first line, which must be that pid's. Every figure is a
 * number the kernel formats and comes before the name, so a name holding a newline can cut the
 * name short but cannot forge a figure (the lines after the first are never read).
 */
export function parsePsUsage(text: string, pid: number): PsUsage | null {
  const first = text.split('\n').find((l) => l.trim() !== '');
  const row = first === undefined ? null : usageRow(first);
  return row !== null && row.pid === pid ? row : null;
}

/**
 * The rows of `ps -o PS_USAGE_FIELDS -p PID,PID,…`, all or nothing: every line must be a row of an
 * asked pid, each pid at most once. A name holding a newline makes a line that is no row, or a
 * second row of a pid (a forged one): the whole answer is refused (null) and the caller asks per
 * pid. A forged row of an asked pid that has exited is never used: the caller checks each pid's
 * identity before its figures.
 */
export function parsePsUsageRows(text: string, asked: ReadonlySet<number>): Map<number, PsUsage> | null {
  const rows = new Map<number, PsUsage>();
  for (const line of text.split('\n')) {
    if (line.trim() === '') continue;
    const row = usageRow(line);
    if (row === null || !asked.has(row.pid) || rows.has(row.pid)) return null;
    rows.set(row.pid, row);
  }
  return rows;
}
