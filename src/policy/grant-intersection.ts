// The grants two sets both hold, for a delegated child (issue 18): what the child may do is what
// the parent may do, and what its definition asks, and what the call asks. Never wider than any.
import { capabilityCovers, parseCapability, type Capability } from './capability.js';

/** Whether grant `p` allows everything grant `q` allows (a secret only by the exact grant). */
function grantCoversGrant(p: Capability, q: Capability): boolean {
  if (q.kind === 'secret' || p.kind === 'secret') return p.text === q.text;
  // A wildcard's '*' is its last token, so comparing token lists compares what each one allows.
  return capabilityCovers(p, q);
}

/**
 * The grants of `a` that some grant of `b` covers, and those of `b` that some grant of `a` covers:
 * a requirement is allowed by the result exactly when both sets allow it. Sorted, no duplicates.
 */
export function intersectGrants(a: readonly string[], b: readonly string[]): string[] {
  const pa = a.map((g) => parseCapability(g, 'grant'));
  const pb = b.map((g) => parseCapability(g, 'grant'));
  const out = new Set<string>();
  for (const x of pa) if (pb.some((y) => grantCoversGrant(y, x))) out.add(x.text);
  for (const y of pb) if (pa.some((x) => grantCoversGrant(x, y))) out.add(y.text);
  return [...out].sort((x, y) => (x < y ? -1 : x > y ? 1 : 0));
}
