// The classification steps: a command line is checked whole, split into simple commands, each
// part gets a verdict by its program, and the first 'other' (else the first 'project-code') decides.
import { INTERACTIVE, READ_ONLY } from './read-only-programs.js';
import { RUNNERS } from './project-runners.js';
import { Refusal, splitParts, tokenize, type Word } from './tokenizer.js';
import { other, projectCode, readOnly, show, type CommandClass, type Verdict } from './verdict.js';
import { insideWorkspace, projectArgProblem } from './workspace.js';

export interface ClassifyOptions {
  /** Absolute workspace root; workspace scripts are recognized by lexical containment only. */
  workspace?: string;
}

/** Longer command lines are not worth parsing and too long to audit at a glance. */
const MAX_COMMAND_BYTES = 16 * 1024;
/** `bash -c "bash -c '…'"` is fine; a third nested shell is refused rather than parsed. */
const MAX_SHELL_DEPTH = 2;

/** Characters that are invisible or reorder text, so what runs would differ from what is shown. */
const HIDDEN_CHAR = /[\u0001-\u0008\u000b-\u001f\u007f-\u009f\u200b-\u200f\u2028\u2029\u202a-\u202e\u2060-\u2064\u2066-\u2069\ufeff]/;

export function classifyCommand(command: string, opts: ClassifyOptions = {}): CommandClass {
  try {
    return classifyScript(command, opts.workspace, 0);
  } catch {
    // Fail closed: a classifier bug must never turn into a 'read-only' verdict or a thrown preflight.
    return { kind: 'other', reason: 'the command could not be classified', parts: [] };
  }
}

function classifyScript(command: string, workspace: string | undefined, depth: number): CommandClass {
  const refused = (reason: string): CommandClass => ({ kind: 'other', reason, parts: [] });
  if (typeof command !== 'string') return refused('the command is not a string');
  if (Buffer.byteLength(command, 'utf8') > MAX_COMMAND_BYTES) return refused('the command is longer than 16 KiB');
  if (command.includes('\0')) return refused('the command contains a NUL byte');
  const hidden = HIDDEN_CHAR.exec(command);
  if (hidden) {
    const code = hidden[0].charCodeAt(0).toString(16).toUpperCase().padStart(4, '0');
    return refused(`the command contains an invisible or control character (U+${code}) that hides text from the audit view`);
  }
  if (command.trim() === '') return refused('empty command');

  let parts: Word[][];
  try {
    parts = splitParts(tokenize(command));
  } catch (err) {
    if (err instanceof Refusal) return refused(err.reason);
    throw err;
  }
  const audit = parts.map((words) => words.map((w) => w.raw).join(' '));
  const verdicts = parts.map((words) => classifyPart(words, workspace, depth));
  const firstOther = verdicts.find((v) => v.kind === 'other');
  if (firstOther) return { kind: 'other', reason: firstOther.reason, parts: audit };
  const firstProject = verdicts.find((v) => v.kind === 'project-code');
  if (firstProject) return { kind: 'project-code', reason: firstProject.reason, parts: audit };
  return { kind: 'read-only', reason: 'every part is a known read-only command', parts: audit };
}

/** `NAME=` or `NAME+=` or `NAME[i]=` before the program: changes how the program runs. */
const ASSIGNMENT = /^[A-Za-z_][A-Za-z0-9_]*(?:\[[^\]]*\])?\+?=/;

function classifyPart(words: Word[], workspace: string | undefined, depth: number): Verdict {
  const [prog, ...args] = words as [Word, ...Word[]];
  if (ASSIGNMENT.test(prog.raw)) return other('an environment assignment before the program changes how it runs');
  if (prog.expands) return other('the program name comes from a variable expansion');
  if (prog.quoted) return other(`the program name ${show(prog.text)} is quoted or escaped, so it is not classified`);
  if (prog.globs && prog.raw !== '[') return other(`the program name ${show(prog.raw)} is a glob pattern`);
  if (prog.tilde || prog.text.includes('/')) return classifyPathProgram(prog.text, args, workspace);

  const name = prog.text;
  if (name === 'git') return other('git commands always ask');
  if (name === 'bash' || name === 'sh') return classifyShell(name, args, workspace, depth);
  if (INTERACTIVE.has(name)) return other(`${name} is interactive and waits for a terminal`);

  const safe = READ_ONLY.get(name);
  if (safe !== undefined) {
    if (safe.check === undefined) return readOnly(`${name} is a known read-only command`);
    // Flags are checked on the words as written; an expansion or glob could become a flag later.
    const hidden = args.find((a) => a.expands || a.globs);
    if (hidden) return other(`${name} argument ${show(hidden.raw)} expands at run time, so its flags cannot be checked`);
    const problem = safe.check(args.map((a) => a.text));
    return problem === null ? readOnly(`${name} is a known read-only command`) : other(problem);
  }

  const runner = RUNNERS.get(name);
  if (runner !== undefined) {
    const outside = projectArgProblem(args, workspace);
    if (outside !== null) return other(`${name}: ${outside}`);
    return runner(args, workspace);
  }
  return other(`${show(name)} is not a known read-only command or project runner`);
}

function classifyPathProgram(path: string, args: Word[], workspace: string | undefined): Verdict {
  // A path is never read-only: `./ls` or `/usr/bin/ls` is whatever file sits there, not the
  // known program. Inside the workspace it is project code; anywhere else it is refused.
  if (!insideWorkspace(path, workspace)) {
    return other(`${show(path)} is a path outside the workspace, not a known command`);
  }
  const outside = projectArgProblem(args, workspace);
  if (outside !== null) return other(`${show(path)}: ${outside}`);
  return projectCode(`${show(path)} is a script inside the workspace`);
}

function classifyShell(name: string, args: Word[], workspace: string | undefined, depth: number): Verdict {
  const [first, second] = args;
  if (first === undefined) return other(`${name} without a script reads commands from stdin`);
  if (!first.expands && (first.text === '-c' || first.text === '-lc')) {
    if (args.length !== 2 || second === undefined) return other(`${name} -c with extra arguments is not classified`);
    if (second.expands || second.globs || second.tilde) {
      return other(`the ${name} -c script contains expansions made by the outer shell`);
    }
    if (depth + 1 > MAX_SHELL_DEPTH) return other(`shells nested more than ${MAX_SHELL_DEPTH} deep are not classified`);
    const inner = classifyScript(second.text, workspace, depth + 1);
    if (inner.kind === 'read-only') return readOnly(`the ${name} -c script is read-only`);
    if (inner.kind === 'project-code') return other(`${name} -c passes only read-only scripts; this one runs project code`);
    return other(`${name} -c script: ${inner.reason}`);
  }
  if (first.text.startsWith('-') || first.expands || first.globs) {
    return other(`${name} ${show(first.raw)} is not a workspace script`);
  }
  if (!insideWorkspace(first.text, workspace)) {
    return other(`${name} ${show(first.text)} runs a script outside the workspace`);
  }
  const outside = projectArgProblem(args.slice(1), workspace);
  if (outside !== null) return other(`${name}: ${outside}`);
  return projectCode(`${name} ${show(first.text)} runs a workspace script`);
}
