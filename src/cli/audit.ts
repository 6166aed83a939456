// `supervisor audit verify`: check the hash chains of runtime events in the store.
import { cliIo } from './io.js';
import { existsSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { chainHashes, openStore, sessionKnown, verifyAllChains, verifyChain, type ChainVerification, type Database } from '../store/index.js';
import { defaultStateDir } from './state-dir.js';
import { UsageError } from './usage.js';
import { storeUrlOf, type ControlPlaneChain } from './control-plane-cli.js';

export const AUDIT_HELP = `Usage: supervisor audit verify [--session ID] [--json] [--state-dir DIR] [--store URL]

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
  --store URL      verify your sessions' chains on the PostgreSQL control plane instead
                   (postgres://user@host:5432/db; default $SUPERVISOR_STORE_URL). A run started
                   with --store copies each event of its chain there with the event's seq and
                   hash on this host; where this state dir holds that run, every copy is
                   compared with the local chain, so a local chain rewritten after the copy is
                   caught. --session takes the control-plane id or the run's local session id.

Exit status:
  0  every chain checked is intact
  1  at least one chain is broken (with --store: or a local chain differs from its copy)
  2  nothing could be checked: unknown session, no store in the state dir, or bad usage

Someone who can rewrite the whole store can also recompute every hash: copy the printed head
hashes somewhere else to catch that (docs/audit.md).
`;

interface Options {
  session: string | null;
  json: boolean;
  stateDir: string;
  store: string | undefined;
}

function parse(argv: string[]): Options | 'help' {
  const o: Options = { session: null, json: false, stateDir: defaultStateDir(), store: undefined };
  let storeFlag: string | undefined;
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
    } else if (a === '--store') {
      const v = argv[++i];
      if (!v || v.startsWith('-')) throw new UsageError('--store needs a PostgreSQL URL, e.g. --store postgres://user@host:5432/supervisor');
      storeFlag = v;
    } else throw new UsageError(`unknown option ${a} for audit verify; see supervisor audit --help`);
  }
  o.store = storeUrlOf(storeFlag);
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
  return o.store !== undefined ? verifyOnControlPlane(o, o.store) : verify(o);
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

/** How a control-plane chain's copies compare with this host's chain of the same run. */
interface AnchorCheck {
  /**
   * here: this state dir holds the run and every copy was compared; elsewhere: it does not;
   * imported: its session here was taken over from this copy (decision 129), a chain of its own; none: no copies.
   */
  where: 'here' | 'elsewhere' | 'imported' | 'none';
  localSession: string | null;
  anchors: number;
  matched: number;
  /** The first local seq whose event differs from its copy (or is missing here); null: none. */
  differsAt: number | null;
}

function checkAnchors(db: Database | null, anchors: readonly { localSession: string; localSeq: number; localHash: string }[]): AnchorCheck {
  const localSession = anchors[0]?.localSession ?? null;
  if (localSession === null) return { where: 'none', localSession, anchors: 0, matched: 0, differsAt: null };
  if (db === null || !sessionKnown(db, localSession)) return { where: 'elsewhere', localSession, anchors: anchors.length, matched: 0, differsAt: null };
  const local = chainHashes(db, localSession);
  let matched = 0;
  let differsAt: number | null = null;
  for (const a of anchors) {
    if (a.localSession === localSession && local.get(a.localSeq) === a.localHash) matched++;
    else differsAt ??= a.localSeq;
  }
  return { where: 'here', localSession, anchors: anchors.length, matched, differsAt };
}

/**
 * Each copy compared with this host's chain of its run. A copy another copy's run imported its
 * session from (decision 129) is not compared, when that importing copy matches this host's chain
 * whole: this host's session is the import, a chain of its own. The control plane says so (the
 * importing run's first copied event, written under its lease), never this host's chain alone,
 * which whoever rewrites it could make say anything.
 */
function compareWithHost(db: Database | null, chains: readonly ControlPlaneChain[]): AnchorCheck[] {
  const plain = chains.map((c) => checkAnchors(db, c.anchors));
  const importedHere = new Set(chains.flatMap((c, i) => (c.importedFrom !== null && plain[i]!.where === 'here' && plain[i]!.differsAt === null ? [c.importedFrom] : [])));
  return chains.map((c, i) => (importedHere.has(c.verification.sessionId) ? { ...plain[i]!, where: 'imported' as const, matched: 0, differsAt: null } : plain[i]!));
}

function anchorText(a: AnchorCheck): string {
  switch (a.where) {
    case 'none':
      return 'no copies of a host chain';
    case 'elsewhere':
      return `${a.anchors} event(s) copied from run ${a.localSession}, which this state dir does not hold (check it on its host)`;
    case 'imported':
      return `${a.anchors} event(s) copied from run ${a.localSession} on another machine; this state dir's ${a.localSession} was resumed from this copy and has a chain of its own`;
    case 'here':
      return a.differsAt === null
        ? `all ${a.anchors} copied event(s) match this host's chain of ${a.localSession}`
        : `DIFFERS: this host's chain of ${a.localSession} does not match its copy at seq ${a.differsAt} (${a.matched} of ${a.anchors} match): the local chain was changed after it was copied`;
  }
}

function linkText(l: { anchors: number; breakAt: number | null; why: string | null }): string {
  if (l.breakAt !== null) return `DIFFERS: the copy of local seq ${l.breakAt}: ${l.why}`;
  return l.anchors === 0 ? 'no copies to link' : `the ${l.anchors} copies form one hash chain, as the host's chain did`;
}

function transcriptText(t: { messages: number; differsAt: number | null; why: string | null }): string {
  if (t.differsAt !== null) return `DIFFERS: copied message seq ${t.differsAt}: ${t.why} (the copy is not what this run's chain vouches for)`;
  return t.messages === 0 ? 'no copied messages' : `all ${t.messages} copied message(s) match the content hashes in this chain`;
}

async function verifyOnControlPlane(o: Options, url: string): Promise<number> {
  const { controlPlaneAudit } = await import('./control-plane-cli.js');
  const { store, chains } = await controlPlaneAudit(url, o.session);
  if (o.session !== null && chains.length === 0) {
    return cannotVerify(o, store, 'SESSION_NOT_FOUND', `no session ${JSON.stringify(o.session)} of yours on the control plane at ${store}; run without --session to verify all of yours (supervisor sessions --store lists them)`);
  }
  const localFile = join(o.stateDir, 'supervisor.db');
  const db = existsSync(localFile) ? openStore(localFile, { checkpointer: false }) : null;
  let results;
  try {
    const compared = compareWithHost(db, chains);
    results = chains.map((c, i) => ({ ...c.verification, anchors: compared[i]!, links: c.links, transcript: c.transcript }));
  } finally {
    db?.close();
  }
  const broken = results.filter((r) => !r.ok).length;
  const differing = results.filter((r) => r.anchors.differsAt !== null).length;
  const copiesUnvouched = results.filter((r) => r.transcript.differsAt !== null || r.links.breakAt !== null).length;
  const summary = { ok: broken === 0 && differing === 0 && copiesUnvouched === 0, store, checked: results.length, intact: results.length - broken, broken, differing, copiesUnvouched, sessions: results };
  if (o.json) {
    cliIo().stdout.write(JSON.stringify(summary) + '\n');
  } else {
    cliIo().stdout.write(`control plane ${store}\n`);
    for (const r of results) {
      if (r.ok) cliIo().stdout.write(`ok      ${r.sessionId}  ${r.count} event(s)  head ${r.head ?? '(none)'}\n        ${anchorText(r.anchors)}\n        ${linkText(r.links)}\n        ${transcriptText(r.transcript)}\n`);
      else cliIo().stdout.write(`BROKEN  ${r.sessionId}  event ${r.seq}, field ${r.field}: ${r.detail}\n`);
    }
    cliIo().stdout.write(`checked ${results.length} session(s): ${summary.intact} intact, ${broken} broken, ${differing} differing from this host's chain, ${copiesUnvouched} with copies the chain does not vouch for\n`);
  }
  return summary.ok ? 0 : 1;
}
