// Each EtcdCluster's NetworkPolicy (issue 23, finding 3): what it admits on each port by default and with
// spec.network.clientsFrom, that it selects the pods the operator makes (members, backup Jobs, the operator
// itself), and that the reconciler applies it, or deletes its own once spec.network.policy is false.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { NetworkPolicies, Store, type Client, type KubeObject, type NetworkPolicy, type OpenObject } from '@quorum/runtime';
import { applyDefaults } from '../../src/api/defaults.ts';
import type { EtcdCluster, EtcdClusterSpec } from '../../src/api/etcdcluster.ts';
import { backupJob } from '../../src/backup/job.ts';
import { applyClusterObjects } from '../../src/cluster/cluster-objects.ts';
import type { ReconcilerDeps } from '../../src/cluster/deps.ts';
import { memberPod, networkPolicy } from '../../src/cluster/resources.ts';
import { operatorManifests } from '../../src/deploy/manifests.ts';
import { configFromEnv } from '../../src/operator/config.ts';

const cluster = (spec: EtcdClusterSpec = {}): EtcdCluster => ({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'c', namespace: 'apps', uid: 'u1' }, spec });
const OPTIONS = { operatorNamespace: 'quorum-system', metricsNamespaces: ['monitoring'] };
/** The operator's Deployment as the manifests render it (the fields read here). */
interface DeploymentShape {
  spec: { template: { metadata: { labels: Record<string, string> }; spec: { containers: { env: { name: string; value?: string }[] }[] } } };
}
const deployment = (options: Parameters<typeof operatorManifests>[0] = {}): DeploymentShape => operatorManifests(options).find((o) => o.kind === 'Deployment') as unknown as DeploymentShape;
type Peer = NonNullable<NonNullable<NonNullable<NetworkPolicy['spec']>['ingress']>[number]['from']>[number];

/** The peers each port admits. */
function byPort(policy: NetworkPolicy): Map<number, Peer[]> {
  return new Map((policy.spec?.ingress ?? []).map((rule) => [Number(rule.ports?.[0]?.port), rule.from ?? []]));
}

/** Whether a pod of these labels in namespace `ns` is admitted by `peer`, for a policy in `policyNs` (namespaceSelector by name only). */
function admits(peer: Peer, policyNs: string, ns: string, labels: Record<string, string>): boolean {
  const nsName = peer.namespaceSelector?.matchLabels?.['kubernetes.io/metadata.name'];
  const inNamespace = peer.namespaceSelector ? nsName === undefined || nsName === ns : ns === policyNs;
  const podMatch = Object.entries(peer.podSelector?.matchLabels ?? {}).every(([k, v]) => labels[k] === v);
  return inNamespace && podMatch;
}

test('a default cluster: peers from its members only, clients from its namespace, the operator and backups, metrics from the operator and monitoring', () => {
  const c = cluster();
  const policy = networkPolicy(c, applyDefaults(c.spec), OPTIONS);
  const member = memberPod(c, applyDefaults(c.spec), { member: 'c-0', initialClusterState: 'new', initialCluster: [] });
  assert.deepEqual(policy.spec?.podSelector?.matchLabels, { 'app.kubernetes.io/name': 'etcd', 'app.kubernetes.io/instance': 'c', 'app.kubernetes.io/managed-by': 'quorum' });
  assert.ok(Object.entries(policy.spec?.podSelector?.matchLabels ?? {}).every(([k, v]) => member.metadata.labels?.[k] === v), 'it selects the member pods');
  assert.deepEqual(policy.spec?.policyTypes, ['Ingress']);
  assert.equal(policy.metadata.ownerReferences?.[0]?.uid, 'u1', 'owned by the cluster: garbage-collected with it');

  const ports = byPort(policy);
  assert.deepEqual([...ports.keys()], [2380, 2379, 2381]);
  const operatorPod = deployment().spec.template.metadata.labels;
  const backupPod = backupJob({ metadata: { name: 'b', namespace: 'apps', uid: 'b1' }, spec: { clusterName: 'c', destination: { pvc: { claimName: 'x' } } } }, { member: 'c-0', dbSize: 0, agentImage: 'img' }).spec!.template.metadata!.labels!;
  const who = (port: number, ns: string, labels: Record<string, string>): boolean => (ports.get(port) ?? []).some((p) => admits(p, 'apps', ns, labels));

  const memberLabels = member.metadata.labels ?? {};
  assert.ok(who(2380, 'apps', memberLabels), 'members reach each other on 2380');
  assert.ok(!who(2380, 'apps', { app: 'client' }), 'another pod of the namespace does not reach 2380');
  assert.ok(who(2380, 'quorum-system', operatorPod), 'the operator does: a CA rotation reads the certificate each member serves there');
  assert.ok(!who(2380, 'elsewhere', operatorPod), 'a pod labelled as the operator in another namespace does not');
  assert.ok(who(2379, 'apps', { app: 'client' }), "a pod of the cluster's namespace reaches 2379");
  assert.ok(!who(2379, 'other', { app: 'client' }), 'a pod of another namespace does not');
  assert.ok(who(2379, 'quorum-system', operatorPod), "the operator's pods do, from their namespace");
  assert.ok(!who(2379, 'quorum-system', { app: 'client' }), "another pod of the operator's namespace does not");
  assert.ok(who(2379, 'apps', backupPod), "the cluster's backup Jobs do");
  assert.ok(who(2381, 'monitoring', { app: 'prometheus' }) && who(2381, 'quorum-system', operatorPod), 'metrics: the monitoring namespace and the operator');
  assert.ok(!who(2381, 'apps', { app: 'client' }), 'metrics: not every pod of the namespace');
});

test('spec.network.clientsFrom replaces the namespace default; [] leaves only the members, the operator and the backup Jobs', () => {
  const clientsFrom = [{ namespaceSelector: { matchLabels: { team: 'a' } }, podSelector: { matchLabels: { role: 'api' } } }];
  const custom = byPort(networkPolicy(cluster({ network: { clientsFrom } }), applyDefaults({ network: { clientsFrom } }), OPTIONS)).get(2379) ?? [];
  assert.deepEqual(custom.slice(3), clientsFrom, 'the peers as written, after the members, the operator and the backup Jobs');
  assert.ok(!custom.some((p) => admits(p, 'apps', 'apps', { app: 'client' })), "the namespace's other pods are no longer admitted");
  const none = byPort(networkPolicy(cluster({ network: { clientsFrom: [] } }), applyDefaults({ network: { clientsFrom: [] } }), OPTIONS)).get(2379) ?? [];
  assert.equal(none.length, 3);
});

test('METRICS_NAMESPACES: monitoring by default, a list, or none', () => {
  assert.deepEqual(configFromEnv({}).metricsNamespaces, ['monitoring']);
  assert.deepEqual(configFromEnv({ METRICS_NAMESPACES: 'monitoring, prom ,prom' }).metricsNamespaces, ['monitoring', 'prom']);
  assert.deepEqual(configFromEnv({ METRICS_NAMESPACES: '' }).metricsNamespaces, []);
  const env = deployment({ metricsNamespaces: ['a', 'b'] }).spec.template.spec.containers[0]!.env;
  assert.equal(env.find((e) => e.name === 'METRICS_NAMESPACES')?.value, 'a,b');
});

/** applyClusterObjects against an empty cache (or one holding `cached`), recording every call. */
async function applyWith(spec: EtcdClusterSpec, cached?: NetworkPolicy): Promise<string[]> {
  const calls: string[] = [];
  const empty = new Store<OpenObject>();
  const policies = new Store<NetworkPolicy>();
  if (cached) policies.upsert(cached);
  const client = {
    apply: (type: { kind: string }, obj: KubeObject) => (calls.push(`apply ${type.kind} ${obj.metadata.name}`), Promise.resolve(obj)),
    delete: (type: { kind: string }, key: { name: string }) => (calls.push(`delete ${type.kind} ${key.name}`), Promise.resolve()),
  } as unknown as Client;
  const deps = { client, services: { store: empty }, pdbs: { store: empty }, networkPolicies: { store: policies }, network: OPTIONS } as unknown as ReconcilerDeps;
  await applyClusterObjects(deps, cluster(spec), applyDefaults(spec), new AbortController().signal);
  return calls.filter((c) => c.includes('NetworkPolicy'));
}

test('the reconciler applies the policy by default, and once spec.network.policy is false deletes its own, never a foreign one', async () => {
  assert.deepEqual(await applyWith({}), ['apply NetworkPolicy c']);
  const own = networkPolicy(cluster(), applyDefaults({}), OPTIONS);
  assert.deepEqual(await applyWith({}, own), [], 'unchanged: no write');
  assert.deepEqual(await applyWith({ network: { policy: false } }, own), ['delete NetworkPolicy c']);
  const foreign: NetworkPolicy = { ...own, metadata: { name: 'c', namespace: 'apps', labels: own.metadata.labels } };
  assert.deepEqual(await applyWith({ network: { policy: false } }, foreign), [], "a policy the cluster does not own is the user's");
  assert.deepEqual(await applyWith({ network: { policy: false } }), []);
  assert.equal(NetworkPolicies.plural, 'networkpolicies');
});
