export type { HistoryItem, ModelProvider, ModelStream, ModelToolCall, ModelTurn, ToolDefinition } from './model-provider.js';
export { ScriptedProvider, ScriptExhaustedError, ScriptOutOfStepError } from './scripted-provider.js';
export { runTurn, type TurnEngineOptions, type TurnEvent, type TurnResult } from './turn-engine.js';
export * from './providers/index.js';
