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
// (Version changes without a halt, the downgrade and the supported path of minors, are in
// rolling-upgrade-paths.test.ts, so that the two run side by side.)
// Every absence is asserted only after a positive signal (a condition, an event, a replaced pod).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator addons/s3
// @timeout 40m: three rollouts bounded at 10 minutes each
import assert from 'node:assert/strict';
import { readFile } from 'node:fs/promises';
import { after, before, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import { baseImageEntries, imageFromEntries } from '@quorum/images';
import type { TestEnv } from '@quorum/localkube/testing';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';
import { buildMemberToolBinary } from '../../src/deploy/peer-wait-image.ts';
import { EtcdBackups, EtcdClusters } from '../../src/resources.ts';
import { enableS3 } from '../support/s3-addon.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { applyCluster, eventually, getCluster, PLAINTEXT, setUpOperator, verifyNoWriteLost, waitAvailable } from './support.ts';
import { upgradeViews } from './rolling-upgrade-support.ts';

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

const { condition, describe, pods, etcdImage, ready, ids, claimUids, events, text, startChecker } = upgradeViews(() => env, checkers);

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
