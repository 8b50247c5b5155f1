// The product, end to end, with the operator deployed from its own manifests and image: a basic cluster
// comes up Available; with a data-safety checker writing throughout, it scales 3→5→3→1→3 and heals from
// deleted pods and a wiped volume without losing an acknowledged write. Stopped nodes are in
// cluster-node-restarts.test.ts, which runs alone.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
// @timeout 20m: scaling and healing, each step with 90-240 s bounds
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Pods } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { applyCluster, clientServiceEndpoint, etcdctl, eventually, getCluster, memberPods, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';
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

test('a basic cluster becomes Available with 3 voting members on 3 nodes; etcdctl agrees with status', async () => {
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3 });
  const state = await waitAvailable(env.client, ns, NAME, 3);
  const nodes = new Set((await pods()).map((p) => p.spec!.nodeName));
  assert.equal(nodes.size, 3, 'one member per node (antiAffinity Preferred spreads them)');
  const endpoint = await clientServiceEndpoint(env.client, ns, NAME);
  const listed = JSON.parse(await etcdctl(endpoint, 'member', 'list', '-w', 'json')) as { members: { ID: number | string; name: string; peerURLs: string[]; isLearner?: boolean }[] };
  assert.deepEqual(listed.members.map((m) => m.name).sort(), state.members.map((m) => m.name).sort());
  assert.deepEqual(listed.members.map((m) => m.peerURLs[0]).sort(), state.members.map((m) => m.peerURL).sort());
  assert.ok(listed.members.every((m) => !m.isLearner));
  assert.equal(state.members.filter((m) => m.leader).length, 1);
  assert.equal(state.cluster.status?.leader, state.members.find((m) => m.leader)?.name);
  checker = new DataChecker({ endpoints: [endpoint], ratePerSecond: 20 });
  checker.start();
});

async function scaleTo(replicas: number): Promise<void> {
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { replicas } });
  await waitAvailable(env.client, ns, NAME, replicas);
}

test('scale 3 → 5 → 3 → 1 → 3 with writes flowing', async () => {
  for (const n of [5, 3, 1, 3]) await scaleTo(n);
  const events = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${NAME}`, '-o', 'jsonpath={.items[*].reason}']);
  for (const reason of ['MemberAdded', 'MemberPromoted', 'MemberRemoved']) assert.match(events, new RegExp(reason));
});

test('deleting the leader pod, then a follower pod: the same members come back on their data', async () => {
  for (const role of ['leader', 'follower'] as const) {
    const before = await getCluster(env.client, ns, NAME);
    const victim = before.members.find((m) => (role === 'leader' ? m.leader : !m.leader))!;
    const podBefore = (await pods()).find((p) => p.metadata!.name === victim.name)!;
    await env.client.delete(Pods, { namespace: ns, name: victim.name });
    await eventually(`${victim.name} recreated`, async () => (await pods()).some((p) => p.metadata!.name === victim.name && p.metadata!.uid !== podBefore.metadata!.uid), { timeoutMs: 60_000 });
    const after = await waitAvailable(env.client, ns, NAME, 3);
    assert.deepEqual(after.members.map((m) => m.id).sort(), before.members.map((m) => m.id).sort(), 'same members, same IDs');
  }
});

test('a member whose data is wiped is replaced by a new member with a new name', async () => {
  const before = await getCluster(env.client, ns, NAME);
  const victim = before.members.find((m) => !m.leader)!;
  await env.kube.wipeVolume(ns, `data-${victim.name}`);
  // etcd only notices when it restarts on the empty directory.
  await env.kube.killContainer(ns, victim.name, 'etcd');
  const after = await eventually('the member replaced', async () => {
    const s = await waitAvailable(env.client, ns, NAME, 3, 240_000);
    return s.members.every((m) => m.name !== victim.name) ? s : undefined;
  }, { timeoutMs: 240_000 });
  assert.equal(after.members.length, 3);
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
