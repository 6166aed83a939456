// Loading a core and resolving its catalog for one principal: the first step of every session, and
// all that `catalog` and `plan` need.
import { resolve } from 'node:path';
import { buildCatalog, CatalogBuildError, type ResolvedEffectCatalog } from '../catalog/index.js';
import { CoreLoadError, loadCore, type CoreSnapshot } from '../core/index.js';
import { SessionError } from './errors.js';
import { localPrincipal } from './principal.js';

/**
 * Loads the core at `dir` (nothing of it runs) and resolves the catalog one turn of `principal`
 * would see; a core that does not load or whose catalog cannot be built is a SessionError
 * CORE_INVALID whose message names the file or field.
 */
export async function loadSessionCore(dir: string, principal: string = localPrincipal()): Promise<{ core: CoreSnapshot; catalog: ResolvedEffectCatalog; principal: string }> {
  let core: CoreSnapshot;
  try {
    core = await loadCore(resolve(dir));
  } catch (err) {
    if (err instanceof CoreLoadError) throw new SessionError('CORE_INVALID', err.message, { cause: err });
    throw err;
  }
  try {
    return { core, catalog: buildCatalog({ core, principal }), principal };
  } catch (err) {
    // A collision, an override of no tool, an approval rule that can never apply: the core's error.
    if (err instanceof CatalogBuildError) throw new SessionError('CORE_INVALID', `core ${core.dir}: ${err.message}`);
    throw err;
  }
}
