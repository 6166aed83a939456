// This supervisor as the host's process layer knows it: the identity a control-plane member
// registers (host id, boot id, pid, start marker), computed by the same platform code that
// records spawn owners, so "is that member's process still the same one" has one answer.
import { hostname } from 'node:os';
import { SpawnError } from './errors.js';
import { hostPlatform } from './host-platform.js';
import type { ProcessPlatform } from './platform.js';
import { serializeMarker } from './supervised-tree.js';

export interface OwnProcessIdentity {
  hostId: string;
  bootId: string;
  pid: number;
  /** serializeMarker() of this process's start marker. */
  startMarker: string;
}

/** This process's identity; `hostId` defaults to the hostname. */
export function ownProcessIdentity(opts: { hostId?: string; platform?: ProcessPlatform } = {}): OwnProcessIdentity {
  const marker = (opts.platform ?? hostPlatform()).startMarker(process.pid);
  if (!marker) throw new SpawnError('SPAWN_FAILED', 'cannot read this process’s own start marker');
  return { hostId: opts.hostId ?? hostname(), bootId: marker.bootId, pid: process.pid, startMarker: serializeMarker(marker) };
}
