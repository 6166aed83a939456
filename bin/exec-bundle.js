// Which build of `supervisor exec` to run: the one-file bundle of dist/exec-bundle (decision 67) when
// it was built on this platform after every file it was made of, else null (the modules of dist/src).
import { readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';

/**
 * The bundle's path under the package root `root`, or null when there is none, it is from another
 * platform, an input is newer (dist/ rebuilt by tsc alone) or missing, or SUPERVISOR_EXEC_BUNDLE=0.
 */
export function freshExecBundle(root) {
  if (process.env.SUPERVISOR_EXEC_BUNDLE === '0') return null;
  const dir = join(root, 'dist', 'exec-bundle');
  try {
    const manifest = JSON.parse(readFileSync(join(dir, 'manifest.json'), 'utf8'));
    if (manifest.platform !== process.platform || !Array.isArray(manifest.inputs)) return null;
    const bundle = join(dir, manifest.bundle);
    const built = statSync(bundle).mtimeMs;
    for (const input of manifest.inputs) {
      if (statSync(join(root, input)).mtimeMs > built) return null;
    }
    return bundle;
  } catch {
    return null; // not built, or an input gone: the modules themselves are the truth
  }
}
