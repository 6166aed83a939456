// Shared by the Linux process tests: inside a describe(), a supervisor on its own state dir with
// cgroups on or off, closed after the suite, and a leak check after every test (every process a
// test started must be gone: a leak fails the test that leaked).
import { after, afterEach, before } from 'node:test';
import assert from 'node:assert/strict';
import { ProcessSupervisor } from '../../src/process/index.js';
import { LinuxPlatform } from '../../src/process/linux/linux-platform.js';
import { killMarked, tempDir } from '../helpers/procs.js';

/** `started` collects the spawn ids the tests track; `use` receives the supervisor once it is open. */
export function linuxSupervisorSuite(mode: 'cgroup' | 'no-cgroup', started: Set<string>, use: (sup: ProcessSupervisor) => void): void {
  const dir = tempDir();
  let sup: ProcessSupervisor;
  before(() => {
    sup = ProcessSupervisor.open({ stateDir: dir.path, platform: new LinuxPlatform({ cgroups: mode === 'cgroup' }) });
    if (mode === 'cgroup' && !sup.capabilities.cgroup) {
      throw new Error('this machine has a writable cgroup v2 but the supervisor did not find it');
    }
    use(sup);
  });
  afterEach(() => {
    const leaked = killMarked(started);
    started.clear();
    assert.equal(leaked, 0, `${leaked} supervised process(es) outlived their test`);
  });
  after(async () => {
    await sup.close();
    dir.remove();
  });
}
