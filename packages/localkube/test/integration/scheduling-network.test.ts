// Real scheduling, pod networking, kube-proxy and CoreDNS: etcd pods spread one per node by required
// anti-affinity, reachable on their pod IPs from the host, by DNS name from other pods, and through a
// ClusterIP Service from pods and from the host.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { etcdImage } from '../../src/index.ts';
import { versions } from '../../src/index.ts';
import { etcdContainer, eventually, podReady, useCluster, type Pod } from '../support.ts';

const suite = useCluster('net');
const image = etcdImage(versions.ETCD_VERSIONS.at(-1)!);
const labels = { app: 'spread' };

interface PodList {
  items: Pod[];
}

const pods = async (selector: string): Promise<Pod[]> =>
  (await suite.kube.client.get<PodList>(`/api/v1/namespaces/${suite.namespace}/pods?labelSelector=${encodeURIComponent(selector)}`)).items;

async function deploy(replicas: number): Promise<void> {
  await suite.kube.client.apply(`/apis/apps/v1/namespaces/${suite.namespace}/deployments/spread`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'spread', namespace: suite.namespace },
    spec: {
      replicas,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          affinity: { podAntiAffinity: { requiredDuringSchedulingIgnoredDuringExecution: [{ labelSelector: { matchLabels: labels }, topologyKey: 'kubernetes.io/hostname' }] } },
          containers: [etcdContainer(image, { readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 } })],
        },
      },
    },
  });
}

test('3 etcd replicas with required anti-affinity run one per node and answer /health on their pod IPs', async () => {
  await deploy(3);
  const ready = await eventually('3 ready etcd pods', async () => {
    const list = await pods('app=spread');
    return list.length === 3 && list.every(podReady) ? list : undefined;
  }, { timeoutMs: 90_000 });
  const nodes = new Set(ready.map((p) => p.spec.nodeName));
  assert.equal(nodes.size, 3, `pods on ${[...nodes].join(', ')}`);
  for (const pod of ready) {
    const res = await fetch(`http://${pod.status!.podIP}:2379/health`, { signal: AbortSignal.timeout(5000) });
    assert.equal(((await res.json()) as { health: string }).health, 'true');
  }
});

test('a 4th replica stays Pending with the scheduler saying why', async () => {
  await deploy(4);
  const pending = await eventually('an unschedulable pod', async () => {
    const list = await pods('app=spread');
    return list.find((p) => p.status?.conditions?.some((c) => c.type === 'PodScheduled' && c.reason === 'Unschedulable'));
  });
  assert.equal(pending.status?.phase, 'Pending');
  const message = pending.status?.conditions?.find((c) => c.type === 'PodScheduled')?.message ?? '';
  assert.match(message, /0\/3 nodes are available: 3 node\(s\) didn't match pod anti-affinity rules/);
  await deploy(3);
});

test('pod DNS names and Service names resolve inside pods; a ClusterIP Service reaches a ready endpoint', async () => {
  const { kube, namespace } = suite;
  await kube.client.apply(`/api/v1/namespaces/${namespace}/services/members`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'members', namespace },
    spec: { clusterIP: 'None', publishNotReadyAddresses: true, selector: { app: 'named' }, ports: [{ name: 'client', port: 2379 }] },
  });
  await kube.client.apply(`/api/v1/namespaces/${namespace}/services/client`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'client', namespace },
    spec: { selector: { app: 'named' }, ports: [{ name: 'client', port: 2379 }] },
  });
  await kube.client.create(`/api/v1/namespaces/${namespace}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'etcd-a', labels: { app: 'named' } },
    spec: { hostname: 'etcd-a', subdomain: 'members', containers: [etcdContainer(image, { readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 } })] },
  });
  await eventually('etcd-a ready', async () => podReady(await kube.client.get<Pod>(`/api/v1/namespaces/${namespace}/pods/etcd-a`)), { timeoutMs: 60_000 });

  // From another pod: write through the pod's own DNS name, read back through the Service name.
  const podName = `etcd-a.members.${namespace}.svc.cluster.local`;
  await kube.client.create(`/api/v1/namespaces/${namespace}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'dns-client' },
    spec: {
      restartPolicy: 'Never',
      initContainers: [{ name: 'by-pod-name', image, command: ['etcdctl', `--endpoints=http://${podName}:2379`, 'put', 'greeting', 'hello'] }],
      containers: [{ name: 'by-service-name', image, command: ['etcdctl', '--endpoints=http://client:2379', 'get', 'greeting', '--print-value-only'] }],
    },
  });
  const done = await eventually('dns-client to finish', async () => {
    const pod = await kube.client.get<Pod>(`/api/v1/namespaces/${namespace}/pods/dns-client`);
    return ['Succeeded', 'Failed'].includes(pod.status?.phase ?? '') ? pod : undefined;
  }, { timeoutMs: 60_000 });
  const logs = await kube.kubectl(['logs', '-n', namespace, 'dns-client', '-c', 'by-service-name'], { allowFailure: true });
  assert.equal(done.status?.phase, 'Succeeded', logs);
  assert.equal(logs.trim(), 'hello');

  // From the host, through kube-proxy's rules for the ClusterIP.
  const svc = await kube.client.get<{ spec: { clusterIP: string } }>(`/api/v1/namespaces/${namespace}/services/client`);
  const res = await fetch(`http://${svc.spec.clusterIP}:2379/v3/kv/range`, { method: 'POST', body: JSON.stringify({ key: Buffer.from('greeting').toString('base64') }), signal: AbortSignal.timeout(5000) });
  const body = (await res.json()) as { kvs?: { value: string }[] };
  assert.equal(Buffer.from(body.kvs?.[0]?.value ?? '', 'base64').toString(), 'hello');
});
