// The build/test runners and interpreters whose commands run project code, each with the rule
// that tells running the project apart from installing, fetching or running code given inline.
import { longName, shortLetters } from './flags.js';
import type { Word } from './tokenizer.js';
import { other, projectCode, show, type Verdict } from './verdict.js';
import { insideWorkspace } from './workspace.js';

type Runner = (args: Word[], workspace: string | undefined) => Verdict;

function withSubcommand(name: string, allowed: readonly string[]): Runner {
  return (args) => {
    const sub = args[0]?.text;
    if (sub !== undefined && !args[0]!.expands && allowed.includes(sub)) return projectCode(`${name} ${sub} runs project code`);
    // Install/publish/… fetch or change things beyond the project; flags first are not worth parsing.
    const what = sub === undefined ? name : `${name} ${show(sub)}`;
    return other(`${what} is not a project build, test or run command`);
  };
}

const anyArgs = (name: string): Runner => () => projectCode(`${name} runs project code`);

/** `-e`, `-p`, `-i`, `-` and friends run code from the command line or stdin, not from the project. */
function inlineCodeFlag(args: Word[], shorts: string, longs: readonly string[]): string | null {
  for (const a of args) {
    const t = a.text;
    if (t === '-') return t;
    if ([...shortLetters(t)].some((ch) => shorts.includes(ch))) return t;
    const long = longName(t);
    if (long !== null && longs.includes(long)) return t;
  }
  return null;
}

const nodeRunner: Runner = (args) => {
  if (args.length === 0) return other('node without a script starts a REPL or reads code from stdin');
  const flag = inlineCodeFlag(args, 'epi', ['eval', 'print', 'interactive']);
  if (flag !== null) return other(`node ${show(flag)} runs code from the command line, not the project`);
  return projectCode('node runs project code');
};

const bunRunner: Runner = (args, workspace) => {
  const flag = inlineCodeFlag(args, 'ep', ['eval', 'print']);
  if (flag !== null) return other(`bun ${show(flag)} runs code from the command line, not the project`);
  const first = args[0];
  if (first !== undefined && ['run', 'test', 'build'].includes(first.text)) return projectCode(`bun ${first.text} runs project code`);
  if (first !== undefined && !first.text.startsWith('-') && first.text.includes('.') && insideWorkspace(first.text, workspace)) {
    return projectCode(`bun ${show(first.text)} runs a workspace script`);
  }
  return other('bun is classified only for run, test, build or a workspace script');
};

const pythonRunner = (name: string): Runner => (args, workspace) => {
  const flag = inlineCodeFlag(args, 'ci', []);
  if (flag !== null) return other(`${name} ${show(flag)} runs code from the command line or stdin, not the project`);
  const m = args.findIndex((a) => a.text === '-m');
  if (m >= 0 && args[m + 1] !== undefined) return projectCode(`${name} -m ${show(args[m + 1]!.text)} runs project code`);
  const script = args.find((a) => !a.text.startsWith('-'));
  if (script !== undefined && !script.expands && insideWorkspace(script.text, workspace)) {
    return projectCode(`${name} ${show(script.text)} runs a workspace script`);
  }
  return other(`${name} without a workspace script or -m module starts a REPL or reads stdin`);
};

/** pip only as `pip install` of the project itself or its requirements files. */
const pipRunner = (name: string): Runner => (args, workspace) => {
  if (args[0]?.text !== 'install' || args.length < 2) return other(`${name} is classified only as install of workspace requirements`);
  for (let i = 1; i < args.length; i++) {
    const t = args[i]!.text;
    if (['-r', '--requirement', '-e', '--editable'].includes(t)) {
      const v = args[i + 1];
      if (v === undefined || !insideWorkspace(v.text, workspace)) return other(`${name} ${t} needs a workspace path`);
      i++;
      continue;
    }
    if ((t === '.' || t.startsWith('./')) && insideWorkspace(t, workspace)) continue;
    return other(`${name} install ${show(t)} is not a workspace path or requirements file`);
  }
  return projectCode(`${name} install installs the workspace project`);
};

const npxRunner: Runner = (args) => {
  if (args.length === 0) return other('npx without a command is not classified');
  const flag = inlineCodeFlag(args, 'c', ['call', 'shell-mode']);
  if (flag !== null) return other(`npx ${show(flag)} runs a shell command string`);
  return projectCode('npx runs a project tool');
};

const goRunner: Runner = (args, workspace) => {
  // `go run example.com/tool@latest` downloads and runs a module from outside the project.
  const remote = args.find((a) => a.text.includes('@'));
  if (remote !== undefined) return other(`go argument ${show(remote.text)} fetches a module from outside the workspace`);
  return withSubcommand('go', ['build', 'test', 'run', 'vet', 'generate'])(args, workspace);
};

export const RUNNERS = new Map<string, Runner>([
  ['npm', withSubcommand('npm', ['run', 'run-script', 'test', 't', 'tst', 'start', 'stop', 'restart', 'exec'])],
  ['pnpm', withSubcommand('pnpm', ['run', 'test', 't', 'start', 'exec'])],
  ['yarn', withSubcommand('yarn', ['run', 'test', 'start', 'exec'])],
  ['npx', npxRunner],
  ['node', nodeRunner],
  ['deno', withSubcommand('deno', ['run', 'test', 'task', 'bench', 'check', 'lint', 'fmt'])],
  ['bun', bunRunner],
  ['python', pythonRunner('python')],
  ['python3', pythonRunner('python3')],
  ['pip', pipRunner('pip')],
  ['pip3', pipRunner('pip3')],
  ['pytest', anyArgs('pytest')],
  ['jest', anyArgs('jest')],
  ['vitest', anyArgs('vitest')],
  ['mocha', anyArgs('mocha')],
  ['make', anyArgs('make')],
  ['cargo', withSubcommand('cargo', ['build', 'b', 'test', 't', 'run', 'r', 'check', 'c', 'bench', 'clippy', 'doc', 'fmt'])],
  ['go', goRunner],
  ['gradle', anyArgs('gradle')],
  ['gradlew', anyArgs('gradlew')],
  ['mvn', anyArgs('mvn')],
  ['dotnet', withSubcommand('dotnet', ['build', 'test', 'run'])],
  ['tsc', anyArgs('tsc')],
  ['eslint', anyArgs('eslint')],
  ['prettier', anyArgs('prettier')],
]);
