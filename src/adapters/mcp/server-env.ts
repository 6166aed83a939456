// The environment of a stdio MCP server: the process layer's short allowlist plus ONLY the
// entries its declaration names, never the supervisor's own environment. Secret-valued entries
// are resolved by the caller (the secrets layer sits beside this one) and only after the connect
// approval; their values go into the redaction list of the server's stderr log.
import type { McpDeclaration } from '../../core/index.js';
import { forbiddenTargetReason } from '../../core/secrets-schema.js';
import { allowlistedEnv } from '../../process/child-env.js';
import { McpError } from './errors.js';

/**
 * Resolves `{ secret: NAME }` for the env entry `target` of server `server`: checks the exact grant
 * secret:NAME and reads the value. Throws (any error) to refuse; the message must not hold a value.
 */
export type McpEnvResolver = (server: string, secret: string, target: string) => Promise<string>;

export async function resolveServerEnv(d: McpDeclaration, resolver: McpEnvResolver | undefined): Promise<{ env: Record<string, string>; redact: string[] }> {
  if (d.transport.type !== 'stdio') return { env: {}, redact: [] };
  // Entries, then Object.fromEntries: a declared name "__proto__" stays a variable (assigned, it
  // would be dropped, its secret resolved for nothing).
  const pairs: [string, string][] = Object.entries(allowlistedEnv());
  const set = (k: string, v: string): void => {
    const i = pairs.findIndex(([n]) => n === k);
    if (i >= 0) pairs.splice(i, 1);
    pairs.push([k, v]);
  };
  const redact: string[] = [];
  for (const [i, e] of d.transport.env.entries()) {
    const where = `${d.source.file}: transport.env[${i}] (${e.name})`;
    if (e.name.toUpperCase().startsWith('SUPERVISOR_')) {
      throw new McpError('MCP_ENV_DENIED', d.name, `${where}: SUPERVISOR_* variables are the supervisor's own (they mark the server's processes); rename the variable`);
    }
    if (typeof e.value === 'string') {
      set(e.name, e.value);
      continue;
    }
    if (!('secret' in e.value)) {
      // The loader makes every { workspace_path } an absolute literal; a declaration built elsewhere must too.
      throw new McpError('MCP_ENV_DENIED', d.name, `${where}: workspace_path '${e.value.workspace_path}' was not resolved by the core loader; nothing was started`);
    }
    const secret = e.value.secret;
    const forbidden = forbiddenTargetReason(e.name);
    if (forbidden !== null) throw new McpError('MCP_ENV_DENIED', d.name, `${where}: secret ${secret} cannot be bound to ${e.name}: it ${forbidden}`);
    if (!resolver) throw new McpError('MCP_ENV_DENIED', d.name, `${where}: secret ${secret} cannot be resolved here (no secret store was given to the MCP host); nothing was started`);
    let value: string;
    try {
      value = await resolver(d.name, secret, e.name);
    } catch (err) {
      throw new McpError('MCP_ENV_DENIED', d.name, `${where}: ${(err as Error).message}; nothing was started`, { cause: err });
    }
    set(e.name, value);
    if (value.length > 0) redact.push(value);
  }
  return { env: Object.fromEntries(pairs), redact };
}

/**
 * The headers of an HTTP MCP server, resolved like env entries: literal values as written, secret
 * values only now (after the connect approval) and through the same exact-grant resolver; every
 * secret value goes into the redaction list of the connection's errors.
 */
export async function resolveServerHeaders(d: McpDeclaration, resolver: McpEnvResolver | undefined): Promise<{ headers: Record<string, string>; redact: string[] }> {
  if (d.transport.type !== 'http') return { headers: {}, redact: [] };
  const headers: Record<string, string> = {};
  const redact: string[] = [];
  for (const [i, h] of d.transport.headers.entries()) {
    const where = `${d.source.file}: transport.headers[${i}] (${h.name})`;
    if (typeof h.value === 'string') {
      headers[h.name] = h.value;
      continue;
    }
    const secret = h.value.secret;
    if (!resolver) throw new McpError('MCP_ENV_DENIED', d.name, `${where}: secret ${secret} cannot be resolved here (no secret store was given to the MCP host); nothing was connected`);
    let value: string;
    try {
      value = await resolver(d.name, secret, h.name);
    } catch (err) {
      throw new McpError('MCP_ENV_DENIED', d.name, `${where}: ${(err as Error).message}; nothing was connected`, { cause: err });
    }
    if (/[\r\n\0]/.test(value)) throw new McpError('MCP_ENV_DENIED', d.name, `${where}: the value of secret ${secret} holds CR, LF or NUL and cannot be sent as a header; nothing was connected`);
    headers[h.name] = value;
    if (value.length > 0) redact.push(value);
  }
  return { headers, redact };
}
