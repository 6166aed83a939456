// The session's secret policy for what the adapters cannot decide themselves (`secrets/` is their
// sibling): which secret an MCP declaration may receive, and from which store.
import type { McpEnvResolver } from '../adapters/mcp/index.js';
import type { CapabilitySnapshot } from '../policy/index.js';
import { exactSecretGrants, type SecretStore } from '../secrets/index.js';

/**
 * Resolves an MCP declaration's { secret: NAME } env entries for the MCP host, after its connect
 * approval: the exact grant secret:NAME is required (no wildcard grants a secret), then the value
 * is read from the store (which remembers it, so every view of the session redacts it).
 */
export function mcpSecretResolver(store: SecretStore, capabilities: CapabilitySnapshot): McpEnvResolver {
  const granted = exactSecretGrants(capabilities.grants);
  return async (_server, secret) => {
    if (!granted(`secret:${secret}`)) throw new Error(`secret ${secret} is not granted; add the exact grant 'secret:${secret}' (wildcards never grant a secret)`);
    const value = await store.resolve(secret);
    const bytes = value.bytes();
    try {
      return bytes.toString('utf8');
    } finally {
      bytes.fill(0);
      value.wipe();
    }
  };
}
