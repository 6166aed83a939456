// delegate_task: starts a child agent through the session layer's Delegator and returns its final
// answer (bounded; redacted again by the runtime's views). The child's scope, depth and budget are
// the supervisor's: the arguments can only narrow what the child sees.
import { AdapterCheckError, AdapterUnavailableError, type DelegationRequest, type EffectAdapter } from '../adapter-types.js';

function requestOf(args: unknown): DelegationRequest {
  const a = args as DelegationRequest;
  return {
    agent: a.agent,
    task: a.task,
    ...(a.toolsets ? { toolsets: [...a.toolsets] } : {}),
    ...(a.tools ? { tools: [...a.tools] } : {}),
    ...(a.grants ? { grants: [...a.grants] } : {}),
  };
}

export const delegateTaskAdapter: EffectAdapter = {
  preflight(_e, args, env) {
    if (!env.delegation) throw new AdapterUnavailableError('delegate_task needs the session layer (a session opened with openSession); this runtime has none');
    const req = requestOf(args);
    env.delegation.check(req.agent);
    const target = { agent: req.agent, task: req.task, toolsets: req.toolsets ?? null, tools: req.tools ?? null, grants: req.grants ?? null };
    return {
      checks: [],
      action: { kind: 'agent.spawn', target },
      summary: `delegate to ${req.agent}: ${req.task.length > 200 ? `${req.task.slice(0, 200)}…` : req.task}`,
      audit: { agent: req.agent, task_chars: req.task.length, toolsets: target.toolsets, tools: target.tools, grants: target.grants },
      // The child outlives no call, but it is background work: no secret is bound into it.
      background: true,
    };
  },
  async invoke(_e, args, env) {
    if (!env.delegation) throw new AdapterCheckError('delegate_task needs the session layer');
    const r = await env.delegation.run(requestOf(args), env.signal, env.deadlineMs);
    const head = r.status === 'completed' ? '' : `[child ${r.status}] `;
    return { text: `${head}${r.answer}`, isError: r.status !== 'completed', detail: { status: r.status, ...r.detail } };
  },
};
