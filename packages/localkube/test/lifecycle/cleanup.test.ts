// After stop() — and after the process that started a cluster is SIGKILLed — nothing of localkube is left:
// no process, mount, cgroup, link, route or iptables rule. Each case starts its own 1-node cluster.
import assert from 'node:assert/strict';
import { spawn } from 'node:child_process';
import { mkdtemp, readFile, readdir } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { LocalKube } from '../../src/index.ts';
import { cgroupPids } from '../../src/cluster/cgroups.ts';
import { mountsUnder } from '../../src/cluster/mounts.ts';
import { leftoverNetwork } from '../../src/cluster/network.ts';
import { CGROUP_PARENT } from '../../src/cluster/topology.ts';
import { eventually } from '../support.ts';

async function processesMentioning(text: string): Promise<string[]> {
  const found: string[] = [];
  for (const pid of await readdir('/proc')) {
    if (!/^\d+$/.test(pid) || Number(pid) === process.pid) continue;
    const cmdline = await readFile(`/proc/${pid}/cmdline`, 'utf8').catch(() => '');
    if (cmdline.includes(text)) found.push(`${pid}: ${cmdline.replaceAll('\0', ' ').slice(0, 200)}`);
  }
  return found;
}

async function assertNothingLeft(stateDir: string): Promise<void> {
  assert.deepEqual(await processesMentioning(stateDir), [], 'processes');
  assert.deepEqual(await cgroupPids(CGROUP_PARENT), [], 'processes in localkube cgroups');
  assert.deepEqual(await mountsUnder(stateDir), [], 'mounts');
  assert.deepEqual(await leftoverNetwork(), [], 'links, routes, iptables rules');
}

test('stop() removes every process, mount, link, route and rule', async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'localkube-stop-'));
  const kube = await LocalKube.start({ nodes: 1, stateDir });
  assert.ok((await leftoverNetwork()).length > 0, 'a running cluster has links and rules');
  assert.ok((await mountsUnder(stateDir)).length > 0, 'a running cluster has mounts');
  await kube.stop();
  await assertNothingLeft(stateDir);
});

test('a SIGKILLed parent leaves no orphans: the supervisor tears the cluster down', async () => {
  const stateDir = await mkdtemp(join(tmpdir(), 'localkube-orphan-'));
  const script = `
    import { LocalKube } from ${JSON.stringify(new URL('../../src/index.ts', import.meta.url).href)};
    await LocalKube.start({ nodes: 1, stateDir: ${JSON.stringify(stateDir)} });
    process.stdout.write('READY\\n');
    setInterval(() => {}, 1000);
  `;
  const child = spawn(process.execPath, ['--input-type=module', '-e', script], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.stdout.on('data', (d: Buffer) => d.toString().includes('READY') && resolve());
    child.on('exit', (code) => reject(new Error(`starter exited early (${code})`)));
  });
  const status = JSON.parse(await readFile(join(stateDir, 'status.json'), 'utf8')) as { pid: number };
  child.kill('SIGKILL');
  const exited = (): Promise<boolean> => {
    try {
      process.kill(status.pid, 0);
      return Promise.resolve(false);
    } catch {
      return Promise.resolve(true);
    }
  };
  await eventually('supervisor exit', exited, { timeoutMs: 120_000 });
  await assertNothingLeft(stateDir);
});
