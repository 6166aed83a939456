// Whether a core changed on disk since it was loaded, cheaply enough to ask before every turn: the
// stat of every file the loader read and of the folders that hold them (a new tool folder or
// declaration changes its parent's mtime). A match says "load nothing"; a mismatch only says
// "load again and compare revisions" (a touched file with the same content is the same revision).
import { statSync } from 'node:fs';
import { dirname, join } from 'node:path';
import type { CoreSnapshot } from '../core/index.js';

/** The folders a core's shape lives in, besides those of the files it has. */
const SHAPE_DIRS = ['.', 'agent', 'agent/tools', 'agent/mcp', 'agent/agents'];

export function coreFingerprint(core: CoreSnapshot): string {
  const paths = new Set<string>(SHAPE_DIRS);
  for (const f of core.files) {
    paths.add(f.path);
    paths.add(dirname(f.path));
  }
  const parts: string[] = [];
  for (const p of [...paths].sort()) {
    const st = statSync(join(core.dir, p), { throwIfNoEntry: false, bigint: true });
    parts.push(st ? `${p}:${st.ino}:${st.size}:${st.mtimeNs}:${st.ctimeNs}` : `${p}:-`);
  }
  return parts.join('\n');
}
