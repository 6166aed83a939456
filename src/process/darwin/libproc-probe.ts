// For `doctor` on macOS: proc_pidinfo, KERN_PROCARGS2 and proc_listallpids answer for this process.
import type { MechanismFinding } from '../probe-children.js';

export async function probeLibproc(): Promise<MechanismFinding> {
  const { defaultDarwinSource } = await import('./select-source.js');
  const source = defaultDarwinSource();
  const self = source.info(process.pid);
  if (!self) return { ok: false, detail: `${source.kind}: no information about the supervisor's own process` };
  const listed = source.list().some((p) => p.pid === process.pid);
  const marker = process.env.PATH ? source.environHas(process.pid, 'PATH', process.env.PATH) : true;
  const ok = listed && marker;
  return {
    ok,
    detail: `${source.kind}: start marker ${self.startTime}${source.coarseStartTime ? ' (whole seconds)' : ''}, process list ${listed ? 'ok' : 'MISSING self'}, environment read ${marker ? 'ok' : 'FAILED'}, boot id ${source.bootId() || 'unknown'}`,
  };
}
