// Version changes on a real cluster (issue 9, docs/upgrades.md), with the data checker writing throughout
// (rolling-upgrade.test.ts has the upgrade of one minor, and the halts; the two files run side by side):
// - 3.6.16 → 3.5.35 through etcd's downgrade API: enabled first, storage migrated, then one member at a time, the
//   leader last, each keeping its member ID and PVC, and no acknowledged write lost;
// - the supported path 3.4.23 → 3.5.35 → 3.6.16, one minor at a time: same members and IDs, the cluster version
//   following each step, no acknowledged write lost.
// Every absence is asserted only after a positive signal (a condition, an event, a replaced pod).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
// @timeout 40m: three rollouts bounded at 10 minutes each
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import type { TestEnv } from '@quorum/localkube/testing';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';
import type { DataChecker } from '../../src/testing/data-checker.ts';
import { applyCluster, type ClusterState, eventually, getCluster, PLAINTEXT, setUpOperator, verifyNoWriteLost, waitAvailable } from './support.ts';
import { upgradeViews } from './rolling-upgrade-support.ts';

let env: TestEnv;
const checkers: DataChecker[] = [];

before(async () => {
  env = await setUpOperator({ crashLoopGraceSeconds: 15 });
});
after(async () => {
  for (const c of checkers) await c.close();
  await env.stop();
});

const { condition, describe, pods, etcdImage, ready, ids, claimUids, events, startChecker } = upgradeViews(() => env, checkers);

test("3.6.16 → 3.5.35 on 3 members while writing, through etcd's downgrade API: enabled first, storage migrated, then one member at a time, the leader last; same IDs and PVCs; no write lost", async () => {
  const ns = await env.namespace('downgrade', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  const NAME = 'dg';
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.6.16' });
  await waitAvailable(env.client, ns, NAME, 3);
  const before = await eventually('cluster version 3.6.0', async () => {
    const s = await getCluster(env.client, ns, NAME);
    return s.cluster.status?.clusterVersion === '3.6.0' && s.cluster.status.currentVersion === '3.6.16' ? s : undefined;
  }, { timeoutMs: 60_000 });
  const leaderBefore = before.cluster.status?.leader;
  const claimsBefore = await claimUids(ns, NAME);
  const uidsBefore = new Map((await pods(ns, NAME)).map((p) => [p.metadata.name, p.metadata.uid]));
  const checker = await startChecker(ns, NAME);

  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.5.35' });
  const replaced: string[] = [];
  let replacedBeforeEnabled = false;
  const deadline = Date.now() + 600_000;
  for (;;) {
    assert.ok(Date.now() < deadline, 'the downgrade finished within 10 minutes');
    const [s, current] = await Promise.all([getCluster(env.client, ns, NAME), pods(ns, NAME)]);
    for (const [member, uid] of uidsBefore) {
      if (replaced.includes(member)) continue;
      const p = current.find((x) => x.metadata.name === member);
      if (!p || p.metadata.uid !== uid || p.metadata.deletionTimestamp) {
        replaced.push(member);
        // etcd's downgrade came first: the cluster version was 3.5.0 before any member went back.
        if (replaced.length === 1 && !(await events(ns, NAME)).some((e) => e.reason === 'DowngradeEnabled')) replacedBeforeEnabled = true;
      }
    }
    const down = [...uidsBefore.keys()].filter((m) => !current.some((p) => p.metadata.name === m && ready(p)));
    assert.ok(down.length <= 1, `at most one member down at a time; down: ${down.join(', ')}\n${describe(s)}`);
    assert.notEqual(condition(s.cluster, 'Degraded')?.reason, 'UpgradeFailed', describe(s));
    const allOld = current.length === 3 && current.every((x) => !x.metadata.deletionTimestamp && etcdImage(x).endsWith(':v3.5.35'));
    if (allOld && current.every(ready) && !s.cluster.status?.rollout && s.cluster.status?.currentVersion === '3.5.35') break;
    await sleep(200);
  }
  assert.equal(replacedBeforeEnabled, false, "no member went back before etcd's downgrade was enabled");
  assert.deepEqual([...replaced].sort(), [...uidsBefore.keys()].sort(), 'every member pod was replaced once');
  assert.equal(replaced.at(-1), leaderBefore, `the leader last: ${replaced.join(', ')}`);
  const done = await eventually('every member on 3.5.35, cluster version 3.5.0', async () => {
    const s = await waitAvailable(env.client, ns, NAME, 3);
    return s.cluster.status?.clusterVersion === '3.5.0' && s.members.every((m) => m.version === '3.5.35') && condition(s.cluster, 'MembersUpToDate')?.status === 'True' ? s : undefined;
  }, { timeoutMs: 60_000 });
  assert.deepEqual(ids(done), ids(before), 'the same members with the same IDs');
  assert.deepEqual(await claimUids(ns, NAME), claimsBefore, 'the same PVCs');
  const seen = await events(ns, NAME);
  for (const reason of ['DowngradeEnabled', 'LeaderMoved', 'RollingUpdateCompleted']) assert.ok(seen.some((e) => e.reason === reason), reason);
  for (const reason of ['StepStalled', 'UpgradeFailed', 'MemberRemoved']) assert.ok(!seen.some((e) => e.reason === reason), `no ${reason}`);
  await verifyNoWriteLost(checker, 'downgrade');
});

test('the supported path 3.4.23 → 3.5.35 → 3.6.16, one minor at a time, while writing: same members and IDs, the cluster version following each step, no write lost', async () => {
  const ns = await env.namespace('upgrade-path', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  const NAME = 'path';
  // etcd 3.6 refuses to replay the v2 entries a 3.4 cluster left in its WAL (etcd-io/etcd#20809): each member
  // must have taken a raft snapshot on 3.5 past them first. etcd takes one every snapshotCount entries (3.5's
  // default is 100 000); a small count gets there within the test (docs/upgrades.md says so).
  const etcd = { snapshotCount: 100 };
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.4.23', etcd });
  await waitAvailable(env.client, ns, NAME, 3);
  const at = async (version: string, cluster: string): Promise<ClusterState> =>
    eventually(`every member on ${version}, cluster version ${cluster}`, async () => {
      const s = await waitAvailable(env.client, ns, NAME, 3);
      return !s.cluster.status?.rollout && s.cluster.status?.currentVersion === version && s.cluster.status.clusterVersion === cluster && s.members.every((m) => m.version === version) && condition(s.cluster, 'MembersUpToDate')?.status === 'True'
        ? s
        : undefined;
    }, { timeoutMs: 600_000, intervalMs: 1000 });
  const before = await at('3.4.23', '3.4.0');
  const checker = await startChecker(ns, NAME);
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.5.35', etcd });
  const mid = await at('3.5.35', '3.5.0');
  assert.deepEqual(ids(mid), ids(before), 'the same members with the same IDs after 3.5');
  // More than snapshotCount entries on 3.5: every member's latest snapshot is past the 3.4-era entries.
  const written = checker.stats().acknowledged;
  await eventually('250 more writes on 3.5', () => Promise.resolve(checker.stats().acknowledged >= written + 250 ? true : undefined), { timeoutMs: 120_000 });
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.6.16', etcd });
  const done = await at('3.6.16', '3.6.0');
  assert.deepEqual(ids(done), ids(before), 'the same members with the same IDs after 3.6');
  const seen = await events(ns, NAME);
  assert.equal(seen.filter((e) => e.reason === 'RollingUpdateCompleted').length >= 2, true, 'two rollouts completed');
  for (const reason of ['StepStalled', 'UpgradeFailed', 'MemberRemoved']) assert.ok(!seen.some((e) => e.reason === reason), `no ${reason}`);
  await verifyNoWriteLost(checker, '3.4 → 3.5 → 3.6');
});
