// Metadata of the builtin tools, per toolset. Implementations live in adapters/builtin; the catalog
// needs only what a model and a policy see.

/** The terminal's input, as the model sees it; adapters/builtin/terminal.ts runs it. */
export const TERMINAL_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'string', minLength: 1, maxLength: 16_384, description: 'A shell command line.' },
    cwd: { type: 'string', description: 'Working directory, relative to the workspace (default: the workspace).' },
    timeout: { type: 'number', minimum: 0.1, maximum: 3600, description: 'Seconds before the whole process tree is stopped.' },
    background: { type: 'boolean', description: 'Run as a background task and return its id at once; follow it with task_status and yield_until.' },
    write_scope: { type: 'string', minLength: 1, maxLength: 256, description: 'For background tasks: a name for what the task writes (e.g. "build/"); a second active task with the same scope is refused.' },
    env: {
      type: 'object',
      description: 'Extra environment variables for this command (always needs approval; PATH, LD_*, NODE_OPTIONS and other variables that control execution are refused).',
      maxProperties: 32,
      propertyNames: { pattern: '^[A-Za-z_][A-Za-z0-9_]{0,127}$' },
      additionalProperties: { type: 'string', maxLength: 4096 },
    },
  },
  required: ['command'],
  additionalProperties: false,
} as const;

export const WEB_EXTRACT_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    url: { type: 'string', minLength: 1, maxLength: 2048, description: 'An http(s) URL on the public internet.' },
    max_chars: { type: 'integer', minimum: 100, maximum: 100_000, description: 'Most characters of readable text to return (default 20,000).' },
  },
  required: ['url'],
  additionalProperties: false,
} as const;

export const SESSION_SEARCH_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    query: { type: 'string', minLength: 1, maxLength: 256, pattern: '\\S', description: 'Full-text query: words, "a phrase", word*, AND / OR / NOT.' },
    scope: { type: 'string', enum: ['session', 'owned'], description: 'session (default): this session; owned: all your sessions (asks the operator).' },
    limit: { type: 'integer', minimum: 1, maximum: 20, description: 'Most results (default 10).' },
  },
  required: ['query'],
  additionalProperties: false,
} as const;

/**
 * delegate_task's input. Only what the child should do and what it may narrow: no limit, depth or
 * budget field exists (the supervisor sets them), and additionalProperties: false refuses a call
 * that tries one at step 1.
 */
export const DELEGATE_TASK_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    agent: { type: 'string', pattern: '^[a-z][a-z0-9_-]{0,62}$', description: 'The child agent to start (a definition in agent/agents/; tools_list and its description name them).' },
    task: { type: 'string', minLength: 1, maxLength: 16_384, description: 'What the child should do; its final answer is this call\'s result.' },
    toolsets: { type: 'array', items: { type: 'string', maxLength: 32 }, maxItems: 16, description: 'Narrow the child to these builtin toolsets (never more than its definition and yours).' },
    tools: { type: 'array', items: { type: 'string', maxLength: 64 }, maxItems: 256, description: 'Narrow the child to these tool names.' },
    grants: { type: 'array', items: { type: 'string', maxLength: 256 }, maxItems: 256, description: 'Narrow the child to these grants (never more than its definition and yours).' },
  },
  required: ['agent', 'task'],
  additionalProperties: false,
} as const;

/**
 * evolve_core's input: one action on an evolve run. `edits` (start) replace or delete files of the
 * core in the run's own worktree; promote and discard name the run and act on what its review showed.
 */
export const EVOLVE_CORE_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    action: { type: 'string', enum: ['start', 'review', 'promote', 'rollback', 'discard'], description: 'start a run with edits; review, promote, roll back (a promoted run) or discard a run.' },
    run: { type: 'string', pattern: '^tk_[0-9a-f]{1,64}$', description: 'The run (its task id, from start) for review, promote, rollback and discard.' },
    edits: {
      type: 'array',
      minItems: 1,
      maxItems: 64,
      items: {
        type: 'object',
        properties: {
          path: { type: 'string', minLength: 1, maxLength: 512, description: 'A file of the core, relative to it.' },
          content: { type: ['string', 'null'], maxLength: 262_144, description: 'The whole new content; null deletes the file.' },
        },
        required: ['path', 'content'],
        additionalProperties: false,
      },
      description: 'start: the files to write in the run\'s worktree (never the live core).',
    },
    agent: {
      type: 'string',
      pattern: '^[a-z][a-z0-9_-]{0,62}$',
      description: 'start, instead of edits: a child agent (agent/agents/) that makes the edits with the terminal, sandboxed, writing the run\'s worktree and nothing else.',
    },
    task: { type: 'string', minLength: 1, maxLength: 16_384, description: 'start with agent: what the child should change.' },
  },
  required: ['action'],
  additionalProperties: false,
} as const;

export interface BuiltinDefinition {
  name: string;
  toolset: string;
  description: string;
  inputSchema: Readonly<Record<string, unknown>>;
  capability: string;
  approval: 'auto' | 'prompt' | 'deny';
  risk: 'low' | 'medium' | 'high';
  adapterKey: string;
}

/** Always present: the model-facing view of this very catalog. */
export const TOOLS_LIST: BuiltinDefinition = {
  name: 'tools_list',
  toolset: 'core',
  description: 'List the tools available in this turn with their capability, approval policy and risk.',
  inputSchema: { type: 'object', properties: {}, additionalProperties: false },
  capability: 'catalog.read',
  approval: 'auto',
  risk: 'low',
  adapterKey: 'builtin.tools_list',
};

export const BUILTIN_TOOLSET_DEFINITIONS: Readonly<Record<string, readonly BuiltinDefinition[]>> = {
  terminal: [
    {
      name: 'terminal',
      toolset: 'terminal',
      description:
        'Run a shell command in the workspace as a supervised process tree. Returns exit status and the last 12,000 characters of stdout and stderr.',
      inputSchema: TERMINAL_INPUT_SCHEMA,
      capability: 'terminal.exec',
      approval: 'prompt',
      risk: 'high',
      adapterKey: 'builtin.terminal',
    },
  ],
  // Background tasks: terminal(background=true) starts one; these follow and control them.
  tasks: [
    {
      name: 'task_list',
      toolset: 'tasks',
      description: "List this session's background tasks: id, kind, status, summary, exit code.",
      inputSchema: { type: 'object', properties: { status: { type: 'string', enum: ['running', 'completed', 'failed', 'cancelled', 'interrupted'] } }, additionalProperties: false },
      capability: 'task.read',
      approval: 'auto',
      risk: 'low',
      adapterKey: 'builtin.task_list',
    },
    {
      name: 'task_status',
      toolset: 'tasks',
      description: 'The status of one background task.',
      inputSchema: { type: 'object', properties: { task_id: { type: 'string', minLength: 1, maxLength: 64 } }, required: ['task_id'], additionalProperties: false },
      capability: 'task.read',
      approval: 'auto',
      risk: 'low',
      adapterKey: 'builtin.task_status',
    },
    {
      name: 'task_control',
      toolset: 'tasks',
      description: 'Control a background task. Supported command: cancel (stops its whole process tree).',
      inputSchema: {
        type: 'object',
        properties: { task_id: { type: 'string', minLength: 1, maxLength: 64 }, command: { type: 'string', minLength: 1, maxLength: 32 } },
        required: ['task_id', 'command'],
        additionalProperties: false,
      },
      capability: 'task.control',
      approval: 'prompt',
      risk: 'medium',
      adapterKey: 'builtin.task_control',
    },
    {
      name: 'yield_until',
      toolset: 'tasks',
      description: "Wait until one of the given background tasks (default: any of this session's running tasks) ends, or the timeout passes.",
      inputSchema: {
        type: 'object',
        properties: {
          task_ids: { type: 'array', items: { type: 'string', minLength: 1, maxLength: 64 }, maxItems: 64 },
          timeout_seconds: { type: 'number', minimum: 0, maximum: 600 },
        },
        additionalProperties: false,
      },
      capability: 'task.read',
      approval: 'auto',
      risk: 'low',
      adapterKey: 'builtin.yield_until',
    },
  ],
  // Full-text search over this principal's stored (redacted) history.
  sessions: [
    {
      name: 'session_search',
      toolset: 'sessions',
      description:
        'Search the stored conversation history (full text) and return short snippets with session, turn and time. ' +
        'scope "session" (default) searches this session; "owned" searches all your sessions and needs the operator\'s approval. ' +
        'Query syntax: words, "a phrase", word* (prefix), AND / OR / NOT, ( ), NEAR(a b, 10).',
      inputSchema: SESSION_SEARCH_INPUT_SCHEMA,
      capability: 'session.read',
      approval: 'prompt',
      risk: 'medium',
      adapterKey: 'builtin.session_search',
    },
  ],
  // Delegation (issue 18): a child agent as the supervisor's own session, its scope only narrower.
  agents: [
    {
      name: 'delegate_task',
      toolset: 'agents',
      description:
        'Start a child agent (defined in agent/agents/) on a task and return its final answer. The child sees only tools and grants you have, ' +
        'its definition asks for and this call names; its iterations, time and tool calls come out of your own budget.',
      inputSchema: DELEGATE_TASK_INPUT_SCHEMA,
      capability: 'agent.spawn',
      // The child holds no authority the parent lacks and each of its effects is approved on its own;
      // approval.rules['agent.spawn'] or tools.delegate_task.approval makes it ask (decision 71).
      approval: 'auto',
      risk: 'medium',
      adapterKey: 'builtin.delegate_task',
    },
  ],
  // Evolution (issue 19): the agent edits a candidate of its own core; promotion is the operator's.
  evolve: [
    {
      name: 'evolve_core',
      toolset: 'evolve',
      description:
        'Change this agent\'s own core safely: start a run with file edits, or with a child agent that edits in a sandbox (in an isolated Git worktree, never the live core), review it ' +
        '(files, gates, security diff), then promote it (the operator approves the security diff) or discard it.',
      inputSchema: EVOLVE_CORE_INPUT_SCHEMA,
      capability: 'core.evolve',
      // review reads; start writes only its own worktree; promote and discard ask (the adapter's checks).
      approval: 'auto',
      risk: 'high',
      adapterKey: 'builtin.evolve_core',
    },
  ],
  web: [
    {
      name: 'web_extract',
      toolset: 'web',
      description:
        'Fetch a public web page and return its readable text (title, headings, paragraphs), bounded in size and time. Local, private and internal addresses are refused.',
      inputSchema: WEB_EXTRACT_INPUT_SCHEMA,
      capability: 'net.fetch',
      approval: 'prompt',
      risk: 'medium',
      adapterKey: 'builtin.web_extract',
    },
  ],
};
