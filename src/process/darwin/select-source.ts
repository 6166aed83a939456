// Chooses the macOS process source: libproc through ffi-rs when it loads and answers, `ps` otherwise.
import { libprocAvailable, procListAllPids } from '../../../native-helpers/libproc.js';
import { LibprocSource } from './libproc-source.js';
import { DarwinOnlyError, type DarwinProcessSource } from './process-source.js';
import { PsSource } from './ps-source.js';

export function defaultDarwinSource(): DarwinProcessSource {
  if (process.platform !== 'darwin') throw new DarwinOnlyError('the macOS process source');
  if (libprocAvailable()) {
    try {
      if (procListAllPids().length > 0) return new LibprocSource();
    } catch {
      // Loaded but not answering: fall through to ps.
    }
  }
  return new PsSource();
}
