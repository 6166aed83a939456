// Does an authored tool's entry module parse? Answered without importing it into the supervisor:
// `node --check` in a short-lived child (compile only, nothing runs, imports are not resolved),
// under Node's permission model with read access to that one file, an empty environment, a
// deadline and SIGKILL. Node 20's ESM SyntaxError from import() carries no file or line; the
// child's report does (`file:line`, the source line, a caret), for ESM and CommonJS alike, and it
// decides ESM or CommonJS the way the tool host's import() will (extension, package.json "type",
// syntax detection).
//
// Why not in-process: `vm.SourceTextModule` needs --experimental-vm-modules in the supervisor, and
// `new vm.Script` parses a script, so every `import` would be a false error; and a parse of
// untrusted text in the supervisor puts V8's parser (its CPU time, its bugs) in the privileged
// process. TypeScript's parser is a devDependency only.
import { execFile } from 'node:child_process';
import { mkdtempSync, realpathSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { pathToFileURL } from 'node:url';
import type { ProbeChildren } from '../process/probe-children.js';

const CHECK_TIMEOUT_MS = 15_000;
const MAX_REPORT_BYTES = 64 * 1024;

export type SyntaxCheck = { ok: true } | { ok: false; line?: number; column?: number; message: string };

/** Results by real path and content digest: a core loaded again does not check again. */
const cache = new Map<string, Promise<SyntaxCheck>>();

/**
 * `{ ok: false }` only for a syntax error the child reported; a check that could not run (no
 * permission model, a deadline, a signal) is `{ ok: true }`: the host's import() still decides, so
 * an unusual machine never refuses a core that would work.
 */
export function checkModuleSyntax(realPath: string, sha256: string): Promise<SyntaxCheck> {
  const key = `${sha256}\0${realPath}`;
  let p = cache.get(key);
  if (!p) {
    p = runCheck(realPath);
    cache.set(key, p);
  }
  return p;
}

function runCheck(realPath: string): Promise<SyntaxCheck> {
  return new Promise((resolve) => {
    execFile(
      process.execPath,
      checkArgs(realPath),
      { env: {}, timeout: CHECK_TIMEOUT_MS, killSignal: 'SIGKILL', maxBuffer: MAX_REPORT_BYTES, encoding: 'utf8', windowsHide: true },
      (err, _stdout, stderr) => resolve(checkResult(realPath, err !== null, String(stderr ?? ''))),
    );
  });
}

/** node under the permission model, reading only that one file, compiling it without running it. */
function checkArgs(realPath: string): string[] {
  // Node 20/22 spell the permission model --experimental-permission; later releases --permission.
  const permission = process.allowedNodeEnvironmentFlags.has('--permission') ? '--permission' : '--experimental-permission';
  return ['--no-warnings', permission, `--allow-fs-read=${realPath}`, '--check', realPath];
}

/** A check that failed without a SyntaxError report could not run: the host's import() decides. */
function checkResult(realPath: string, failed: boolean, stderr: string): SyntaxCheck {
  return failed ? (parseReport(realPath, stderr) ?? { ok: true }) : { ok: true };
}

/**
 * Node's report of an uncaught SyntaxError at compile time:
 *   /path/file.mjs:7
 *   const b = 2 @@ 3;
 *               ^
 *   <blank>
 *   SyntaxError: Invalid or unexpected token
 * Returns null when stderr holds no SyntaxError (the check failed for another reason).
 */
export function parseReport(realPath: string, stderr: string): SyntaxCheck | null {
  const lines = stderr.split(/\r?\n/);
  const messageLine = lines.find((l) => /^SyntaxError: /.test(l));
  if (messageLine === undefined) return null;
  const message = messageLine.slice(0, 500);
  // The path as given; some Node releases print the module's file URL instead.
  const names = [`${realPath}:`, `${pathToFileURL(realPath).href}:`];
  const head = lines.findIndex((l) => names.some((n) => l.startsWith(n)) && /:\d+$/.test(l));
  if (head < 0) return { ok: false, message };
  const line = Number(/:(\d+)$/.exec(lines[head]!)![1]);
  const caret = lines[head + 2] ?? '';
  const col = /^\s*\^/.test(caret) ? caret.indexOf('^') + 1 : undefined;
  return { ok: false, line, ...(col !== undefined ? { column: col } : {}), message };
}

/**
 * For `doctor`: does the check run here? A module with a known syntax error on line 2 must be
 * reported at that line; otherwise authored tools' syntax errors surface later, from the tool
 * host's import(), without a file or line.
 */
export async function probeSyntaxCheck(children: ProbeChildren): Promise<{ ok: boolean; detail: string }> {
  const dir = mkdtempSync(join(tmpdir(), 'supervisor-syntax-probe-'));
  try {
    const file = join(realpathSync(dir), 'tool.mjs');
    writeFileSync(file, 'export const ok = 1;\nexport const broken = (;\n');
    // The same check as a core load runs, as a supervised tree: the doctor's children all are.
    const child = await children.run(process.execPath, checkArgs(file), {});
    const r = checkResult(file, child.code !== 0 || child.error !== undefined, child.stderr);
    if (!r.ok && r.line === 2) return { ok: true, detail: `node --check under the permission model reports an authored tool's syntax error at file:line:column (probe: line 2, column ${r.column ?? '?'})` };
    if (!r.ok) return { ok: false, detail: `node --check found the error but not its line (${r.message})` };
    return { ok: false, detail: 'node --check could not run here (no permission model?): an authored tool with a syntax error fails at its first call, without a line' };
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}
