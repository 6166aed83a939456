// Asks the operator at a terminal. Shows tool, capability, action and the redacted argument
// preview, reads one line, and answers:
//   y / yes     approve this call once          n / no (or empty)   deny this call once
//   a / always  approve, remember for this exact approval key (cacheable)
//   d / never   deny, remember for this exact approval key (cacheable)
// Anything else is a denial naming the answer. No answer within the timeout is a denial (source
// 'timeout'); end of input is a denial (source 'non-interactive'); an abort is 'cancelled'.
// Lines typed before a prompt is shown are discarded, so an answer always follows the prompt it
// answers. Everything shown is made terminal-safe: control characters, escape sequences and
// bidi overrides in a tool's arguments cannot redraw or disguise the prompt.
import type { Readable, Writable } from 'node:stream';
import { StringDecoder } from 'node:string_decoder';
import type { ApprovalRequest, Approver } from './approval-broker.js';
import { type ApprovalDecision, approvalDecision } from './approval-decision.js';
import { displayPreview, displayText } from '../redaction/index.js';

export interface TerminalApproverOptions {
  input: Readable;
  output: Writable;
  /** How long to wait for an answer; default two minutes. */
  timeoutMs?: number;
}

export const DEFAULT_PROMPT_TIMEOUT_MS = 120_000;
const MAX_LINE = 4096;
const MAX_SHOWN = 500;

type LineResult = { kind: 'line'; line: string } | { kind: 'timeout' } | { kind: 'eof' } | { kind: 'cancelled' };

/**
 * Untrusted text on one terminal line, through the one sanitiser every human view uses
 * (src/redaction/display-text.ts): controls, bidi and invisible marks become escapes, a backslash
 * is doubled, and a cut says how much is missing.
 */
export function terminalSafe(text: string, max = MAX_SHOWN): string {
  return displayPreview(text, max);
}

export function renderApprovalPrompt(request: ApprovalRequest): string {
  const lines = [
    '',
    `approval needed: ${terminalSafe(request.toolName, 120)}  (capability ${terminalSafe(request.capability, 200)}, policy ${request.policy})`,
    // The action is what gets approved: shown whole, never cut (the argument preview is bounded).
    `  action:    ${displayText(request.actionSummary)}`,
    `  arguments: ${terminalSafe(request.preview.text, 2000)}`,
  ];
  // Which credentials the command gets if allowed: a yes here hands them to it.
  if (request.secrets && request.secrets.length > 0) lines.push(`  secrets:   ${terminalSafe(request.secrets.join(', '))} (bound only if you allow)`);
  if (request.preview.redacted.length > 0) lines.push(`  redacted:  ${terminalSafe(request.preview.redacted.join(', '))}`);
  if (request.preview.truncated) lines.push(`  cut:       ${terminalSafe(request.preview.cuts.join('; '))}`);
  lines.push('allow? [y] once  [n] no  [a] always for this exact action  [d] never for this exact action: ');
  return lines.join('\n');
}

export class TerminalApprover implements Approver {
  private readonly input: Readable;
  private readonly output: Writable;
  private readonly timeoutMs: number;
  /** One prompt at a time: concurrent calls queue behind the one being answered. */
  private queue: Promise<unknown> = Promise.resolve();

  constructor(options: TerminalApproverOptions) {
    this.input = options.input;
    this.output = options.output;
    this.timeoutMs = options.timeoutMs ?? DEFAULT_PROMPT_TIMEOUT_MS;
    if (!(this.timeoutMs > 0)) throw new RangeError(`TerminalApprover timeoutMs must be positive (got ${options.timeoutMs})`);
  }

  decide(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    const run = (): Promise<ApprovalDecision> => this.ask(request, signal);
    const next = this.queue.then(run, run);
    this.queue = next.catch(() => undefined);
    return next;
  }

  private async ask(request: ApprovalRequest, signal?: AbortSignal): Promise<ApprovalDecision> {
    if (signal?.aborted) return approvalDecision(false, 'cancelled', 'the call was cancelled before the prompt was shown');
    if (this.input.readableEnded || this.input.destroyed) return approvalDecision(false, 'non-interactive', 'the terminal input is closed; nobody can answer the approval prompt');
    discardTypeAhead(this.input);
    if (!this.write(renderApprovalPrompt(request))) {
      return approvalDecision(false, 'non-interactive', 'the approval prompt could not be shown (the terminal output is closed)');
    }
    const answer = await readLine(this.input, this.timeoutMs, signal);
    const decision = interpret(answer, this.timeoutMs);
    this.write(`→ ${decision.approved ? 'approved' : 'denied'}${decision.cacheable ? ' (remembered for this exact action)' : ''}: ${decision.reason}\n`);
    return decision;
  }

  private write(text: string): boolean {
    if (!this.output.writable) return false;
    try {
      this.output.write(text);
      return true;
    } catch {
      return false;
    }
  }
}

function interpret(answer: LineResult, timeoutMs: number): ApprovalDecision {
  switch (answer.kind) {
    case 'timeout':
      return approvalDecision(false, 'timeout', `no answer within ${Math.round(timeoutMs / 1000)}s`);
    case 'eof':
      return approvalDecision(false, 'non-interactive', 'the terminal input ended before an answer');
    case 'cancelled':
      return approvalDecision(false, 'cancelled', 'the call was cancelled while waiting for an answer');
    case 'line': {
      const a = answer.line.trim().toLowerCase();
      if (a === 'y' || a === 'yes') return approvalDecision(true, 'operator', 'approved once by the operator');
      if (a === 'a' || a === 'always') return approvalDecision(true, 'operator', 'approved always (this exact action) by the operator', true);
      if (a === 'd' || a === 'never') return approvalDecision(false, 'operator', 'denied always (this exact action) by the operator', true);
      if (a === 'n' || a === 'no') return approvalDecision(false, 'operator', 'denied by the operator');
      if (a === '') return approvalDecision(false, 'operator', 'no answer given (the default is no)');
      return approvalDecision(false, 'operator', `unrecognized answer "${terminalSafe(answer.line.trim(), 40)}" (expected y, n, a or d); treated as no`);
    }
  }
}

/** Drops whatever is already buffered in a paused stream: it was typed before the prompt. */
function discardTypeAhead(input: Readable): void {
  if (input.readableFlowing === true) return;
  try {
    while (input.read() !== null) {
      // discard
    }
  } catch {
    // a stream that cannot be read synchronously has no type-ahead to drop
  }
}

function readLine(input: Readable, timeoutMs: number, signal?: AbortSignal): Promise<LineResult> {
  return new Promise((resolve) => {
    const decoder = new StringDecoder('utf8');
    let buffer = '';
    let done = false;
    const finish = (result: LineResult): void => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      input.off('data', onData);
      input.off('end', onEnd);
      input.off('close', onEnd);
      input.off('error', onError);
      signal?.removeEventListener('abort', onAbort);
      input.pause(); // let the process exit while nobody is asked anything
      resolve(result);
    };
    const onData = (chunk: Buffer | string): void => {
      buffer += typeof chunk === 'string' ? chunk : decoder.write(chunk);
      const end = buffer.search(/[\r\n]/);
      if (end >= 0) finish({ kind: 'line', line: buffer.slice(0, end) });
      else if (buffer.length > MAX_LINE) finish({ kind: 'line', line: buffer.slice(0, 64) });
    };
    // A last line without a newline is still an explicit answer.
    const onEnd = (): void => finish(buffer.length > 0 ? { kind: 'line', line: buffer } : { kind: 'eof' });
    const onError = (): void => finish({ kind: 'eof' });
    const onAbort = (): void => finish({ kind: 'cancelled' });
    const timer = setTimeout(() => finish({ kind: 'timeout' }), timeoutMs);
    input.on('data', onData);
    input.once('end', onEnd);
    input.once('close', onEnd);
    input.once('error', onError);
    signal?.addEventListener('abort', onAbort, { once: true });
    input.resume();
  });
}
