// A supervisor that dies between its `starting` spawn record and the pid record (decision 59): the
// leader's posix_spawn on its thread has returned, the tree runs (a leader and a grandchild), but
// the pid is never recorded, because this platform holds the spawn's result back for ever. Prints
// `spawned <pid>` once the tree runs; the test then SIGKILLs this process.
import { ProcessSupervisor } from '../../src/process/index.js';
import { LinuxPlatform } from '../../src/process/linux/linux-platform.js';
import type { SpawnedLeader } from '../../src/process/platform.js';

const stateDir = process.argv[2]!;
const cgroups = process.argv[3] === 'cgroups';

class HoldsTheSpawnBack extends LinuxPlatform {
  override spawnLeaderAsync(command: string, args: readonly string[], o: { cwd: string; env: Readonly<Record<string, string>> }): Promise<SpawnedLeader> | null {
    const p = super.spawnLeaderAsync(command, args, o);
    if (!p) {
      process.stdout.write('no-async-spawn\n');
      process.exit(3);
    }
    return p.then((leader) => {
      process.stdout.write(`spawned ${leader.pid}\n`);
      return new Promise<SpawnedLeader>(() => undefined);
    });
  }
}

const sup = ProcessSupervisor.open({ stateDir, platform: new HoldsTheSpawnBack({ cgroups, posixSpawn: true }) });
void sup.spawnTreeAsync({ command: '/bin/sh', args: ['-c', 'sleep 60 & exec sleep 61'], artifacts: false });
setInterval(() => undefined, 1_000);
