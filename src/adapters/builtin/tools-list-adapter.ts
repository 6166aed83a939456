// tools_list: the model-facing listing of this turn's catalog (no owner ids, no internal refs).
import type { EffectAdapter } from '../adapter-types.js';

export const toolsListAdapter: EffectAdapter = {
  preflight() {
    return { checks: [], action: { kind: 'catalog.read', target: {} }, summary: 'list the tools of this turn', audit: {} };
  },
  async invoke(_entry, _args, env) {
    const lines = env.listing.map((t) => `- ${t.name} (${t.source}; capability ${t.capability}; approval ${t.approval}; risk ${t.risk}): ${t.description}`);
    return { text: lines.join('\n'), isError: false, detail: { count: env.listing.length } };
  },
};
