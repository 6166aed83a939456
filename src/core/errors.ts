// A core is read in one pass that collects every problem, so an author fixes them all at once.

/** One problem found in a core: where (file, field, position) and what rule it broke, with the fix. */
export interface CoreIssue {
  /** Path of the file relative to the core directory, posix separators ('agent.yaml'); '.' for the core itself. */
  readonly file: string;
  /** Field path inside the file ('tools.web.approval', 'transport.env[2].value'); '' for the whole file. */
  readonly field: string;
  /** 1-based position in the file when known (YAML syntax errors, fields located in the document). */
  readonly line?: number;
  readonly column?: number;
  /** The rule that was broken and how to fix it, in one sentence. */
  readonly message: string;
}

/** How many issues the error message lists before summarising the rest as a count. */
export const MAX_LISTED_ISSUES = 20;

/** `file:line:col: field: message`, the shape compilers use, so editors can jump to it. */
export function formatIssue(issue: CoreIssue): string {
  const where = issue.line === undefined ? issue.file : `${issue.file}:${issue.line}:${issue.column ?? 1}`;
  return issue.field === '' ? `${where}: ${issue.message}` : `${where}: ${issue.field}: ${issue.message}`;
}

/** Every bad input in a core: unreadable, malformed, out-of-bounds or inconsistent files. */
export class CoreLoadError extends Error {
  readonly code = 'CORE_INVALID' as const;
  readonly dir: string;
  readonly issues: readonly CoreIssue[];
  constructor(dir: string, issues: readonly CoreIssue[], options?: { cause?: unknown }) {
    super(describe(dir, issues), options);
    this.name = 'CoreLoadError';
    this.dir = dir;
    this.issues = Object.freeze(issues.map((i) => Object.freeze({ ...i })));
  }
}

function describe(dir: string, issues: readonly CoreIssue[]): string {
  const n = issues.length;
  const head = `core ${dir} is invalid (${n} issue${n === 1 ? '' : 's'}):`;
  const listed = issues.slice(0, MAX_LISTED_ISSUES).map((i) => `  ${formatIssue(i)}`);
  if (n > MAX_LISTED_ISSUES) listed.push(`  ... and ${n - MAX_LISTED_ISSUES} more (see error.issues)`);
  return [head, ...listed].join('\n');
}
