// The operator's figures on localkube, each against its floor measured in the same run:
// apply → Available for 1, 3 and 5 members vs the same etcd pods created directly with a static initial
// cluster; member pod deleted → Available again vs a bare pod's own replacement; scale 3→5→3; and the
// operator at rest with 50 one-member clusters (RSS, CPU, API requests and writes per minute).
import { Namespaces, Pods, Services, resource, type Client, type KubeObject } from '@quorum/runtime';
import { eventually, type TestEnv } from '@quorum/runtime/testing';
import { EtcdClusters } from '../src/resources.ts';
import { applyCluster, setUpOperator, waitAvailable } from '../test/integration/support.ts';
import { etcdImage } from '../src/api/defaults.ts';

const report = (bench: string, value: number, unit: string): void => void process.stdout.write(JSON.stringify({ bench, value: Math.round(value * 1000) / 1000, unit }) + '\n');
const progress = (msg: string): void => void process.stderr.write(`[etcd bench] ${msg}\n`);
const seconds = (t0: number): number => (performance.now() - t0) / 1000;
const IMAGE = etcdImage({ version: '3.6.16' });
const ReplicaSets = resource('apps/v1', 'ReplicaSet', 'replicasets', true);

type PodObj = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };
const ready = (p: PodObj): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** N etcd pods with a static initial cluster (what the operator's growth one member at a time is compared with). */
async function staticCluster(client: Client, ns: string, name: string, n: number): Promise<number> {
  await client.create(Services, { apiVersion: 'v1', kind: 'Service', metadata: { name, namespace: ns }, spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector: { static: name }, ports: [{ name: 'peer', port: 2380 }] } });
  const members = Array.from({ length: n }, (_, i) => `${name}-${i}`);
  const initial = members.map((m) => `${m}=http://${m}.${name}.${ns}.svc:2380`).join(',');
  const t0 = performance.now();
  for (const m of members) {
    await client.create(Pods, {
      apiVersion: 'v1',
      kind: 'Pod',
      metadata: { name: m, namespace: ns, labels: { static: name } },
      spec: {
        hostname: m,
        subdomain: name,
        containers: [{
          name: 'etcd', image: IMAGE, command: ['/usr/local/bin/etcd'],
          args: [`--name=${m}`, '--data-dir=/var/lib/etcd/data', '--listen-peer-urls=http://0.0.0.0:2380', '--listen-client-urls=http://0.0.0.0:2379', '--listen-metrics-urls=http://0.0.0.0:2381',
            `--advertise-client-urls=http://${m}.${name}.${ns}.svc:2379`, `--initial-advertise-peer-urls=http://${m}.${name}.${ns}.svc:2380`, `--initial-cluster=${initial}`, '--initial-cluster-state=new'],
          readinessProbe: { httpGet: { path: '/health', port: 2381 }, periodSeconds: 2 },
        }],
      },
    });
  }
  await eventually(`${n} static pods ready`, async () => {
    const pods = (await client.list(Pods, { namespace: ns, labelSelector: `static=${name}` })).items as PodObj[];
    return pods.length === n && pods.every(ready);
  }, { timeoutMs: 300_000, intervalMs: 200 });
  return seconds(t0);
}

async function metrics(client: Client): Promise<Map<string, number>> {
  const pods = (await client.list(Pods, { namespace: 'quorum-system', labelSelector: 'app.kubernetes.io/component=operator' })).items as (KubeObject & { status?: { podIP?: string } })[];
  const lease = await client.get(resource('coordination.k8s.io/v1', 'Lease', 'leases', true), { namespace: 'quorum-system', name: 'quorum-etcd-operator' }) as unknown as { spec: { holderIdentity: string } };
  const leader = pods.find((p) => p.metadata.name === lease.spec.holderIdentity)!;
  const text = await (await fetch(`http://${leader.status!.podIP}:8081/metrics`)).text();
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (!m) continue;
    // Lease renewals (every 2 s, by design of leader election) are counted apart from the operator's own calls.
    const lease = /resource="leases"/.test(m[2] ?? '') ? '_lease' : '';
    const key = m[1] === 'rest_client_requests_total' ? `requests${lease}${/method="(PATCH|POST|PUT|DELETE)"/.test(m[2] ?? '') ? '_write' : ''}` : m[1]!;
    out.set(key, (out.get(key) ?? 0) + Number(m[3]));
  }
  return out;
}

let env: TestEnv | undefined;
try {
  progress('operator: build, load, install');
  env = await setUpOperator();
  const client = env.client;

  for (const n of [1, 3, 5]) {
    const ns = await env.namespace(`bench-${n}`);
    progress(`apply → Available with ${n} member(s)`);
    let t0 = performance.now();
    await applyCluster(client, ns, 'b', { replicas: n });
    await waitAvailable(client, ns, 'b', n, 300_000);
    const available = seconds(t0);
    progress(`floor: ${n} static etcd pod(s)`);
    const floor = await staticCluster(client, ns, 's', n);
    report(`etcd.available_s.${n}`, available, 's');
    report(`etcd.floor_s.${n}`, floor, 's');
    report(`etcd.available_ratio.${n}`, available / floor, 'ratio');

    if (n === 3) {
      progress('recovery: delete a follower pod');
      const status = (await client.get(EtcdClusters, { namespace: ns, name: 'b' })).status!;
      const follower = status.members!.find((m) => !m.leader)!.name;
      const oldUid = (await client.get(Pods, { namespace: ns, name: follower })).metadata.uid;
      t0 = performance.now();
      await client.delete(Pods, { namespace: ns, name: follower });
      await eventually('Available again', async () => {
        const c = await client.get(EtcdClusters, { namespace: ns, name: 'b' });
        const pod = (await client.find(Pods, { namespace: ns, name: follower })) as PodObj | undefined;
        return pod && pod.metadata.uid !== oldUid && ready(pod) && c.status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True') && c.status.members?.every((m) => m.ready);
      }, { timeoutMs: 180_000, intervalMs: 200 });
      const recovery = seconds(t0);
      progress('recovery floor: a ReplicaSet replaces its deleted etcd pod');
      const labels = { floor: 'rs' };
      await client.create(ReplicaSets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'floor', namespace: ns }, spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'etcd', image: IMAGE, command: ['/usr/local/bin/etcd', '--data-dir=/tmp/d', '--listen-metrics-urls=http://0.0.0.0:2381'], readinessProbe: { httpGet: { path: '/health', port: 2381 }, periodSeconds: 2 } }] } } } } as KubeObject);
      const list = async (): Promise<PodObj[]> => (await client.list(Pods, { namespace: ns, labelSelector: 'floor=rs' })).items;
      const first = await eventually('floor pod ready', async () => (await list()).find((p) => ready(p) && !p.metadata.deletionTimestamp), { timeoutMs: 60_000 });
      t0 = performance.now();
      await client.delete(Pods, { namespace: ns, name: first.metadata.name! });
      await eventually('replacement ready', async () => (await list()).some((p) => p.metadata.uid !== first.metadata.uid && ready(p)), { timeoutMs: 60_000, intervalMs: 200 });
      const recoveryFloor = seconds(t0);
      report('etcd.recovery_s', recovery, 's');
      report('etcd.recovery_floor_s', recoveryFloor, 's');
      report('etcd.recovery_ratio', recovery / recoveryFloor, 'ratio');

      for (const [from, to] of [[3, 5], [5, 3]] as const) {
        progress(`scale ${from} → ${to}`);
        t0 = performance.now();
        await client.mergePatch(EtcdClusters, { namespace: ns, name: 'b' }, { spec: { replicas: to } });
        await waitAvailable(client, ns, 'b', to, 300_000);
        report(`etcd.scale_${from}_${to}_s`, seconds(t0), 's');
      }
    }
    await client.delete(Namespaces, ns).catch(() => undefined);
  }

  progress('50 one-member clusters');
  const ns = await env.namespace('bench-idle');
  for (let i = 0; i < 50; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => applyCluster(client, ns, `idle-${i + j}`, { replicas: 1 })));
  await eventually('50 clusters Available', async () => {
    const list = await client.list(EtcdClusters, { namespace: ns });
    return list.items.length === 50 && list.items.every((c) => c.status?.phase === 'Running');
  }, { timeoutMs: 900_000, intervalMs: 2000 });
  progress('settling 30 s, then measuring 60 s of rest');
  await new Promise((r) => setTimeout(r, 30_000));
  const before = await metrics(client);
  await new Promise((r) => setTimeout(r, 60_000));
  const after = await metrics(client);
  const delta = (k: string): number => (after.get(k) ?? 0) - (before.get(k) ?? 0);
  report('etcd.idle50.rss_mib', (after.get('process_resident_memory_bytes') ?? 0) / 1024 / 1024, 'MiB');
  report('etcd.idle50.cpu_s_per_min', delta('process_cpu_seconds_total'), 's/min');
  report('etcd.idle50.api_requests_per_min', delta('requests') + delta('requests_write'), 'requests/min');
  report('etcd.idle50.writes_per_min', delta('requests_write'), 'writes/min');
  report('etcd.idle50.lease_renewals_per_min', delta('requests_lease_write'), 'writes/min');
} finally {
  await env?.stop();
}
