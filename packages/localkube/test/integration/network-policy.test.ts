// NetworkPolicy is enforced (kube-router's policy controller, docs/localkube.md): behind a default-deny and
// an allow-from-one-namespace policy, a server answers a client of the allowed namespace and no client of
// another namespace, on the same node (bridged traffic) or another (routed), by pod IP or through its Service.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { etcdImage, versions, type KubeList, type KubeObject } from '../../src/index.ts';
import { etcdContainer, eventually, podReady, useCluster, type Pod } from '../support.ts';

const suite = useCluster('netpol');
const image = etcdImage(versions.ETCD_VERSIONS.at(-1)!);
const serverLabels = { app: 'server' };

/** An etcd pod pinned to `node`: a server to reach, and etcdctl to reach others with. */
async function etcdPod(namespace: string, name: string, node: string, labels: Record<string, string> = {}): Promise<Pod> {
  await suite.kube.client.create(`/api/v1/namespaces/${namespace}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name, labels },
    spec: { nodeName: node, containers: [etcdContainer(image, { readinessProbe: { httpGet: { path: '/health', port: 2379 }, periodSeconds: 1 } })] },
  });
  return eventually(`${namespace}/${name} ready`, async () => {
    const pod = await suite.kube.client.get<Pod>(`/api/v1/namespaces/${namespace}/pods/${name}`);
    return podReady(pod) ? pod : undefined;
  }, { timeoutMs: 90_000 });
}

/** Whether `etcdctl endpoint health` from `from` gets an answer from `address`:2379 within its timeouts. */
async function reaches(from: Pod, address: string): Promise<{ ok: boolean; output: string }> {
  const output = await suite.kube.kubectl(
    ['exec', '-n', from.metadata.namespace!, from.metadata.name, '--', 'etcdctl', `--endpoints=http://${address}:2379`, '--dial-timeout=2s', '--command-timeout=3s', 'endpoint', 'health'],
    { allowFailure: true },
  );
  return { ok: / is healthy: /.test(output), output: output.trim() };
}

async function applyPolicies(namespace: string, allowedNs: string): Promise<void> {
  const path = (name: string): string => `/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies/${name}`;
  await suite.kube.client.apply(path('default-deny'), {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'default-deny', namespace },
    spec: { podSelector: {}, policyTypes: ['Ingress'] },
  });
  await suite.kube.client.apply(path('allow-clients'), {
    apiVersion: 'networking.k8s.io/v1',
    kind: 'NetworkPolicy',
    metadata: { name: 'allow-clients', namespace },
    spec: {
      podSelector: { matchLabels: serverLabels },
      policyTypes: ['Ingress'],
      ingress: [{ from: [{ namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': allowedNs } } }], ports: [{ protocol: 'TCP', port: 2379 }] }],
    },
  });
}

test('default-deny + allow: the allowed namespace reaches the server, another namespace does not (same node and across nodes)', async (t) => {
  const { kube, namespace } = suite;
  const [allowedNs, otherNs] = [`${namespace}-in`, `${namespace}-out`];
  for (const name of [allowedNs, otherNs]) {
    await kube.client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name } });
    t.after(() => kube.client.delete(`/api/v1/namespaces/${name}`));
  }
  const nodes = (await kube.client.get<KubeList<KubeObject>>('/api/v1/nodes')).items.map((n) => n.metadata.name).sort();
  const [serverNode, otherNode = serverNode] = [nodes[0]!, nodes[1]];

  const server = await etcdPod(namespace, 'server', serverNode, serverLabels);
  await kube.client.apply(`/api/v1/namespaces/${namespace}/services/server`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'server', namespace },
    spec: { selector: serverLabels, ports: [{ name: 'client', port: 2379 }] },
  });
  const serviceIP = (await kube.client.get<{ spec: { clusterIP: string } }>(`/api/v1/namespaces/${namespace}/services/server`)).spec.clusterIP;
  await applyPolicies(namespace, allowedNs);

  // Clients start after the policies: the allowed one is admitted only once the agent has synced with its address.
  const allowed = await etcdPod(allowedNs, 'client', otherNode);
  const blockedHere = await etcdPod(otherNs, 'same-node', serverNode);
  const blockedThere = await etcdPod(otherNs, 'other-node', otherNode);

  // The positive signal first: the agent has synced both policies, with the allowed client's address in the allow rule.
  await eventually('the allowed client reaches the server by pod IP and Service', async () =>
    (await reaches(allowed, server.status!.podIP!)).ok && (await reaches(allowed, serviceIP)).ok,
  { timeoutMs: 60_000 });

  for (const client of [blockedHere, blockedThere]) {
    const where = `${client.metadata.name} (${client.spec.nodeName})`;
    // The blocked clients' own network works: they reach an unrestricted pod, the allowed client.
    const control = await reaches(client, allowed.status!.podIP!);
    assert.ok(control.ok, `${where} reaches the allowed client's etcd: ${control.output}`);
    for (const [what, address] of [['pod IP', server.status!.podIP!], ['Service', serviceIP]] as const) {
      const attempt = await reaches(client, address);
      assert.ok(!attempt.ok, `${where} must not reach the server by ${what}: ${attempt.output}`);
    }
  }

  // Removing the policies opens the server again: enforcement follows the API, both ways.
  for (const name of ['default-deny', 'allow-clients']) await kube.client.delete(`/apis/networking.k8s.io/v1/namespaces/${namespace}/networkpolicies/${name}`);
  await eventually('the other namespace reaches the server once the policies are gone', async () => (await reaches(blockedThere, server.status!.podIP!)).ok, { timeoutMs: 60_000 });
});
