// Dynamic local volumes that outlive their pods, and the garbage collector following owner references.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { etcdImage, versions, type KubeList } from '../../src/index.ts';
import { etcdContainer, eventually, podReady, useCluster, type Pod } from '../support.ts';

const suite = useCluster('storage');
const image = etcdImage(versions.ETCD_VERSIONS.at(-1)!);

test('a PVC-backed pod keeps its data across deletion and re-creation with the same claim', async () => {
  const { kube, namespace } = suite;
  await kube.client.create(`/api/v1/namespaces/${namespace}/persistentvolumeclaims`, {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: 'data' },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const podSpec = {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'stateful' },
    spec: {
      containers: [etcdContainer(image, { volumeMounts: [{ name: 'data', mountPath: '/var/etcd' }], readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 } })],
      volumes: [{ name: 'data', persistentVolumeClaim: { claimName: 'data' } }],
    },
  };
  const ready = async (): Promise<Pod> =>
    eventually('stateful pod ready', async () => {
      const p = await kube.client.find<Pod>(`/api/v1/namespaces/${namespace}/pods/stateful`);
      return p && podReady(p) && !p.metadata.deletionTimestamp ? p : undefined;
    }, { timeoutMs: 90_000 });
  const kv = (pod: Pod, op: 'put' | 'range', body: Record<string, string>): Promise<Response> =>
    fetch(`http://${pod.status!.podIP}:2379/v3/kv/${op}`, { method: 'POST', body: JSON.stringify(body), signal: AbortSignal.timeout(5000) });
  const b64 = (s: string): string => Buffer.from(s).toString('base64');

  await kube.client.create(`/api/v1/namespaces/${namespace}/pods`, podSpec);
  const first = await ready();
  assert.equal((await kv(first, 'put', { key: b64('kept'), value: b64('across pods') })).status, 200);

  const claim = await kube.client.get<{ spec: { volumeName: string; storageClassName: string } }>(`/api/v1/namespaces/${namespace}/persistentvolumeclaims/data`);
  assert.equal(claim.spec.storageClassName, 'local', 'the default StorageClass is local');
  const volume = await kube.client.get<{ spec: { local: { path: string }; nodeAffinity: unknown } }>(`/api/v1/persistentvolumes/${claim.spec.volumeName}`);
  assert.match(volume.spec.local.path, new RegExp(`/nodes/${first.spec.nodeName}/volumes/`));

  await kube.client.delete(`/api/v1/namespaces/${namespace}/pods/stateful`);
  await eventually('pod gone', async () => !(await kube.client.find(`/api/v1/namespaces/${namespace}/pods/stateful`)), { timeoutMs: 60_000 });
  await kube.client.create(`/api/v1/namespaces/${namespace}/pods`, podSpec);
  const second = await ready();
  assert.equal(second.spec.nodeName, first.spec.nodeName, 'the local volume pins the pod to its node');
  const range = (await (await kv(second, 'range', { key: b64('kept') })).json()) as { kvs?: { value: string }[] };
  assert.equal(Buffer.from(range.kvs?.[0]?.value ?? '', 'base64').toString(), 'across pods');
});

test('deleting a Deployment garbage-collects its ReplicaSet and pods', async () => {
  const { kube, namespace } = suite;
  const labels = { app: 'gc' };
  await kube.client.create(`/apis/apps/v1/namespaces/${namespace}/deployments`, {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'gc' },
    spec: { replicas: 2, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [etcdContainer(image)] } } },
  });
  const selector = `?labelSelector=${encodeURIComponent('app=gc')}`;
  await eventually('2 pods', async () => (await kube.client.get<KubeList>(`/api/v1/namespaces/${namespace}/pods${selector}`)).items.length === 2);
  const rs = (await kube.client.get<KubeList>(`/apis/apps/v1/namespaces/${namespace}/replicasets${selector}`)).items;
  assert.equal(rs.length, 1);
  await kube.client.delete(`/apis/apps/v1/namespaces/${namespace}/deployments/gc`);
  await eventually('ReplicaSet and pods collected', async () => {
    const left = [
      ...(await kube.client.get<KubeList>(`/apis/apps/v1/namespaces/${namespace}/replicasets${selector}`)).items,
      ...(await kube.client.get<KubeList>(`/api/v1/namespaces/${namespace}/pods${selector}`)).items,
    ];
    return left.length === 0;
  }, { timeoutMs: 60_000 });
});
