// Which build of the CLI to run: a bundle of dist/ (dist/exec-bundle for `exec`, dist/cli-bundle for
// every other command; decisions 67 and 69) when it was built on this platform after the last
// compile and the last install, else null (the modules of dist/src).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * What a bundle must be newer than: tsc's record, written after every compile that emitted a file
 * (tsconfig.json: incremental), and npm's, written by every install that changed node_modules.
 * Two stats instead of one per input (a bundle of the CLI has ~700): a start pays for this check.
 */
export const BUILD_RECORDS = ['dist/.tsbuildinfo', 'node_modules/.package-lock.json'];

/**
 * The path of bundle `name` under the package root `root`, or null when there is none, it is from
 * another platform, a build record is newer or missing, or SUPERVISOR_BUNDLE=0.
 */
export function freshBundle(root, name) {
  if (process.env.SUPERVISOR_BUNDLE === '0') return null;
  const dir = join(root, 'dist', name);
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    if (manifest.platform !== process.platform || typeof manifest.bundle !== 'string') return null;
    const bundle = join(dir, manifest.bundle);
    const built = statSync(bundle).mtimeMs;
    for (const record of BUILD_RECORDS) {
      if (statSync(join(root, record)).mtimeMs > built) return null;
    }
    return bundle;
  } catch {
    return null; // not built, or a record gone: the modules themselves are the truth
  }
}
