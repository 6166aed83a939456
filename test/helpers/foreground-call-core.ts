// A scripted core whose first model turn runs one command as a foreground terminal call and whose
// second turn ends the run: the shape of a run that holds a call's own tree (not a task's) while
// the command runs. Shared by the CLI's and the web page's tree-cancel tests.
import { makeCore } from '../core/temp-core.js';

export function foregroundCallCore(command: string): string {
  return makeCore({
    'agent.yaml': 'name: t\ntoolsets: [terminal]\ngrants: [terminal.exec]\napproval:\n  default: auto\nmodel:\n  provider: scripted\n  script: script.yaml\n',
    'script.yaml': `turns:\n  - tool_calls:\n      - { name: terminal, arguments: { command: ${JSON.stringify(command)} } }\n  - text: done\n`,
  });
}
