// `supervisor web --open`: starts a browser on the page without putting the token in any
// process's arguments (/proc/<pid>/cmdline is readable by every local user). The browser is given
// a launch file instead: a 0600 HTML file in a fresh 0700 directory of the state dir that
// redirects to the URL (fragment token included). The file is removed as soon as the token is
// exchanged, after LAUNCH_FILE_MS, or when `supervisor web` exits, whichever comes first.
//
// Which browser: $BROWSER when set (the common convention: a `:`-separated list, the first entry
// used; `%s` in it is replaced by the file, else the file is appended; split on spaces, run without
// a shell), else the desktop's opener (xdg-open, open, cmd /c start). $BROWSER is the operator's
// own environment: whoever can set it already runs code as the operator, so it grants nothing new.
import { spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { join } from 'node:path';
import { writePrivateFile } from '../store/index.js';

/** How long an unused launch file is kept (a browser slow to start still finds it). */
export const LAUNCH_FILE_MS = 120_000;

export interface BrowserLaunch {
  /** The file given to the browser (its only argument that names the page). */
  file: string;
  command: string;
  args: string[];
  /** Removes the launch file and its directory; safe to call more than once. */
  discard(): void;
}

/** The launch file's HTML: an immediate redirect, no referrer, and a link if redirects are off. */
function launchHtml(url: string): string {
  // The URL is ours (http://127.0.0.1:PORT/#token=<base64url>): nothing in it needs escaping for
  // an attribute; checked anyway, so a change elsewhere cannot inject markup here.
  if (!/^http:\/\/127\.0\.0\.1:\d{1,5}\/#token=[A-Za-z0-9_-]+$/.test(url)) throw new Error(`not a page URL: ${url.replace(/#.*/, '#…')}`);
  return `<!doctype html>\n<html><head><meta charset="utf-8"><meta name="referrer" content="no-referrer"><meta http-equiv="refresh" content="0;url=${url}"><title>supervisor web</title></head>\n<body><p><a href="${url}">Open the supervisor page</a></p></body></html>\n`;
}

/** The opener's command line for `file`: $BROWSER's first entry, or the platform's opener. */
export function openerFor(file: string, env: NodeJS.ProcessEnv = process.env, platform: NodeJS.Platform = process.platform): { command: string; args: string[] } {
  const entry = (env.BROWSER ?? '').split(':').map((e) => e.trim()).find((e) => e !== '');
  if (entry !== undefined) {
    const words = entry.split(/\s+/);
    const args = words.slice(1).map((w) => w.replaceAll('%s', file));
    return { command: words[0]!, args: entry.includes('%s') ? args : [...args, file] };
  }
  if (platform === 'darwin') return { command: 'open', args: [file] };
  if (platform === 'win32') return { command: 'cmd', args: ['/c', 'start', '', file] };
  return { command: 'xdg-open', args: [file] };
}

/** Writes the launch file under `stateDir` and starts the opener on it (detached, not waited on). */
export function launchBrowser(stateDir: string, url: string, onError: (message: string) => void, env: NodeJS.ProcessEnv = process.env): BrowserLaunch {
  const dir = mkdtempSync(join(stateDir, 'web-open-'));
  const file = join(dir, 'open.html');
  const discard = (): void => rmSync(dir, { recursive: true, force: true });
  try {
    writePrivateFile(file, launchHtml(url));
  } catch (err) {
    discard();
    throw err;
  }
  const { command, args } = openerFor(file, env);
  const child = spawn(command, args, { stdio: 'ignore', detached: true, env });
  child.on('error', (err) => onError(`could not start ${command} (${err.message}); open the printed URL yourself`));
  child.unref();
  const timer = setTimeout(discard, LAUNCH_FILE_MS);
  timer.unref();
  return {
    file,
    command,
    args,
    discard: () => {
      clearTimeout(timer);
      discard();
    },
  };
}
