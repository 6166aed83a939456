// For `doctor`: Node's permission model, which every tool host runs under (host-launch.ts), found
// by a script that reads a file outside its grant and spawns a child; both must be refused.
import * as fs from 'node:fs';
import * as path from 'node:path';
import { outcomeText, withScratchDirs, type MechanismFinding, type ProbeChildren } from '../../process/probe-children.js';

const PERMISSION_SCRIPT = `
const fs = require('node:fs');
const out = {};
try { fs.readFileSync(process.argv[2]); out.inside = 'ok'; } catch (e) { out.inside = e.code || String(e); }
try { fs.readFileSync(process.argv[3]); out.outside = 'ok'; } catch (e) { out.outside = e.code || String(e); }
try { require('node:child_process').spawnSync('true'); out.spawn = 'ok'; } catch (e) { out.spawn = e.code || String(e); }
process.stdout.write(JSON.stringify(out));
`;

export async function probeNodePermission(children: ProbeChildren): Promise<MechanismFinding> {
  const major = Number(process.versions.node.split('.')[0]);
  const flag = major >= 22 ? '--permission' : '--experimental-permission';
  return withScratchDirs(['grant', 'outside'], async ([granted, outside]) => {
    const script = path.join(granted!, 'probe.cjs');
    const insideFile = path.join(granted!, 'inside.txt');
    const outsideFile = path.join(outside!, 'outside.txt');
    fs.writeFileSync(script, PERMISSION_SCRIPT);
    fs.writeFileSync(insideFile, 'inside');
    fs.writeFileSync(outsideFile, 'outside');
    const r = await children.run(process.execPath, [flag, `--allow-fs-read=${granted}`, script, insideFile, outsideFile]);
    let res: { inside?: string; outside?: string; spawn?: string };
    try {
      res = JSON.parse(r.stdout) as typeof res;
    } catch {
      return { ok: false, detail: `node ${flag} did not run the probe script: ${outcomeText(r)}`, version: process.version };
    }
    const detail = `${flag} --allow-fs-read=<dir>: read inside ${res.inside}, read outside ${res.outside}, child_process ${res.spawn}`;
    const ok = res.inside === 'ok' && res.outside === 'ERR_ACCESS_DENIED' && res.spawn === 'ERR_ACCESS_DENIED';
    return { ok, detail, version: process.version };
  });
}
