// session_search: full-text search over the stored (already redacted) history. The ordinary scope
// is the session the effect runs in; scope "owned" searches every session of the same principal and
// needs the extra grant `session.read:owned` and always an operator's (or rule's) approval. The
// history is reached only through InvokeEnv.history, which the runtime hands over at step 7, after
// capability and approval; the preflight gets no way to read it.
import { SearchQueryError, type SessionSearchHit } from '../../store/index.js';
import { AdapterUnavailableError, type EffectAdapter } from '../adapter-types.js';

export const OWNED_SESSIONS_CAPABILITY = 'session.read:owned';

interface SearchArgs {
  query: string;
  scope?: 'session' | 'owned';
  limit?: number;
}

const argsOf = (args: unknown): Required<Pick<SearchArgs, 'query' | 'scope'>> & { limit: number } => {
  const a = args as SearchArgs;
  return { query: String(a.query), scope: a.scope === 'owned' ? 'owned' : 'session', limit: a.limit ?? 10 };
};

/** What the model sees of a hit: where and when, and a snippet; never the principal or whole messages. */
function projection(h: SessionSearchHit): Record<string, unknown> {
  return { session_id: h.sessionId, turn: h.turn, role: h.role, at: new Date(h.at).toISOString(), snippet: h.snippet };
}

export const sessionSearchAdapter: EffectAdapter = {
  preflight(_e, args) {
    const { query, scope } = argsOf(args);
    const shown = JSON.stringify(query.length > 200 ? `${query.slice(0, 200)}…` : query);
    return {
      // Searching beyond the bound session always asks, whatever the configured policy.
      checks: scope === 'owned' ? [{ check: 'session-scope', classification: 'owned', minimum: 'prompt', reason: 'searches every session of this principal' }] : [],
      requires: scope === 'owned' ? [OWNED_SESSIONS_CAPABILITY] : [],
      action: { kind: 'session.search', target: { scope, query } },
      summary: `search ${scope === 'owned' ? 'all your sessions' : 'this session'} for ${shown}`,
      audit: { scope, query: query.slice(0, 200) },
    };
  },
  async invoke(_e, args, env) {
    if (!env.history) throw new AdapterUnavailableError('session_search needs the session store, and this runtime has none');
    const { query, scope, limit } = argsOf(args);
    let hits: SessionSearchHit[];
    try {
      hits = await env.history.search({ principal: env.owner.principal }, { query, sessionId: scope === 'owned' ? null : env.owner.sessionId, limit });
    } catch (err) {
      if (err instanceof SearchQueryError) {
        return { text: `session_search: ${err.reason}`, isError: true, detail: { scope, error: 'QUERY_SYNTAX' } };
      }
      throw err;
    }
    const text = JSON.stringify({ scope, count: hits.length, results: hits.map(projection) }, null, 2);
    return { text, isError: false, detail: { scope, count: hits.length } };
  },
};
