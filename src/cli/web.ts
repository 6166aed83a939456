// `supervisor web`: the operator's page on 127.0.0.1 (src/web/). This file parses the flags, opens
// the store as every operator command does (the same principal), prints the one URL and serves
// until SIGINT/SIGTERM.
import { spawn } from 'node:child_process';
import { cliIo } from './io.js';
import { displayJson } from '../redaction/index.js';
import { parseFlags } from './flags.js';
import { openForOperator } from './operator.js';
import { UsageError } from './usage.js';
import { startWebServer } from '../web/web-server.js';

export const WEB_HELP = `Usage: supervisor web [--port N] [--state-dir DIR] [--open] [--json]

Serves the operator's page on 127.0.0.1: your sessions, and the approval requests your runs wait
on, with approve / deny / always, updated live. Prints one URL; the token in its fragment works
once, in the first browser tab that opens it (further tabs of that browser share its sign-in).
The page answers only requests whose Host is 127.0.0.1:PORT; a change needs this page's Origin,
a JSON body and the page's CSRF token (docs/security-model.md, *The web page*).

  --port N         listen on port N (default: a free port chosen by the system)
  --state-dir DIR  the store to show (default: the one supervisor run uses)
  --open           open the URL in the desktop's browser (xdg-open, open, or start)
  --json           print {url, port, pid} as one JSON line instead of the URL

Runs until SIGINT or SIGTERM. Refused requests are logged on stderr, one line each.
`;

function portOf(v: string | undefined): number {
  if (v === undefined) return 0;
  const n = Number(v);
  if (!Number.isInteger(n) || n < 0 || n > 65535) throw new UsageError(`--port must be a whole number from 0 to 65535, got ${JSON.stringify(v)}`);
  return n;
}

/** The desktop's opener: the URL is its argument (the token is visible in the process list while it runs). */
function openInBrowser(url: string): void {
  const [cmd, args] = process.platform === 'darwin' ? ['open', [url]] : process.platform === 'win32' ? ['cmd', ['/c', 'start', '', url]] : ['xdg-open', [url]];
  const child = spawn(cmd, args, { stdio: 'ignore', detached: true });
  child.on('error', (err) => cliIo().stderr.write(`supervisor web: could not open a browser (${cmd}: ${err.message}); open the URL yourself\n`));
  child.unref();
}

/** Test knob: how long a live stream lasts before the browser reconnects (decision 81). */
const STREAM_MS_ENV = 'SUPERVISOR_WEB_STREAM_MS';

export async function runWeb(argv: string[]): Promise<number> {
  const f = parseFlags(argv, { bool: ['json', 'open'], value: ['port', 'state-dir'], multi: [] }, 'web');
  if (f.help) return void cliIo().stdout.write(WEB_HELP), 0;
  if (f.positionals.length > 0) throw new UsageError('web takes no arguments; see supervisor web --help');
  const port = portOf(f.value.get('port'));
  const streamMs = process.env[STREAM_MS_ENV] === undefined ? undefined : Number(process.env[STREAM_MS_ENV]);
  if (streamMs !== undefined && !(Number.isInteger(streamMs) && streamMs >= 100)) throw new UsageError(`${STREAM_MS_ENV} must be milliseconds, at least 100`);
  const { db, principal } = openForOperator(f.value.get('state-dir'));
  let server;
  try {
    server = await startWebServer({ db, principal, port, log: (line) => cliIo().stderr.write(`${line}\n`), ...(streamMs !== undefined ? { maxStreamMs: streamMs } : {}) });
  } catch (err) {
    db.close();
    if ((err as NodeJS.ErrnoException).code === 'EADDRINUSE') throw new UsageError(`port ${port} on 127.0.0.1 is in use; pass another --port, or none for a free one`);
    throw err;
  }
  cliIo().stdout.write(f.bool.has('json') ? `${displayJson({ url: server.url, port: server.port, pid: process.pid })}\n` : `${server.url}\n`);
  if (f.bool.has('open')) openInBrowser(server.url);
  await new Promise<void>((resolve) => {
    const stop = (): void => {
      process.off('SIGINT', stop);
      process.off('SIGTERM', stop);
      resolve();
    };
    process.on('SIGINT', stop);
    process.on('SIGTERM', stop);
  });
  await server.close();
  db.close();
  return 0;
}
