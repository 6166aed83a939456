// `supervisor web`: the operator's page on 127.0.0.1 (src/web/). This file parses the flags, opens
// the store as every operator command does (the same principal), prints the one URL and serves
// until SIGINT/SIGTERM.
import { resolve } from 'node:path';
import { cliIo } from './io.js';
import { displayJson } from '../redaction/index.js';
import { parseFlags } from './flags.js';
import { openForOperator } from './operator.js';
import { controlPlaneOperatorStore, storeUrlOf } from './control-plane-cli.js';
import { sqliteOperatorStore, type OperatorStore } from '../operator/operator-store.js';
import { UsageError } from './usage.js';
import { startWebServer } from '../web/web-server.js';
import { SocketPathError } from '../web/unix-socket.js';
import { launchBrowser, type BrowserLaunch } from '../web/browser-launch.js';
import { defaultStateDir } from './state-dir.js';

export const WEB_HELP = `Usage: supervisor web [--port N | --socket PATH] [--state-dir DIR | --store URL] [--open] [--json]

Serves the operator's page on 127.0.0.1: your sessions, the approval requests your runs wait on
(approve / deny / always), the live process trees of your runs (with cancel) and each session's
timeline, tasks, logs, delegations and audit check, updated live. Prints one URL; the token in its
fragment works once, in the first browser tab that opens it (further tabs of that browser share
its sign-in). The page answers only requests whose Host is 127.0.0.1:PORT; a change needs this
page's Origin, a JSON body and the page's CSRF token (docs/security-model.md, *The web page*).

  --port N         listen on port N (default: a free port chosen by the system)
  --socket PATH    listen on a UNIX socket instead (0600; its directory must be yours and 0700,
                   and is made so if missing; an existing file or symlink there is refused; the
                   socket is removed on exit). Only your uid can connect. Open it through a
                   forward, e.g. ssh -L 8080:PATH host, then http://localhost:8080/#token=…
                   (the Host must be localhost, 127.0.0.1 or [::1], any port)
  --state-dir DIR  the store to show (default: the one supervisor run uses)
  --store URL      show the PostgreSQL control plane instead (postgres://user@host:5432/db, or
                   \$SUPERVISOR_STORE_URL): your sessions on every machine with the host and pid
                   that owns each, their audit chains as copied there, the work queue's tasks, and
                   the requests waiting on any machine, answered there, and the tasks' logs as
                   their runs copied them. Process trees and delegations stay on the machine
                   that runs them (supervisor web there)
  --open           open the URL in a browser: \$BROWSER if set, else xdg-open, open or start.
                   The browser is given a 0600 file that redirects to the URL, not the URL, so
                   the token is not in any process's arguments
  --json           print {url, port, socket, pid} as one JSON line instead of the URL

Runs until SIGINT or SIGTERM. Refused requests are logged on stderr, one line each.
`;

function portOf(v: string | undefined): number {
  if (v === undefined) return 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be a whole number from 0 to 65535, got ${JSON.stringify(v)}`);
  return n;
}

/** Test knob: how long a live stream lasts before the browser reconnects (decision 81). */
const STREAM_MS_ENV = 'SUPERVISOR_WEB_STREAM_MS';

export async function runWeb(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json', 'open'], value: ['port', 'socket', 'state-dir', 'store'], multi: [] }, 'web');
  if (f.help) return void cliIo().stdout.write(WEB_HELP), 0;
  if (f.positionals.length > 0) throw new UsageError('web takes no arguments; see supervisor web --help');
  const port = portOf(f.value.get('port'));
  const socket = f.value.get('socket');
  if (socket !== undefined && f.value.has('port')) throw new UsageError('--socket and --port exclude each other: the page listens on one of them');
  if (socket !== undefined && f.bool.has('open')) throw new UsageError('--open cannot open a UNIX socket in a browser; forward the socket (ssh -L PORT:SOCKET) and open the printed URL at that port');
  if (socket !== undefined && process.platform === 'win32') throw new UsageError('--socket is for Linux and macOS; use --port on Windows');
  const streamMs = process.env[STREAM_MS_ENV] === undefined ? undefined : Number(process.env[STREAM_MS_ENV]);
  if (streamMs !== undefined && !(Number.isInteger(streamMs) && streamMs >= 100)) throw new UsageError(`${STREAM_MS_ENV} must be milliseconds, at least 100`);
  const store = await openStore(storeUrlOf(f.value.get('store')), f.value.get('state-dir'));
  let server;
  let launch: BrowserLaunch | null = null;
  try {
    server = await startWebServer({ store, port, onSignIn: () => launch?.discard(), ...(socket !== undefined ? { socket } : {}), log: (line) => cliIo().stderr.write(`${line}\n`), ...(streamMs !== undefined ? { maxStreamMs: streamMs } : {}) });
  } catch (err) {
    await store.close();
    if (err instanceof SocketPathError) throw new UsageError(err.message);
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new UsageError(socket === undefined ? `port ${port} on 127.0.0.1 is in use; pass another --port, or none for a free one` : `--socket: ${socket} is in use; give another path`);
    throw err;
  }
  cliIo().stdout.write(f.bool.has('json') ? `${displayJson({ url: server.url, port: server.port, socket: server.socket, pid: process.pid })}\n` : `${server.url}\n`);
  if (server.socket !== null && !f.bool.has('json')) {
    cliIo().stderr.write(`supervisor web: serving on the UNIX socket ${server.socket}; forward it (ssh -L 8080:${server.socket} host) and open the URL above at that port (http://localhost:8080/#token=…)\n`);
  }
  if (f.bool.has('open')) {
    launch = launchBrowser(resolve(f.value.get('state-dir') ?? defaultStateDir()), server.url, (m) => cliIo().stderr.write(`supervisor web: ${m}\n`));
  }
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  launch?.discard();
  await server.close();
  await store.close();
  return 0;
}

/** The page's store: the control plane with a URL (its driver loaded only then), else this machine's. */
async function openStore(url: string | undefined, stateDir: string | undefined): Promise<OperatorStore> {
  if (url !== undefined) {
    if (stateDir !== undefined) throw new UsageError('--store and --state-dir name two different stores; give one');
    return controlPlaneOperatorStore(url);
  }
  const { db, principal } = openForOperator(stateDir);
  const local = sqliteOperatorStore(db, principal, resolve(stateDir ?? defaultStateDir()));
  return {
    ...local,
    close: async () => {
      db.close();
    },
  };
}
