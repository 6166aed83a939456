// Builds the provider agent.yaml's `model:` names. The API key is the operator's: it comes from the
// core's secret store, is read for each request (a rotated value is picked up), travels only in a
// request header to the configured endpoint, and its value never reaches a message or an event.
import { SecretError, type SecretStore } from '../../secrets/index.js';
import type { ModelProvider } from '../model-provider.js';
import { AnthropicProvider, ANTHROPIC_VERSION } from './anthropic.js';
import { ProviderError } from './errors.js';
import { OpenAICompatibleProvider } from './openai-compatible.js';
import { providerSettings, type ProviderSettings, type RemoteModelConfig } from './settings.js';
// The transport (and undici with it, ~0.17 CPU-s to load) is imported when a remote provider is
// made, so an offline run (the scripted model) never loads it.
import type { RetryTiming } from './retry-timing.js';

export interface RemoteProviderOptions {
  /** The core's secret store (SecretStore.fromCore); the key's value is resolved from it. */
  secrets: SecretStore;
  /** Backoff timing; tests shorten it. */
  retry?: Partial<RetryTiming>;
}

export interface RemoteModelProvider extends ModelProvider {
  readonly settings: ProviderSettings;
  close(): Promise<void>;
}

/** An API key goes into a header: visible ASCII only (a stray newline would be a header injection). */
const HEADER_SAFE = /^[\x21-\x7e]+$/;

/**
 * The provider for `model`, with its key read once now so a missing or unusable secret fails before
 * the session starts. Throws ProviderError provider.config.
 */
export async function createRemoteProvider(model: RemoteModelConfig, o: RemoteProviderOptions): Promise<RemoteModelProvider> {
  const settings = providerSettings(model);
  const where = { provider: settings.provider, host: settings.host };
  const name = settings.keySecret;
  const readKey = async (): Promise<string | null> => {
    if (name === null) return null;
    let value;
    try {
      value = await o.secrets.resolve(name);
    } catch (err) {
      // SecretError messages name the secret and its source, never a value.
      if (err instanceof SecretError) throw new ProviderError('provider.config', where, `model.api_key: ${err.message}`);
      throw err;
    }
    const key = value.bytes().toString('utf8');
    value.wipe();
    if (!HEADER_SAFE.test(key)) {
      throw new ProviderError('provider.config', where, `model.api_key: the value of secret ${name} contains spaces, control or non-ASCII characters, so it cannot be an API key; check its source`);
    }
    return key;
  };
  await readKey();
  const accept = settings.options.stream ? 'text/event-stream' : 'application/json';
  const headers = async (): Promise<Record<string, string>> => {
    const key = await readKey();
    if (settings.provider === 'anthropic') return { accept, 'anthropic-version': ANTHROPIC_VERSION, ...(key !== null ? { 'x-api-key': key } : {}) };
    return { accept, ...(key !== null ? { authorization: `Bearer ${key}` } : {}) };
  };
  const { ProviderTransport } = await import('./transport.js');
  const transport = new ProviderTransport({
    settings,
    headers,
    secretValues: () => o.secrets.knownValues(),
    keyWhere: () => {
      const d = name === null ? null : o.secrets.describe(name);
      return d === null ? null : d.where;
    },
    ...(o.retry ? { retry: o.retry } : {}),
  });
  const ctx = { settings, transport };
  return settings.provider === 'anthropic' ? new AnthropicProvider(ctx) : new OpenAICompatibleProvider(ctx);
}
