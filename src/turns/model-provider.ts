// A model provider proposes the next assistant turn from the history and the catalog's tool
// definitions. It formats nothing for another provider and sees only model views.
export interface ToolDefinition {
  name: string;
  description: string;
  input_schema: Readonly<Record<string, unknown>>;
}

export interface ModelToolCall {
  id: string;
  name: string;
  arguments: unknown;
}

/** Tokens one model request used, as the provider reported them. */
export interface ModelUsage {
  inputTokens: number;
  outputTokens: number;
}

export interface ModelTurn {
  text: string | null;
  toolCalls: ModelToolCall[];
  /** Absent when the provider reported none. */
  usage?: ModelUsage;
}

export type HistoryItem =
  | { role: 'user'; content: string }
  | { role: 'assistant'; content: string | null; toolCalls: ModelToolCall[] }
  | { role: 'tool'; callId: string; name: string; ok: boolean; content: string };

/** Live progress of one model turn; the finished ModelTurn is still the only thing acted on. */
export interface ModelStream {
  /** A piece of the assistant's text, in order, as the provider receives it. */
  onText?(delta: string): void;
}

export interface ModelProvider {
  readonly name: string;
  next(history: readonly HistoryItem[], tools: readonly ToolDefinition[], signal?: AbortSignal, stream?: ModelStream): Promise<ModelTurn>;
  /** Releases connections the provider holds; the provider is unusable afterwards. */
  close?(): Promise<void>;
}
