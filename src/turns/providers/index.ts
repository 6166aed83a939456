// Real model providers: OpenAI-compatible chat completions and Anthropic messages, over undici.
export { ProviderError, type ProviderErrorCode, type ProviderErrorWhere } from './errors.js';
export { createRemoteProvider, type RemoteModelProvider, type RemoteProviderOptions } from './create-provider.js';
export { DEFAULT_BASE_URL, ModelOptionsSchema, providerSettings, isLoopback, type ModelOptions, type ProviderSettings, type RemoteModelConfig, type RemoteProviderName } from './settings.js';
export { DEFAULT_RETRY, retryAfterMs, type RetryTiming } from './retry-timing.js';
export { OpenAICompatibleProvider, openAIMessages, openAITools } from './openai-compatible.js';
export { AnthropicProvider, anthropicMessages, anthropicTools, ANTHROPIC_VERSION } from './anthropic.js';
export { readSse, SseFormatError, type SseEvent, type SseLimits } from './sse.js';
