// Which opener `supervisor web --open` starts, and with what (src/web/browser-launch.ts): $BROWSER's
// first entry, with %s replaced by the launch file or the file appended, no shell involved; else
// the platform's opener. The file, never the URL, is the argument.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { openerFor } from '../../src/web/browser-launch.js';

test('$BROWSER: the first entry of the list, %s replaced or the file appended; without it, the desktop opener', () => {
  const file = '/state/web-open-x/open.html';
  assert.deepEqual(openerFor(file, { BROWSER: 'firefox' }, 'linux'), { command: 'firefox', args: [file] });
  assert.deepEqual(openerFor(file, { BROWSER: ' chromium --new-window %s : firefox' }, 'linux'), { command: 'chromium', args: ['--new-window', file] });
  assert.deepEqual(openerFor(file, { BROWSER: '::w3m' }, 'linux'), { command: 'w3m', args: [file] });
  // Words are split on spaces and passed as they are: a `;` is an argument, not a second command.
  assert.deepEqual(openerFor(file, { BROWSER: 'lynx; rm -rf ~' }, 'linux'), { command: 'lynx;', args: ['rm', '-rf', '~', file] });
  assert.deepEqual(openerFor(file, {}, 'linux'), { command: 'xdg-open', args: [file] });
  assert.deepEqual(openerFor(file, { BROWSER: '' }, 'darwin'), { command: 'open', args: [file] });
  assert.deepEqual(openerFor(file, {}, 'win32'), { command: 'cmd', args: ['/c', 'start', '', file] });
});
