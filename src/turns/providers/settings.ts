// What a provider needs from agent.yaml's `model:` section, checked once before any request: the
// endpoint URL, the options each API understands, and where the key comes from. Errors name the
// field and the fix; nothing here reads the key.
import { z } from 'zod';
import type { ModelConfig } from '../../core/index.js';
import { ProviderError } from './errors.js';

export type RemoteModelConfig = Extract<ModelConfig, { provider: 'openai-compatible' | 'anthropic' }>;
export type RemoteProviderName = RemoteModelConfig['provider'];

/** Each API's default base URL, in the form its own SDK documents (OpenAI's includes /v1). */
export const DEFAULT_BASE_URL: Readonly<Record<RemoteProviderName, string>> = {
  'openai-compatible': 'https://api.openai.com/v1',
  anthropic: 'https://api.anthropic.com',
};
/** Appended to the base URL's path. */
const ENDPOINT_PATH: Readonly<Record<RemoteProviderName, string>> = {
  'openai-compatible': '/chat/completions',
  anthropic: '/v1/messages',
};

export const ModelOptionsSchema = z
  .object({
    /** The system prompt. */
    system: z.string().min(1).max(256 * 1024).optional(),
    temperature: z.number().min(0).max(2).optional(),
    top_p: z.number().min(0).max(1).optional(),
    /** Output token limit per model turn (Anthropic requires one: default 4096). */
    max_tokens: z.number().int().positive().max(1_000_000).optional(),
    /** Requests per model turn, the first included, when the endpoint answers 429/5xx or the connection fails. */
    max_attempts: z.number().int().min(1).max(10).default(4),
    /** Seconds to connect, to the response headers, and of silence between two chunks of a stream. */
    timeout_seconds: z.number().positive().max(3600).default(120),
    /** false: ask for one JSON response instead of a server-sent event stream (no live text). */
    stream: z.boolean().default(true),
  })
  .strict();
export type ModelOptions = z.output<typeof ModelOptionsSchema>;

export interface ProviderSettings {
  provider: RemoteProviderName;
  model: string;
  /** The full request URL (base URL + the API's path, the base's query kept). */
  endpoint: URL;
  /** host[:port], for messages: never the path or query. */
  host: string;
  /** The secret holding the key, or null for an endpoint without one (a local server). */
  keySecret: string | null;
  options: ModelOptions;
}

/** Checks `model` and builds the settings; throws ProviderError provider.config naming the field. */
export function providerSettings(model: RemoteModelConfig): ProviderSettings {
  const parsed = ModelOptionsSchema.safeParse(model.options ?? {});
  const base = new URL(model.base_url ?? DEFAULT_BASE_URL[model.provider]);
  const host = base.host;
  const where = { provider: model.provider, host };
  if (!parsed.success) {
    const issue = parsed.error.issues[0]!;
    const field = ['model', 'options', ...issue.path].join('.');
    const known = Object.keys(ModelOptionsSchema.shape).join(', ');
    throw new ProviderError('provider.config', where, `agent.yaml ${field}: ${issue.message} (options a provider understands: ${known})`);
  }
  const keySecret = model.api_key?.secret ?? null;
  // The key would cross the network in clear text; loopback never leaves the machine.
  if (keySecret !== null && base.protocol === 'http:' && !isLoopback(base.hostname)) {
    throw new ProviderError(
      'provider.config',
      where,
      `agent.yaml model.base_url is plain http to a host that is not this machine, and model.api_key would be sent in clear text; use https, or drop api_key for a server that needs none`,
    );
  }
  const endpoint = new URL(base.href);
  endpoint.pathname = base.pathname.replace(/\/+$/, '') + ENDPOINT_PATH[model.provider];
  return { provider: model.provider, model: model.model, endpoint, host, keySecret, options: parsed.data };
}

/** 127.0.0.0/8, ::1 and localhost: the URL parser has already folded every other spelling of them. */
export function isLoopback(hostname: string): boolean {
  const h = hostname.replace(/^\[|\]$/g, '').toLowerCase();
  return h === 'localhost' || h === '::1' || /^127\.\d+\.\d+\.\d+$/.test(h);
}
