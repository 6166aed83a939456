// Secret capabilities match exactly: `secret:NAME` and nothing else. No wildcard, prefix or
// case-folded form ever grants a secret, whatever the general matcher does with other namespaces.

/** Answers whether the session holds exactly `secret:NAME`. */
export type SecretGrantCheck = (capability: string) => boolean;

/**
 * A grant predicate over the granted capability strings: true only for a capability written
 * exactly as one of them (so `secret:*`, `secret:GIT*`, `*` or `secret:github_token` never grant
 * `secret:GITHUB_TOKEN`). Works with CapabilitySnapshot.grants as well as a plain list.
 */
export function exactSecretGrants(granted: Iterable<string>): SecretGrantCheck {
  const exact = new Set<string>();
  for (const g of granted) if (typeof g === 'string' && /^secret:[A-Z][A-Z0-9_]{0,63}$/.test(g)) exact.add(g);
  return (capability) => exact.has(capability);
}

export function secretCapability(name: string): string {
  return `secret:${name}`;
}
