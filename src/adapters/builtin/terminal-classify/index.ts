// Terminal preflight classification: is a command line literally read-only, does it run project
// code (a build/test runner or a workspace script), or is it something else? Pure — no
// filesystem, no process, no environment — so it can run before approval and before any spawn.
//
// It parses a deliberately small subset of POSIX sh with its own tokenizer. Anything outside that
// subset is 'other', never guessed at: a wrong 'other' costs one approval prompt, a wrong
// 'read-only' runs something nobody approved. The verdicts assume the command runs under /bin/sh
// or bash with the supervisor's allowlisted environment (no aliases, no BASH_ENV, no workspace
// directory on PATH). cmd.exe quotes differently ('a & b' is two commands there), so a Windows
// caller must not rely on a 'read-only' verdict from this module.
//
// The folder, one step a file: verdict.ts (the kinds and reasons), tokenizer.ts (words and
// operators), classify.ts (the whole command, then each part by its program), workspace.ts
// (lexical containment), flags.ts (getopt-style argument reading), read-only-programs.ts and
// project-runners.ts (the known programs and their rules).

export { classifyCommand, type ClassifyOptions } from './classify.js';
export type { CommandClass, CommandKind } from './verdict.js';
