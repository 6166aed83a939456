// `supervisor audit verify`: check the hash chains of runtime events in the store.
import { cliIo } from './io.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { openStore, sessionKnown, verifyAllChains, verifyChain, type ChainVerification, type Database } from '../store/index.js';
import { defaultStateDir } from './state-dir.js';
import { UsageError } from './usage.js';

export const AUDIT_HELP = `Usage: supervisor audit verify [--session ID] [--json] [--state-dir DIR]

Checks the hash-chained runtime events in the store (<state dir>/supervisor.db). Each event's hash
covers the previous event's hash and the event itself (session, seq, kind, at, payload); a head
kept in its own table records the newest seq and hash. Without --session every session is checked.
A broken chain is reported with its session, the seq of the first bad event and the field that is
wrong (hash, prev_hash, seq, payload, head or missing).

Options:
  --session ID     check this session only
  --json           print one JSON object: {ok, store, checked, intact, broken, sessions: [...]}
  --state-dir DIR  the supervisor's state directory (default: $SUPERVISOR_STATE_DIR, else
                   $XDG_STATE_HOME/isolation-supervisor, else ~/.local/state/isolation-supervisor)

Exit status:
  0  every chain checked is intact
  1  at least one chain is broken
  2  nothing could be checked: unknown session, no store in the state dir, or bad usage

Someone who can rewrite the whole store can also recompute every hash: copy the printed head
hashes somewhere else to catch that (docs/audit.md).
`;

interface Options {
  session: string | null;
  json: boolean;
  stateDir: string;
}

function parse(argv: string[]): Options | 'help' {
  const o: Options = { session: null, json: false, stateDir: defaultStateDir() };
  for (let i = 0; i < argv.length; i++) {
    const a = argv[i]!;
    if (a === '-h' || a === '--help') return 'help';
    else if (a === '--json') o.json = true;
    else if (a === '--session') {
      const v = argv[++i];
      if (!v || v.startsWith('-')) throw new UsageError('--session needs a session id, e.g. --session se_0123456789abcdef01234567');
      if (o.session !== null) throw new UsageError('--session was given twice; verify one session, or leave --session out to verify all');
      o.session = v;
    } else if (a === '--state-dir') {
      const v = argv[++i];
      if (!v) throw new UsageError('--state-dir needs a directory');
      o.stateDir = resolve(v);
    } else throw new UsageError(`unknown option ${a} for audit verify; see supervisor audit --help`);
  }
  return o;
}

export async function runAudit(argv: string[]): Promise<number> {
  const [sub, ...rest] = argv;
  if (sub === undefined || sub === '-h' || sub === '--help' || sub === 'help') {
    cliIo().stdout.write(AUDIT_HELP);
    return sub === undefined ? 2 : 0;
  }
  if (sub !== 'verify') throw new UsageError(`unknown audit command ${JSON.stringify(sub)}; the only one is "verify" (supervisor audit verify --help)`);
  const o = parse(rest);
  if (o === 'help') {
    cliIo().stdout.write(AUDIT_HELP);
    return 0;
  }
  return verify(o);
}

function cannotVerify(o: Options, store: string, code: string, message: string): number {
  if (o.json) cliIo().stdout.write(JSON.stringify({ ok: false, store, error: { code, message } }) + '\n');
  else cliIo().stderr.write(`supervisor audit verify: ${message}\n`);
  return 2;
}

function verify(o: Options): number {
  const store = join(o.stateDir, 'supervisor.db');
  // Opening would create an empty store, which would then "verify" clean: a wrong --state-dir
  // must not look like an intact audit log.
  if (!existsSync(store)) {
    return cannotVerify(o, store, 'STORE_NOT_FOUND', `no store at ${store}; pass --state-dir with the directory the supervisor ran with (or set SUPERVISOR_STATE_DIR)`);
  }
  let db: Database;
  try {
    db = openStore(store);
  } catch (err) {
    return cannotVerify(o, store, (err as { code?: string }).code ?? 'STORE_OPEN_FAILED', `cannot open the store at ${store}: ${(err as Error).message}`);
  }
  let results: ChainVerification[];
  try {
    if (o.session !== null) {
      if (!sessionKnown(db, o.session)) {
        return cannotVerify(o, store, 'SESSION_NOT_FOUND', `session ${JSON.stringify(o.session)} is not in the store at ${store}; run without --session to verify every session`);
      }
      results = [verifyChain(db, o.session)];
    } else {
      results = verifyAllChains(db);
    }
  } catch (err) {
    // A file that opened but cannot be read as our schema (truncated, not a database) cannot be checked.
    return cannotVerify(o, store, (err as { code?: string }).code ?? 'STORE_READ_FAILED', `cannot read the store at ${store}: ${(err as Error).message}`);
  } finally {
    db.close();
  }
  const broken = results.filter((r) => !r.ok).length;
  const summary = { ok: broken === 0, store, checked: results.length, intact: results.length - broken, broken, sessions: results };
  if (o.json) {
    cliIo().stdout.write(JSON.stringify(summary) + '\n');
  } else {
    cliIo().stdout.write(`store ${store}\n`);
    for (const r of results) {
      if (r.ok) cliIo().stdout.write(`ok      ${r.sessionId}  ${r.count} event(s)  head ${r.head ?? '(none)'}\n`);
      else cliIo().stdout.write(`BROKEN  ${r.sessionId}  event ${r.seq}, field ${r.field}: ${r.detail}\n`);
    }
    cliIo().stdout.write(`checked ${results.length} session(s): ${summary.intact} intact, ${broken} broken\n`);
  }
  return broken === 0 ? 0 : 1;
}
