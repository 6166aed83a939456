// Authored tools and MCP tools have entries in the catalog already; their adapters come with
// their own issues. Until then a call fails at step 4 with a clear error, before approval.
import { AdapterUnavailableError, type EffectAdapter } from './adapter-types.js';

export function unavailableAdapter(what: string): EffectAdapter {
  const fail = (): never => {
    throw new AdapterUnavailableError(`${what} is not implemented yet: the tool is listed, but nothing can run it`);
  };
  return { preflight: fail, invoke: async () => fail() };
}
