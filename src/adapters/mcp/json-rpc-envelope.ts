// The JSON-RPC envelope check of one incoming MCP message, by hand. It accepts exactly what the
// SDK's JSONRPCMessageSchema (a zod union of four strict objects) accepts at the envelope level, at
// a fraction of its cost on every message (profiled: ~60 µs of a ~1 ms call). What is inside is
// validated where it is used, as before: a result by the request's own result schema, a request's
// or notification's params by its handler's schema (the SDK's Protocol does both).
import type { JSONRPCMessage } from '@modelcontextprotocol/sdk/types.js';

const REQUEST_KEYS = new Set(['jsonrpc', 'id', 'method', 'params']);
const NOTIFICATION_KEYS = new Set(['jsonrpc', 'method', 'params']);
const RESULT_KEYS = new Set(['jsonrpc', 'id', 'result']);
const ERROR_KEYS = new Set(['jsonrpc', 'id', 'error']);

function isRecord(v: unknown): v is Record<string, unknown> {
  return v !== null && typeof v === 'object' && !Array.isArray(v);
}

function isRequestId(v: unknown): boolean {
  return typeof v === 'string' || Number.isInteger(v);
}

function onlyKeys(o: Record<string, unknown>, allowed: ReadonlySet<string>): boolean {
  for (const k in o) if (!allowed.has(k)) return false;
  return true;
}

/** The message if its envelope is a JSON-RPC 2.0 request, notification, result or error; else null. */
export function jsonRpcMessage(v: unknown): JSONRPCMessage | null {
  if (!isRecord(v) || v.jsonrpc !== '2.0') return null;
  if ('method' in v) {
    if (typeof v.method !== 'string') return null;
    if (v.params !== undefined && !isRecord(v.params)) return null;
    if ('id' in v) return isRequestId(v.id) && onlyKeys(v, REQUEST_KEYS) ? (v as JSONRPCMessage) : null;
    return onlyKeys(v, NOTIFICATION_KEYS) ? (v as JSONRPCMessage) : null;
  }
  if ('result' in v) return isRequestId(v.id) && isRecord(v.result) && onlyKeys(v, RESULT_KEYS) ? (v as JSONRPCMessage) : null;
  if ('error' in v) {
    const e = v.error;
    if (v.id !== undefined && !isRequestId(v.id)) return null;
    return isRecord(e) && Number.isInteger(e.code) && typeof e.message === 'string' && onlyKeys(v, ERROR_KEYS) ? (v as JSONRPCMessage) : null;
  }
  return null;
}
