// Metadata of the builtin tools, per toolset. Implementations live in adapters/builtin; the catalog
// needs only what a model and a policy see.

/** The terminal's input, as the model sees it; adapters/builtin/terminal.ts runs it. */
export const TERMINAL_INPUT_SCHEMA = {
  type: 'object',
  properties: {
    command: { type: 'string', minLength: 1, maxLength: 16_384, description: 'A shell command line.' },
    cwd: { type: 'string', description: 'Working directory, relative to the workspace (default: the workspace).' },
    timeout: { type: 'number', minimum: 0.1, maximum: 3600, description: 'Seconds before the whole process tree is stopped.' },
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
  // Background task controls come with the tasks issue; the toolset name is reserved.
  tasks: [],
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
