// Faults through localkube's API: a node powered off goes NotReady and loses its pods to the others; powered
// on again it rejoins. A killed container is restarted by its kubelet. The API server and the controller
// manager can be restarted.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive nodes control-plane
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { etcdImage, versions, type KubeList } from '../../src/index.ts';
import { etcdContainer, eventually, podReady, useCluster, type Pod } from '../support.ts';

const suite = useCluster('faults');
const image = etcdImage(versions.ETCD_VERSIONS.at(-1)!);

const nodeReady = async (name: string): Promise<boolean> => {
  const node = await suite.kube.client.get<{ status: { conditions: { type: string; status: string }[] } }>(`/api/v1/nodes/${name}`);
  return node.status.conditions.some((c) => c.type === 'Ready' && c.status === 'True');
};

test('a killed container is restarted by its kubelet', async () => {
  const { kube, namespace } = suite;
  await kube.client.create(`/api/v1/namespaces/${namespace}/pods`, { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'victim' }, spec: { containers: [etcdContainer(image)] } });
  // Not running yet: the probe says where the pod is (scheduled? which node? the container's waiting reason),
  // so a timeout names what held it up.
  await eventually('victim running', async () => {
    const pod = await kube.client.get<Pod>(`/api/v1/namespaces/${namespace}/pods/victim`);
    if (pod.status?.containerStatuses?.[0]?.state?.running) return true;
    throw new Error(`pod victim on ${pod.spec.nodeName ?? 'no node'}: ${JSON.stringify({ phase: pod.status?.phase, conditions: pod.status?.conditions, container: pod.status?.containerStatuses?.[0]?.state })}`);
  }, { timeoutMs: 120_000 });
  await kube.killContainer(namespace, 'victim');
  const restarted = await eventually('a restart', async () => {
    const s = (await kube.client.get<Pod>(`/api/v1/namespaces/${namespace}/pods/victim`)).status?.containerStatuses?.[0];
    return s && s.restartCount >= 1 && s.state?.running ? s : undefined;
  }, { timeoutMs: 60_000 });
  assert.equal(restarted.lastState?.terminated?.exitCode, 137, 'SIGKILL');
});

test('a stopped node goes NotReady, its pods are evicted and replaced elsewhere; restarted, it is Ready again', async () => {
  const { kube, namespace } = suite;
  const labels = { app: 'evict' };
  await kube.client.create(`/apis/apps/v1/namespaces/${namespace}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'evict' },
    spec: {
      replicas: 3,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          affinity: { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: labels }, topologyKey: 'kubernetes.io/hostname' } }] } },
          containers: [etcdContainer(image, { readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 } })],
        },
      },
    },
  });
  const list = async (): Promise<Pod[]> => (await kube.client.get<KubeList<Pod>>(`/api/v1/namespaces/${namespace}/pods?labelSelector=app%3Devict`)).items;
  const before = await eventually('3 ready pods', async () => {
    const pods = await list();
    return pods.length === 3 && pods.every(podReady) ? pods : undefined;
  }, { timeoutMs: 90_000 });
  const victimNode = before[0]!.spec.nodeName!;
  const victims = new Set(before.filter((p) => p.spec.nodeName === victimNode).map((p) => p.metadata.name));

  await kube.stopNode(victimNode);
  await eventually(`${victimNode} NotReady`, async () => !(await nodeReady(victimNode)), { timeoutMs: 60_000 });
  await eventually('pods evicted and replaced on other nodes', async () => {
    const pods = await list();
    const evicted = pods.filter((p) => victims.has(p.metadata.name)).every((p) => p.metadata.deletionTimestamp);
    const serving = pods.filter((p) => !p.metadata.deletionTimestamp && podReady(p) && p.spec.nodeName !== victimNode);
    return evicted && serving.length === 3;
  }, { timeoutMs: 90_000 });

  await kube.startNode(victimNode);
  await eventually(`${victimNode} Ready again`, () => nodeReady(victimNode), { timeoutMs: 60_000 });
  // Back online, the kubelet finishes the evictions: the old pods are gone for good.
  await eventually('evicted pods removed', async () => (await list()).every((p) => !victims.has(p.metadata.name)), { timeoutMs: 90_000 });
});

test('the API server can be restarted and clients carry on', async () => {
  const { kube } = suite;
  await kube.restartApiserver();
  const version = await kube.client.get<{ gitVersion: string }>('/version');
  assert.equal(version.gitVersion, versions.KUBERNETES_VERSION);
});

test('the controller manager can be restarted: it says it runs, and a namespace made after gets its ServiceAccount', async () => {
  const { kube } = suite;
  await kube.restartComponent('kube-controller-manager');
  assert.deepEqual(await kube.controlPlane(), [
    { name: 'kube-apiserver', running: true },
    { name: 'kube-controller-manager', running: true },
    { name: 'kube-scheduler', running: true },
  ]);
  const name = `${suite.namespace}-after`;
  await kube.client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
  try {
    await eventually(`the ServiceAccount ${name}/default`, () => kube.client.get(`/api/v1/namespaces/${name}/serviceaccounts/default`).then(() => true, () => false));
  } finally {
    await kube.client.delete(`/api/v1/namespaces/${name}`);
  }
});
