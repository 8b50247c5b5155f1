// Members and their nodes, end to end: with a data-safety checker writing throughout, a cluster keeps serving
// while the node of one member is stopped and heals when it returns, and a member whose pod was made when the
// cluster had 5 members comes back on its own data after its node restarts, without losing an acknowledged
// write. (cluster-lifecycle.test.ts covers what needs no node to stop, beside other files.)
// What this file needs, for the test harness (docs/testing.md):
// @exclusive nodes
// @shared operator
// @timeout 20m: stops and restarts nodes, each with 90-300 s bounds
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Pods } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { applyCluster, clientServiceEndpoint, eventually, getCluster, memberPods, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';
import type { V1Pod } from '@kubernetes/client-node';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';

let env: TestEnv;
let ns: string;
let checker: DataChecker | undefined;
const NAME = 'e2e';

before(async () => {
  env = await setUpOperator({ crashLoopGraceSeconds: 15 });
  // Restricted, enforced by the API server: every member pod (and restore init container) must pass it.
  ns = await env.namespace('etcd', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
});
after(async () => {
  await checker?.close();
  await env.stop();
});

const pods = (): Promise<V1Pod[]> => memberPods(env.client, ns, NAME);

test('a cluster of 3 voting members on 3 nodes, the data checker writing', async () => {
  // Kubernetes' default: a member on a node that stops keeps its pod for 5 minutes. localkube evicts after 10 s
  // (docs/localkube.md), and a loaded machine can take that long to bring a node back, so the node tests here
  // would see a pod made anew (with today's member list) instead of the same pod restarted.
  const tolerations = ['node.kubernetes.io/not-ready', 'node.kubernetes.io/unreachable'].map((key) => ({ key, operator: 'Exists', effect: 'NoExecute', tolerationSeconds: 300 }));
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, podTemplate: { spec: { tolerations } } });
  await waitAvailable(env.client, ns, NAME, 3);
  const nodes = new Set((await pods()).map((p) => p.spec!.nodeName));
  assert.equal(nodes.size, 3, 'one member per node (antiAffinity Preferred spreads them)');
  const endpoint = await clientServiceEndpoint(env.client, ns, NAME);
  checker = new DataChecker({ endpoints: [endpoint], ratePerSecond: 20 });
  checker.start();
});

async function scaleTo(replicas: number): Promise<void> {
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { replicas } });
  await waitAvailable(env.client, ns, NAME, replicas);
}

test('a stopped node: the cluster keeps serving, and heals when the node returns', async () => {
  const state = await getCluster(env.client, ns, NAME);
  const follower = state.members.find((m) => !m.leader)!;
  const node = (await pods()).find((p) => p.metadata!.name === follower.name)!.spec!.nodeName!;
  await env.kube.stopNode(node);
  try {
    await eventually('the member on the stopped node reported not ready', async () => {
      const s = await getCluster(env.client, ns, NAME);
      return s.members.some((m) => m.name === follower.name && !m.ready);
    }, { timeoutMs: 60_000 });
  } finally {
    await env.kube.startNode(node);
  }
  await waitAvailable(env.client, ns, NAME, 3, 240_000);
});

test('a member whose pod was made when the cluster had 5 members comes back on its own data after its node restarts, with 3', async () => {
  // The pod's peer-wait names every member it had at creation; the two removed by the scale-down never resolve
  // again. A node restart re-runs init containers: the chaos suite saw two of three members kept down for good.
  await scaleTo(5);
  const five = await getCluster(env.client, ns, NAME);
  const index = (name: string): number => Number(name.slice(name.lastIndexOf('-') + 1));
  const survivor = five.members.filter((m) => !m.leader).sort((a, b) => index(a.name) - index(b.name))[0]!;
  const podBefore = (await pods()).find((p) => p.metadata!.name === survivor.name)!;
  await env.client.delete(Pods, { namespace: ns, name: survivor.name });
  await eventually(`${survivor.name} recreated`, async () => (await pods()).some((p) => p.metadata!.name === survivor.name && p.metadata!.uid !== podBefore.metadata!.uid), { timeoutMs: 60_000 });
  await waitAvailable(env.client, ns, NAME, 5);
  await scaleTo(3);
  const three = await getCluster(env.client, ns, NAME);
  assert.ok(three.members.some((m) => m.name === survivor.name), `${survivor.name} is still a member`);
  const pod = (await env.client.get(Pods, { namespace: ns, name: survivor.name })) as unknown as { metadata: { uid: string }; spec: { nodeName: string; initContainers?: { name: string; args?: string[] }[] } };
  const waitsFor = pod.spec.initContainers?.find((c) => c.name === 'peer-wait')?.args?.filter((a) => !a.startsWith('--')) ?? [];
  const removed = waitsFor.filter((host) => !three.members.some((m) => host.startsWith(`${m.name}.`)));
  assert.ok(removed.length > 0, `the pod names members removed since (${waitsFor.join(' ')})`);
  // Only once their pods are gone do their names stop resolving (a terminating pod keeps its DNS record): until
  // then peer-wait finds every name and never needs its 10 s bound, which is what this test is about.
  await eventually('the removed members\' pods gone', async () => {
    const left = new Set((await pods()).map((p) => p.metadata!.name));
    return removed.every((host) => !left.has(host.split('.')[0] ?? host)) ? true : undefined;
  }, { timeoutMs: 120_000 });

  const node = pod.spec.nodeName;
  await env.kube.stopNode(node);
  try {
    await eventually(`${survivor.name} reported not ready`, async () => (await getCluster(env.client, ns, NAME)).members.some((m) => m.name === survivor.name && !m.ready), { timeoutMs: 60_000 });
  } finally {
    await env.kube.startNode(node);
  }
  // Well inside peer-wait's 120 s for a new member: a restarting one waits 10 s at most.
  const back = await waitAvailable(env.client, ns, NAME, 3, 90_000);
  assert.ok(back.members.find((m) => m.name === survivor.name)?.ready, `${survivor.name} serves again`);
  // The same pod restarted on the node (the kubelet ran its init containers again): a replacement would name
  // only today's members and never need the bound.
  assert.equal((await env.client.get(Pods, { namespace: ns, name: survivor.name })).metadata?.uid, pod.metadata.uid, `${survivor.name} is the pod made with 5 members, restarted`);
  const log = await env.kube.kubectl(['logs', '-n', ns, survivor.name, '-c', 'peer-wait']);
  assert.match(log, /exists, so etcd restarts on its own data and its own member list; starting it now: peer names did not resolve within 10s/);
});

test('no acknowledged write was lost', async () => {
  assert.ok(checker, 'the checker ran');
  await checker.stop();
  const report = await checker.verify({ timeoutMs: 60_000 });
  process.stderr.write(`data checker: ${report.acknowledged} acknowledged, ${report.unacknowledged} unacknowledged, lost ${report.lost.length}, corrupted ${report.corrupted.length}\n`);
  assert.ok(report.acknowledged > 100, `the checker wrote throughout (${report.acknowledged} acknowledged)`);
  assert.deepEqual(report.lost, []);
  assert.deepEqual(report.corrupted, []);
});
