// Rolling updates on a real cluster (issue 9, docs/upgrades.md), with the data checker writing throughout:
// - a 3-member cluster on etcd 3.5.35 is upgraded to 3.6.16 one member at a time, followers first and the old
//   leader last (after LeaderMoved), each member keeping its name, its member ID and its PVC, with at most one
//   member down at any moment, currentVersion and clusterVersion moving only once the last member runs 3.6.16,
//   and no acknowledged write lost;
// - an image that crash-loops halts the rollout at its first member (Degraded/UpgradeFailed with the exit code
//   and the binary's own words), touches no second member and replaces nobody while the cluster stays
//   Available, and setting spec.version back (the image unset) rolls that member back.
// - with spec.backup, a version change first takes an EtcdBackup: one that fails (a missing bucket) halts the
//   rollout with BackupFailed before any member is touched; with the destination fixed and a retry, a new
//   backup succeeds before the first member's pod is replaced, and the upgrade completes.
// Every absence is asserted only after a positive signal (a condition, an event, a replaced pod).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator addons/s3
// @timeout 60m: four rollouts bounded at 10 minutes each
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { baseImageEntries, imageFromEntries } from '@quorum/images';
import { PersistentVolumeClaims, Pods } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';
import { buildMemberToolBinary } from '../../src/deploy/peer-wait-image.ts';
import { EtcdBackups, EtcdClusters } from '../../src/resources.ts';
import { enableS3 } from '../support/s3-addon.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { applyCluster, clientServiceEndpoint, type ClusterState, eventually, getCluster, PLAINTEXT, setUpOperator, verifyNoWriteLost, waitAvailable } from './support.ts';

let env: TestEnv;
const checkers: DataChecker[] = [];

/**
 * An "etcd 3.6.16" that exits at once: the static peer-wait binary at /usr/local/bin/etcd, which refuses etcd's
 * flags ("flag provided but not defined: -name", exit code 2), imported into every node under a name no
 * registry serves.
 */
const CRASHLOOP_IMAGE = 'quorum.test/etcd-crashloop:v3.6.16';

before(async () => {
  // A short crash-loop grace: were a halted member replaced (it must not be), it would be within the test.
  env = await setUpOperator({ crashLoopGraceSeconds: 15 });
  const binary = await buildMemberToolBinary('peer-wait');
  const image = await imageFromEntries(
    CRASHLOOP_IMAGE,
    [
      ...baseImageEntries,
      { type: 'dir', path: 'usr', mode: 0o755 },
      { type: 'dir', path: 'usr/local', mode: 0o755 },
      { type: 'dir', path: 'usr/local/bin', mode: 0o755 },
      { type: 'file', path: 'usr/local/bin/etcd', mode: 0o755, data: await readFile(binary) },
    ],
    { Entrypoint: ['/usr/local/bin/etcd'], User: '65532:65532', Labels: { 'org.opencontainers.image.title': 'quorum test: an etcd that exits at start' } },
  );
  await env.kube.loadImage(image.archive);
});
after(async () => {
  for (const c of checkers) await c.close();
  await env.stop();
});

interface PodObj {
  metadata: { name: string; uid: string; deletionTimestamp?: string; creationTimestamp?: string };
  spec: { containers: { name: string; image: string }[] };
  status?: { conditions?: { type: string; status: string }[] };
}
interface CoreEvent {
  reason?: string;
  type?: string;
  message?: string;
  note?: string;
}

const condition = (cluster: EtcdCluster, type: string) => cluster.status?.conditions?.find((c) => c.type === type);
const describe = (s: ClusterState): string => JSON.stringify({ conditions: s.cluster.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`), rollout: s.cluster.status?.rollout, members: s.members }, null, 2);
const pods = async (ns: string, name: string): Promise<PodObj[]> => ((await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items as unknown as PodObj[]);
const etcdImage = (p: PodObj): string => p.spec.containers.find((c) => c.name === 'etcd')?.image ?? '';
const ready = (p: PodObj): boolean => !p.metadata.deletionTimestamp && (p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false);
const ids = (s: ClusterState): string[] => s.members.map((m) => `${m.name}=${m.id}`).sort();

async function claimUids(ns: string, name: string): Promise<string[]> {
  const list = await env.client.list(PersistentVolumeClaims, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` });
  return list.items.map((c) => `${c.metadata.name}=${c.metadata.uid}`).sort();
}

async function events(ns: string, name: string): Promise<CoreEvent[]> {
  const out = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
  return (JSON.parse(out) as { items: CoreEvent[] }).items;
}
const text = (e: CoreEvent): string => e.message ?? e.note ?? '';

async function startChecker(ns: string, name: string): Promise<DataChecker> {
  const checker = new DataChecker({ endpoints: [await clientServiceEndpoint(env.client, ns, name)], ratePerSecond: 20 });
  checkers.push(checker);
  checker.start();
  // The positive signal that it writes before anything changes.
  await eventually('the data checker writing', () => checker.stats().acknowledged >= 20, { timeoutMs: 30_000 });
  return checker;
}

test('3.5.35 → 3.6.16 on 3 members while writing: one member at a time, followers first, the leader last; same members, IDs and PVCs; versions move at the end; no write lost', async () => {
  // Restricted, enforced by the API server: every pod a rollout makes must pass it.
  const ns = await env.namespace('upgrade', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  const NAME = 'up';
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.5.35' });
  await waitAvailable(env.client, ns, NAME, 3);
  const before = await eventually('the 3.5 cluster settled, its cluster version read', async () => {
    const s = await getCluster(env.client, ns, NAME);
    return s.cluster.status?.clusterVersion === '3.5.0' && s.cluster.status.currentVersion === '3.5.35' && condition(s.cluster, 'MembersUpToDate')?.status === 'True' ? s : undefined;
  }, { timeoutMs: 60_000 });
  const leaderBefore = before.cluster.status?.leader;
  assert.ok(leaderBefore, 'a leader');
  const claimsBefore = await claimUids(ns, NAME);
  assert.equal(claimsBefore.length, 3);
  const uidsBefore = new Map((await pods(ns, NAME)).map((p) => [p.metadata.name, p.metadata.uid]));
  const checker = await startChecker(ns, NAME);

  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.6.16' });

  // Polled every 200 ms until the rollout is done: which member's pod was replaced when, and what status said.
  const replaced: { member: string; leaderThen: string | undefined }[] = [];
  const updatedSeen: number[] = [];
  const progressing = new Set<string>();
  const deadline = Date.now() + 600_000;
  for (;;) {
    assert.ok(Date.now() < deadline, 'the rollout finished within 10 minutes');
    const [s, current] = await Promise.all([getCluster(env.client, ns, NAME), pods(ns, NAME)]);
    const status = s.cluster.status;
    for (const [member, uid] of uidsBefore) {
      if (replaced.some((r) => r.member === member)) continue;
      const p = current.find((x) => x.metadata.name === member);
      if (!p || p.metadata.uid !== uid || p.metadata.deletionTimestamp) replaced.push({ member, leaderThen: status?.leader });
    }
    const down = [...uidsBefore.keys()].filter((m) => !current.some((p) => p.metadata.name === m && ready(p)));
    assert.ok(down.length <= 1, `at most one member down at a time; down: ${down.join(', ')}\n${describe(s)}`);
    // Counted against the new spec only once status was computed from it.
    const fromNewSpec = status?.observedGeneration === s.cluster.metadata.generation;
    if (fromNewSpec && status?.updatedReplicas !== undefined && updatedSeen.at(-1) !== status.updatedReplicas) updatedSeen.push(status.updatedReplicas);
    const p = condition(s.cluster, 'Progressing');
    if (p?.reason === 'RollingUpdate') progressing.add(p.message);
    assert.notEqual(condition(s.cluster, 'Degraded')?.reason, 'UpgradeFailed', describe(s));
    const allOnNewImage = current.length === 3 && current.every((x) => !x.metadata.deletionTimestamp && etcdImage(x).endsWith(':v3.6.16'));
    if (!allOnNewImage) {
      // Until the last member's pod runs 3.6.16, the versions status reports stay where they were.
      assert.equal(status?.currentVersion, '3.5.35', describe(s));
      assert.equal(status?.clusterVersion, '3.5.0', describe(s));
    }
    if (allOnNewImage && current.every(ready) && !status?.rollout && status?.currentVersion === '3.6.16') break;
    await sleep(200);
  }

  assert.deepEqual(replaced.map((r) => r.member).sort(), [...uidsBefore.keys()].sort(), 'every member pod was replaced once');
  assert.equal(replaced.at(-1)?.member, leaderBefore, `the leader last: ${JSON.stringify(replaced)}`);
  assert.notEqual(replaced.at(-1)?.leaderThen, leaderBefore, 'it no longer led when its pod went');
  const followers = replaced.slice(0, 2).map((r) => r.member);
  assert.deepEqual(followers, [...followers].sort((a, b) => Number(a.split('-').at(-1)) - Number(b.split('-').at(-1))), 'followers by index');
  assert.deepEqual(updatedSeen.filter((n, i) => i === 0 || n >= updatedSeen[i - 1]!), updatedSeen, `updatedReplicas never went back: ${updatedSeen.join(' → ')}`);
  assert.equal(updatedSeen.at(-1), 3);
  for (const m of uidsBefore.keys()) assert.ok([...progressing].some((msg) => msg.includes(`updating ${m}`)), `Progressing named ${m}: ${[...progressing].join('\n')}`);

  const done = await eventually('cluster version 3.6.0, every member on 3.6.16 and up to date', async () => {
    const s = await waitAvailable(env.client, ns, NAME, 3);
    return s.cluster.status?.clusterVersion === '3.6.0' && s.members.every((m) => m.version === '3.6.16') && condition(s.cluster, 'MembersUpToDate')?.status === 'True' ? s : undefined;
  }, { timeoutMs: 60_000 });
  assert.equal(done.cluster.status?.phase, 'Running');
  assert.deepEqual(ids(done), ids(before), 'the same members with the same IDs');
  assert.deepEqual(await claimUids(ns, NAME), claimsBefore, 'the same PVCs');

  const seen = await events(ns, NAME);
  const moved = seen.find((e) => e.reason === 'LeaderMoved');
  assert.ok(moved && text(moved).startsWith(`moved leadership from ${leaderBefore} `), JSON.stringify(moved));
  for (const reason of ['RollingUpdateStarted', 'MemberUpdating', 'RollingUpdateCompleted']) assert.ok(seen.some((e) => e.reason === reason), reason);
  for (const reason of ['StepStalled', 'UpgradeFailed', 'MemberRemoved']) assert.ok(!seen.some((e) => e.reason === reason), `no ${reason}: ${JSON.stringify(seen.filter((e) => e.reason === reason))}`);

  await verifyNoWriteLost(checker, 'upgrade');
  await env.client.delete(EtcdClusters, { namespace: ns, name: NAME });
  await eventually(`the pods of ${NAME} gone`, async () => (await pods(ns, NAME)).length === 0, { timeoutMs: 120_000, intervalMs: 1000 });
});

test('a crash-looping image halts at its first member: Degraded UpgradeFailed in its words, no second member touched, still Available; rolling back restores that member', async () => {
  const ns = await env.namespace('upgrade-halt', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  const NAME = 'halt';
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.5.35' });
  await waitAvailable(env.client, ns, NAME, 3);
  const before = await eventually('cluster version read', async () => {
    const s = await getCluster(env.client, ns, NAME);
    return s.cluster.status?.clusterVersion === '3.5.0' ? s : undefined;
  }, { timeoutMs: 60_000 });
  const leader = before.cluster.status?.leader;
  const uidsBefore = new Map((await pods(ns, NAME)).map((p) => [p.metadata.name, p.metadata.uid]));
  const checker = await startChecker(ns, NAME);

  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.6.16', image: CRASHLOOP_IMAGE });
  const halted = await eventually('Degraded UpgradeFailed', async () => {
    const s = await getCluster(env.client, ns, NAME);
    const degraded = condition(s.cluster, 'Degraded');
    return degraded?.status === 'True' && degraded.reason === 'UpgradeFailed' ? s : undefined;
  }, { timeoutMs: 300_000, intervalMs: 1000 });
  const at = halted.cluster.status?.rollout?.halted;
  assert.ok(at, describe(halted));
  assert.equal(at.reason, 'CrashLooping', describe(halted));
  assert.notEqual(at.member, leader, 'a follower goes first');
  const message = condition(halted.cluster, 'Degraded')!.message;
  assert.match(message, new RegExp(`halted at ${at.member} \\(CrashLooping\\): its etcd keeps exiting: exit code 2: .*flag provided but not defined: -name`));
  assert.match(message, /To roll back, set spec\.version back to 3\.5\.35/);
  assert.ok((await events(ns, NAME)).some((e) => e.reason === 'UpgradeFailed' && e.type === 'Warning'));

  // Long past the crash-loop grace period (15 s): no second member touched, the halted one not replaced.
  const others = [...uidsBefore.keys()].filter((m) => m !== at.member);
  const stillUntil = Date.now() + 90_000;
  while (Date.now() < stillUntil) {
    const [s, current] = await Promise.all([getCluster(env.client, ns, NAME), pods(ns, NAME)]);
    for (const m of others) assert.equal(current.find((p) => p.metadata.name === m)?.metadata.uid, uidsBefore.get(m), `${m} untouched`);
    assert.equal(etcdImage(current.find((p) => p.metadata.name === at.member)!), CRASHLOOP_IMAGE);
    assert.deepEqual(ids(s), ids(before), 'membership unchanged, no member replaced');
    assert.equal(condition(s.cluster, 'Available')?.status, 'True', describe(s));
    assert.equal(s.cluster.status?.rollout?.halted?.member, at.member);
    await sleep(2000);
  }

  // Roll back: spec.version back, the image unset (a server-side apply that no longer sets it).
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.5.35' });
  const back = await eventually('rolled back: every member up to date, nothing Degraded, no rollout recorded', async () => {
    const s = await waitAvailable(env.client, ns, NAME, 3);
    return !s.cluster.status?.rollout && condition(s.cluster, 'Degraded')?.status === 'False' && condition(s.cluster, 'MembersUpToDate')?.status === 'True' ? s : undefined;
  }, { timeoutMs: 300_000, intervalMs: 1000 });
  assert.deepEqual(ids(back), ids(before), 'the same members with the same IDs');
  assert.ok(back.members.every((m) => m.version === '3.5.35'), describe(back));
  const current = await pods(ns, NAME);
  assert.equal(etcdImage(current.find((p) => p.metadata.name === at.member)!), 'gcr.io/etcd-development/etcd:v3.5.35');
  for (const m of others) assert.equal(current.find((p) => p.metadata.name === m)?.metadata.uid, uidsBefore.get(m), `${m} never touched`);
  assert.equal(back.cluster.status?.currentVersion, '3.5.35');
  assert.equal(back.cluster.status?.clusterVersion, '3.5.0');
  await verifyNoWriteLost(checker, 'halt and rollback');
});

test('spec.backup: a failed backup before a version change halts it with nothing touched; fixed and retried, a new backup succeeds before the first member goes', async () => {
  const ns = await env.namespace('upgrade-backup', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  const s3 = await enableS3(env, [ns]);
  const NAME = 'bk';
  const missingBucket = { backup: { destination: s3.destination('pre-upgrade', { bucket: 'quorum-missing' }) } };
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.5.35', ...missingBucket });
  await waitAvailable(env.client, ns, NAME, 3);
  const uidsBefore = new Map((await pods(ns, NAME)).map((p) => [p.metadata.name, p.metadata.uid]));

  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.6.16', ...missingBucket });
  const halted = await eventually('Degraded UpgradeFailed (BackupFailed)', async () => {
    const s = await getCluster(env.client, ns, NAME);
    return s.cluster.status?.rollout?.halted?.reason === 'BackupFailed' && condition(s.cluster, 'Degraded')?.reason === 'UpgradeFailed' ? s : undefined;
  }, { timeoutMs: 300_000, intervalMs: 1000 });
  const first = halted.cluster.status!.rollout!.backup!;
  assert.match(first, /^bk-pre-3-6-16-[0-9a-f]{5}$/, describe(halted));
  assert.match(condition(halted.cluster, 'Degraded')!.message, new RegExp(`EtcdBackup ${first}, taken before the version change, failed \\(BucketNotFound: .*quorum-missing.*\\); no member was updated`));
  const failedBackup = await env.client.get(EtcdBackups, { namespace: ns, name: first });
  assert.equal(failedBackup.metadata.labels?.['etcd.quorum.dev/purpose'], 'before-version-change');
  assert.equal(failedBackup.metadata.ownerReferences, undefined, 'not owned: it outlives the cluster');
  const untouched = await pods(ns, NAME);
  for (const [m, uid] of uidsBefore) assert.equal(untouched.find((p) => p.metadata.name === m)?.metadata.uid, uid, `${m} untouched`);
  assert.ok((await events(ns, NAME)).some((e) => e.reason === 'BackupBeforeUpgrade'));

  // Fixed and retried: a new backup (a new name: the retry token is part of it) must succeed first.
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, version: '3.6.16', backup: { destination: s3.destination('pre-upgrade') } });
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { metadata: { annotations: { 'etcd.quorum.dev/retry-rollout': '1' } } });
  const done = await eventually('upgraded after the retry', async () => {
    const s = await waitAvailable(env.client, ns, NAME, 3);
    return !s.cluster.status?.rollout && s.cluster.status?.currentVersion === '3.6.16' && condition(s.cluster, 'MembersUpToDate')?.status === 'True' ? s : undefined;
  }, { timeoutMs: 600_000, intervalMs: 1000 });
  assert.equal(condition(done.cluster, 'Degraded')?.status, 'False', describe(done));
  const backups = (await env.client.list(EtcdBackups, { namespace: ns, labelSelector: 'etcd.quorum.dev/purpose=before-version-change' })).items;
  const succeeded = backups.filter((b) => b.status?.phase === 'Succeeded');
  assert.equal(succeeded.length, 1, JSON.stringify(backups.map((b) => [b.metadata.name, b.status?.phase])));
  const taken = succeeded[0]!;
  assert.notEqual(taken.metadata.name, first);
  assert.equal(taken.status?.etcdVersion?.startsWith('3.5.'), true, 'taken from a 3.5 member, before any was updated');
  const completed = Date.parse(taken.status.completedAt!);
  for (const p of await pods(ns, NAME)) assert.ok(Date.parse(p.metadata.creationTimestamp!) >= completed - 1000, `${p.metadata.name} was recreated after the backup completed`);
  s3.hostClient.destroy();
});

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
