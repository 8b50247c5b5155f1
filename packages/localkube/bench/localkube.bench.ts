// localkube's own figures: cold `up` with caches warm, `down`, idle memory, and pod create → Ready latency
// against its floor, the same container started directly with `ctr run` on a node's containerd.
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { LocalKube, etcdImage, versions, type KubeObject } from '../src/index.ts';
import { cgroupPids } from '../src/cluster/cgroups.ts';
import { CGROUP_PARENT, topology } from '../src/cluster/topology.ts';
import { run } from '../src/exec.ts';
import { progress } from '../src/progress.ts';
import { percentile, report } from './report.ts';

const PODS = 30;
const FLOOR_RUNS = 10;
const image = etcdImage(versions.ETCD_VERSIONS.at(-1)!);
const stateDir = join(import.meta.dirname, '..', '..', '..', '.localkube-bench');

async function rssMiB(pids: number[]): Promise<number> {
  let kib = 0;
  for (const pid of pids) {
    const status = await readFile(`/proc/${pid}/status`, 'utf8').catch(() => '');
    kib += Number(/^VmRSS:\s+(\d+)/m.exec(status)?.[1] ?? 0);
  }
  return kib / 1024;
}

interface Pod extends KubeObject {
  status?: { conditions?: { type: string; status: string }[] };
}

const t0 = performance.now();
const kube = await LocalKube.start({ nodes: 3, stateDir });
report('localkube.up_s', (performance.now() - t0) / 1000, 's');

try {
  progress('idle for 20 s before measuring memory');
  await new Promise((r) => setTimeout(r, 20_000));
  const status = JSON.parse(await readFile(join(stateDir, 'status.json'), 'utf8')) as { pid: number };
  report('localkube.idle_rss_mib', await rssMiB([status.pid, ...(await cgroupPids(CGROUP_PARENT))]), 'MiB');

  const ns = 'bench';
  await kube.client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } });
  const latencies: number[] = [];
  progress(`creating ${PODS} pods one at a time`);
  for (let i = 0; i < PODS; i++) {
    const name = `p${i}`;
    const abort = new AbortController();
    const started = performance.now();
    const ready = (async () => {
      for await (const event of kube.client.watch<Pod>(`/api/v1/namespaces/${ns}/pods?fieldSelector=metadata.name%3D${name}`, abort.signal)) {
        if (event.object.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True')) return performance.now();
      }
      throw new Error(`watch of ${name} ended`);
    })();
    await kube.client.create(`/api/v1/namespaces/${ns}/pods`, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name, labels: { app: 'latency' } },
      spec: {
        terminationGracePeriodSeconds: 0,
        topologySpreadConstraints: [{ maxSkew: 1, topologyKey: 'kubernetes.io/hostname', whenUnsatisfiable: 'DoNotSchedule', labelSelector: { matchLabels: { app: 'latency' } } }],
        containers: [{ name: 'etcd', image, command: ['/usr/local/bin/etcd', '--data-dir=/tmp/data'] }],
      },
    });
    latencies.push(((await ready) - started) / 1000);
    abort.abort();
  }
  const p50 = percentile(latencies, 50);
  report('localkube.pod_ready_p50_s', p50, 's');
  report('localkube.pod_ready_p99_s', percentile(latencies, 99), 's');

  progress(`timing ${FLOOR_RUNS} × ctr run of the same container on node-1's containerd`);
  const socket = topology(stateDir, 3).nodes[0]!.containerdSocket;
  const floors: number[] = [];
  for (let i = 0; i < FLOOR_RUNS; i++) {
    const id = `floor-${i}`;
    const start = performance.now();
    await run('ctr', ['--address', socket, '-n', 'k8s.io', 'run', '-d', image, id, '/usr/local/bin/etcd', '--data-dir=/tmp/data']);
    floors.push((performance.now() - start) / 1000);
    await run('ctr', ['--address', socket, '-n', 'k8s.io', 'tasks', 'kill', '-s', 'SIGKILL', id], { allowFailure: true });
    await new Promise((r) => setTimeout(r, 300));
    await run('ctr', ['--address', socket, '-n', 'k8s.io', 'tasks', 'delete', '-f', id], { allowFailure: true });
    await run('ctr', ['--address', socket, '-n', 'k8s.io', 'containers', 'delete', id], { allowFailure: true });
  }
  const floor = percentile(floors, 50);
  report('localkube.ctr_run_floor_s', floor, 's');
  report('localkube.pod_ready_p50_ratio', p50 / floor, 'ratio');
} finally {
  const t1 = performance.now();
  await kube.stop();
  report('localkube.down_s', (performance.now() - t1) / 1000, 's');
}
