// The API server is the pinned release, and RBAC is enforced: a fresh ServiceAccount may do nothing, the admin anything.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { versions } from '../../src/index.ts';
import { useCluster } from '../support.ts';

const suite = useCluster('cp');

test('kubectl version reports the pinned server version', async () => {
  const out = JSON.parse(await suite.kube.kubectl(['version', '-o', 'json'])) as { serverVersion: { gitVersion: string }; clientVersion: { gitVersion: string } };
  assert.equal(out.serverVersion.gitVersion, versions.KUBERNETES_VERSION);
  assert.equal(out.clientVersion.gitVersion, versions.KUBERNETES_VERSION);
});

test('an unprivileged ServiceAccount is denied by RBAC; the admin is allowed', async () => {
  const { kube, namespace } = suite;
  await kube.client.create(`/api/v1/namespaces/${namespace}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'nobody' } });
  const saConfig = await kube.serviceAccountKubeconfig(namespace, 'nobody');
  const asSA = await kube.kubectl(['--kubeconfig', saConfig, 'auth', 'can-i', 'list', 'pods', '-n', namespace], { allowFailure: true });
  assert.match(asSA.trim(), /^no\b/);
  const denied = await kube.kubectl(['--kubeconfig', saConfig, 'get', 'pods', '-n', namespace], { allowFailure: true });
  assert.match(denied, /Forbidden.*system:serviceaccount:[^:]+:nobody.*cannot list resource "pods"/);
  assert.equal((await kube.kubectl(['auth', 'can-i', 'list', 'pods', '-n', namespace])).trim(), 'yes');
  assert.equal((await kube.kubectl(['auth', 'can-i', '*', '*', '--all-namespaces'])).trim(), 'yes');
});

test('nodes carry hostname and distinct zone labels', async () => {
  const nodes = JSON.parse(await suite.kube.kubectl(['get', 'nodes', '-o', 'json'])) as { items: { metadata: { name: string; labels: Record<string, string> } }[] };
  assert.equal(nodes.items.length, suite.kube.nodes.length);
  for (const n of nodes.items) assert.equal(n.metadata.labels['kubernetes.io/hostname'], n.metadata.name);
  const zones = new Set(nodes.items.map((n) => n.metadata.labels['topology.kubernetes.io/zone']));
  assert.equal(zones.size, nodes.items.length);
});
