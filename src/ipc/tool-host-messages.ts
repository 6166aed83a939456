// The tool-host protocol: one file, one tagged union per direction, so `switch (msg.type)` is
// checked for completeness. Every frame is validated against these before anything reads it.
import { z } from 'zod';

export const TOOL_HOST_PROTOCOL = 1;

const id = z.string().min(1).max(64);
/** Bounds the child honours itself; the schema refuses anything beyond them. */
export const LOG_TEXT_MAX = 4096;
export const ERROR_MESSAGE_MAX = 4096;

// ---- supervisor → tool host ----

export const CallMessageSchema = z
  .object({
    type: z.literal('call'),
    id,
    tool: z
      .object({
        name: z.string().min(1).max(64),
        entryPath: z.string().min(1).max(4096),
        capabilities: z.array(z.string().min(1).max(256)).max(64),
        dispatchCapability: z.string().min(1).max(256),
      })
      .strict(),
    input: z.unknown(),
    secrets: z.record(z.string().max(256), z.string().max(65536)),
    deadlineMs: z.number().int().positive(),
  })
  .strict();

/** What a tool asks of ctx.agents.spawn: the same fields as delegate_task's arguments. */
const names = z.array(z.string().min(1).max(256)).max(64);
export const SpawnRequestSchema = z
  .object({ agent: z.string().min(1).max(64), task: z.string().min(1).max(16384), toolsets: names.optional(), tools: names.optional(), grants: names.optional() })
  .strict();
/** At most this many ctx.agents.spawn requests per call; the host refuses more itself. */
export const SPAWNS_PER_CALL = 8;
export const SPAWN_ANSWER_MAX = 65536;
const spawnSeq = z.number().int().min(1).max(SPAWNS_PER_CALL);

export const ToHostSchema = z.discriminatedUnion('type', [
  CallMessageSchema,
  // The supervisor's answer to a ctx.agents.spawn request: the child's status and final answer
  // (model view, redacted), or ok: false with the refusal's code when no child ran.
  z.object({ type: z.literal('spawned'), id, seq: spawnSeq, ok: z.boolean(), status: z.string().min(1).max(64), text: z.string().max(SPAWN_ANSWER_MAX) }).strict(),
  z.object({ type: z.literal('cancel'), id }).strict(),
  z.object({ type: z.literal('shutdown') }).strict(),
]);

// ---- tool host → supervisor ----

export const FromHostSchema = z.discriminatedUnion('type', [
  z.object({ type: z.literal('hello'), protocol: z.number().int(), pid: z.number().int().positive() }).strict(),
  z.object({ type: z.literal('log'), id, level: z.enum(['info', 'warn', 'error']), text: z.string().max(LOG_TEXT_MAX) }).strict(),
  z.object({ type: z.literal('progress'), id, done: z.number().finite().nonnegative(), total: z.number().finite().nonnegative().optional() }).strict(),
  z.object({ type: z.literal('result'), id, value: z.unknown() }).strict(),
  // ctx.agents.spawn: the tool asks the supervisor to run a child agent (an agent.spawn effect).
  z.object({ type: z.literal('spawn'), id, seq: spawnSeq, request: SpawnRequestSchema }).strict(),
  z
    .object({
      type: z.literal('error'),
      id,
      code: z.string().regex(/^[A-Za-z][A-Za-z0-9_.]{0,63}$/),
      message: z.string().max(ERROR_MESSAGE_MAX),
    })
    .strict(),
  // After each call: what the tool left running beyond the host's own baseline (timers, sockets, children).
  // The host's own memory figures (heap in use, peak RSS): a lie only delays a recycle, the heap
  // limit still holds.
  z
    .object({
      type: z.literal('idle'),
      id,
      resources: z.array(z.string().max(64)).max(256),
      heapUsed: z.number().finite().nonnegative(),
      rss: z.number().finite().nonnegative(),
    })
    .strict(),
]);

export type ToHostMessage = z.output<typeof ToHostSchema>;
export type CallMessage = z.output<typeof CallMessageSchema>;
export type SpawnRequest = z.output<typeof SpawnRequestSchema>;
export type SpawnedMessage = Extract<ToHostMessage, { type: 'spawned' }>;
export type SpawnFrame = Extract<FromHostMessage, { type: 'spawn' }>;
/** The supervisor's answer to one ctx.agents.spawn, before it is framed. */
export type SpawnAnswer = Pick<SpawnedMessage, 'ok' | 'status' | 'text'>;
export type FromHostMessage = z.output<typeof FromHostSchema>;

/** The variable that names the data pipe's fd in the child (process/ sets it as SUPERVISOR_CHANNEL_FD). */
export const TOOL_HOST_CHANNEL_FD_ENV = 'SUPERVISOR_CHANNEL_FD';
