// Scheduled backups and EtcdRestore on localkube, against a real MinIO (`localkube addon enable s3`): a
// schedule every minute with retention.maxCount 2 runs four times and leaves exactly two stored objects and
// two EtcdBackup records, with its status right; suspend stops it; an EtcdRestore makes a new cluster from
// one of its backups with every acknowledged write (the data checker), refuses a name that is taken, does
// not own the cluster it made, and gives up on a backup that never appears past spec.backupWaitSeconds.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator addons/s3
// @timeout 30m: waits 7 minutes of cron minutes, then about 10 more for restores
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { ListObjectsV2Command, type S3Client } from '@aws-sdk/client-s3';
import type { TestEnv } from '@quorum/localkube/testing';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { EtcdBackupSchedule } from '../../src/api/etcdbackupschedule.ts';
import { EtcdBackupSchedules, EtcdBackups, EtcdClusters, EtcdRestores } from '../../src/resources.ts';
import { SCHEDULE_LABEL, SCHEDULED_AT_ANNOTATION } from '../../src/schedule/prune-job.ts';
import { RESTORE_LABEL } from '../../src/restore/reconcile.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { enableS3, type S3Addon } from '../support/s3-addon.ts';
import { applyCluster, clientServiceEndpoint, eventually, getCluster, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';

let env: TestEnv;
let ns: string;
let s3: S3Addon;
let hostS3: S3Client;
let checker: DataChecker;
const SOURCE = 'sched-src';
const SCHEDULE = 'every-minute';
const PREFIX = 'schedule-e2e';

before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('schedule');
  s3 = await enableS3(env, [ns]);
  hostS3 = s3.hostClient;
});
after(async () => {
  hostS3?.destroy();
  await checker?.close();
  await env.stop();
});

async function storedKeys(): Promise<string[]> {
  const listed = await hostS3.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${PREFIX}/` }));
  return (listed.Contents ?? []).map((o) => o.Key!).sort();
}

async function scheduleBackups(): Promise<EtcdBackup[]> {
  return (await env.client.list(EtcdBackups, { namespace: ns, labelSelector: `${SCHEDULE_LABEL}=${SCHEDULE}` })).items;
}

const getSchedule = (): Promise<EtcdBackupSchedule> => env.client.get(EtcdBackupSchedules, { namespace: ns, name: SCHEDULE });
const condition = (s: EtcdBackupSchedule, type: string): { status: string; reason: string; message: string } | undefined => s.status?.conditions?.find((c) => c.type === type);

test('a schedule every minute with maxCount 2 runs four times and keeps exactly two backups, in the bucket and as records', async () => {
  await applyCluster(env.client, ns, SOURCE, { ...PLAINTEXT, replicas: 1 });
  await waitAvailable(env.client, ns, SOURCE, 1);
  // Every scheduled backup is taken after these writes, so each holds all of them.
  checker = new DataChecker({ endpoints: [await clientServiceEndpoint(env.client, ns, SOURCE)], ratePerSecond: 30 });
  checker.start();
  await eventually('writes acknowledged', () => checker.stats().acknowledged >= 100, { timeoutMs: 60_000 });
  await checker.stop();

  await env.client.create(EtcdBackupSchedules, {
    apiVersion: 'etcd.quorum.dev/v1alpha1',
    kind: 'EtcdBackupSchedule',
    metadata: { name: SCHEDULE, namespace: ns },
    spec: {
      clusterName: SOURCE,
      schedule: '* * * * *',
      retention: { maxCount: 2 },
      destination: { s3: { bucket: s3.bucket, prefix: PREFIX, endpoint: s3.endpoint, forcePathStyle: true, credentialsSecret: 's3-credentials' } },
    },
  });

  // Every backup the schedule made that succeeded, including those retention deleted since.
  const succeeded = new Map<string, EtcdBackup>();
  await eventually('four scheduled backups succeeded', async () => {
    for (const b of await scheduleBackups()) {
      assert.notEqual(b.status?.phase, 'Failed', `scheduled backup ${b.metadata.name} failed: ${JSON.stringify(b.status?.conditions)}`);
      if (b.status?.phase === 'Succeeded') succeeded.set(b.metadata.name!, b);
    }
    return succeeded.size >= 4;
  }, { timeoutMs: 7 * 60_000, intervalMs: 2000 });

  const newestFirst = [...succeeded.values()].sort((a, b) => Date.parse(b.metadata.annotations![SCHEDULED_AT_ANNOTATION]!) - Date.parse(a.metadata.annotations![SCHEDULED_AT_ANNOTATION]!));
  for (const b of newestFirst) {
    const at = Date.parse(b.metadata.annotations![SCHEDULED_AT_ANNOTATION]!);
    assert.equal(at % 60_000, 0, 'scheduled on a minute');
    assert.equal(b.metadata.name, `${SCHEDULE}-${at / 1000}`, 'named after its scheduled time');
    assert.ok(b.metadata.ownerReferences?.some((o) => o.kind === 'EtcdBackupSchedule' && o.name === SCHEDULE && o.controller), 'owned by the schedule');
  }

  // Retention: the two newest successful backups remain, as records and as objects, and nothing else.
  const remaining = await eventually('exactly two records and two stored objects remain', async () => {
    const records = (await scheduleBackups()).filter((b) => !b.metadata.deletionTimestamp);
    const keys = await storedKeys();
    // A fifth backup may be running by now: retention counts successful ones.
    const finished = records.filter((b) => b.status?.phase === 'Succeeded');
    return finished.length === 2 && keys.length === 2 && records.length - finished.length <= 1 ? { finished, keys } : undefined;
  }, { timeoutMs: 120_000, intervalMs: 2000 });
  assert.deepEqual(remaining.keys, remaining.finished.map((b) => b.status!.key!).sort(), 'the stored objects are those of the remaining records');
  const keptNames = remaining.finished.map((b) => b.metadata.name!);
  for (const old of newestFirst.slice(2)) assert.ok(!keptNames.includes(old.metadata.name!), `${old.metadata.name} (older) was pruned`);

  const schedule = await getSchedule();
  const s = schedule.status!;
  assert.equal(s.observedGeneration, schedule.metadata.generation);
  const newestRecord = remaining.finished.map((b) => b.metadata.annotations![SCHEDULED_AT_ANNOTATION]!).sort().at(-1)!;
  assert.ok(Date.parse(s.lastScheduleTime!) >= Date.parse(newestRecord), `lastScheduleTime ${s.lastScheduleTime} is at least the newest backup's time ${newestRecord}`);
  assert.equal(Date.parse(s.lastScheduleTime!) % 60_000, 0);
  assert.ok(s.lastSuccessfulTime && Date.parse(s.lastSuccessfulTime) >= Date.parse(newestRecord), `lastSuccessfulTime ${s.lastSuccessfulTime}`);
  assert.equal(Date.parse(s.nextScheduleTime!) % 60_000, 0, 'nextScheduleTime on a minute');
  assert.ok(Date.parse(s.nextScheduleTime!) > Date.parse(s.lastScheduleTime!));
  assert.equal(s.lastFailure, undefined);
  assert.equal(condition(schedule, 'Ready')?.status, 'True');
  assert.equal(condition(schedule, 'Ready')?.reason, 'Scheduled');
  assert.equal(condition(schedule, 'BackupsFailing')?.status, 'False');
  const events = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${SCHEDULE}`, '-o', 'jsonpath={.items[*].reason}']);
  assert.match(events, /BackupScheduled/);
  assert.match(events, /BackupPruned/);
});

test('suspend stops new backups; a later change shows the operator saw a scheduled time pass and took none', async () => {
  await env.client.mergePatch(EtcdBackupSchedules, { namespace: ns, name: SCHEDULE }, { spec: { suspend: true } });
  const suspended = await eventually('the schedule reports Suspended', async () => {
    const s = await getSchedule();
    return s.status?.observedGeneration === s.metadata.generation && condition(s, 'Ready')?.reason === 'Suspended' && !s.status?.active ? s : undefined;
  }, { timeoutMs: 180_000, intervalMs: 1000 });
  assert.equal(suspended.status?.nextScheduleTime, undefined, 'no next time while suspended');
  const lastScheduled = suspended.status!.lastScheduleTime!;
  const backupsBefore = (await scheduleBackups()).map((b) => b.metadata.name!).sort();

  // Let a whole scheduled time go by, then change the spec: once the operator has observed that change, it
  // has reconciled after the time passed, and must still not have taken it.
  const passed = Math.floor(Date.now() / 60_000) * 60_000 + 60_000 + 5000;
  await eventually('a scheduled time passed', () => Date.now() > passed, { timeoutMs: 70_000, intervalMs: 1000 });
  const changed = await env.client.mergePatch(EtcdBackupSchedules, { namespace: ns, name: SCHEDULE }, { spec: { retention: { maxCount: 3 } } });
  const after = await eventually('the operator observed the change', async () => {
    const s = await getSchedule();
    return (s.status?.observedGeneration ?? 0) >= (changed.metadata.generation ?? Infinity) ? s : undefined;
  }, { timeoutMs: 60_000, intervalMs: 1000 });
  assert.equal(after.status?.lastScheduleTime, lastScheduled, 'no time taken while suspended');
  assert.deepEqual((await scheduleBackups()).map((b) => b.metadata.name!).sort(), backupsBefore, 'no new EtcdBackup');
  assert.equal(condition(after, 'Ready')?.reason, 'Suspended');
});

test('an EtcdRestore makes a new cluster from a scheduled backup, with every acknowledged write, and does not own it', async () => {
  const backups = (await scheduleBackups()).filter((b) => b.status?.phase === 'Succeeded').sort((a, b) => (b.status!.revision ?? 0) - (a.status!.revision ?? 0));
  const source = backups[0]!;
  await env.client.create(EtcdRestores, {
    apiVersion: 'etcd.quorum.dev/v1alpha1',
    kind: 'EtcdRestore',
    metadata: { name: 'restore-1', namespace: ns },
    spec: { clusterName: 'restored', backupName: source.metadata.name!, clusterSpec: { ...PLAINTEXT, replicas: 1 } },
  });
  const done = await eventually('the restore finished', async () => {
    const r = await env.client.get(EtcdRestores, { namespace: ns, name: 'restore-1' });
    return r.status?.phase === 'Succeeded' || r.status?.phase === 'Failed' ? r : undefined;
  }, { timeoutMs: 240_000, intervalMs: 1000 });
  assert.equal(done.status?.phase, 'Succeeded', JSON.stringify(done.status?.conditions));
  const restored = await waitAvailable(env.client, ns, 'restored', 1);
  assert.equal(done.status?.clusterUID, restored.cluster.metadata.uid);
  assert.equal(restored.cluster.metadata.labels?.[RESTORE_LABEL], 'restore-1');
  assert.deepEqual(restored.cluster.spec.bootstrap, { fromBackup: { backupName: source.metadata.name } });
  assert.equal(restored.cluster.metadata.ownerReferences, undefined, 'the restore does not own the cluster');
  assert.notEqual(restored.cluster.status?.clusterID, (await getCluster(env.client, ns, SOURCE)).cluster.status?.clusterID, 'a new cluster ID');

  const report = await checker.verify({ upToRevision: source.status!.revision!, endpoints: [await clientServiceEndpoint(env.client, ns, 'restored')], timeoutMs: 60_000 });
  assert.ok(report.acknowledged >= 100, `checked ${report.acknowledged} writes`);
  assert.deepEqual(report.lost, [], 'every acknowledged write is in the restored cluster');
  assert.deepEqual(report.corrupted, [], 'and unchanged');

  // Deleting the restore record keeps the cluster.
  await env.client.delete(EtcdRestores, { namespace: ns, name: 'restore-1' });
  await eventually('the restore record is gone', async () => (await env.client.find(EtcdRestores, { namespace: ns, name: 'restore-1' })) === undefined, { timeoutMs: 30_000 });
  const kept = await env.client.get(EtcdClusters, { namespace: ns, name: 'restored' });
  assert.equal(kept.metadata.uid, restored.cluster.metadata.uid);
  assert.equal(kept.metadata.deletionTimestamp, undefined);
});

test('an EtcdRestore into the name of a cluster it did not create is refused and touches nothing', async () => {
  const backupName = (await scheduleBackups()).find((b) => b.status?.phase === 'Succeeded')!.metadata.name!;
  const before = await env.client.get(EtcdClusters, { namespace: ns, name: SOURCE });
  await env.client.create(EtcdRestores, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdRestore', metadata: { name: 'clash', namespace: ns }, spec: { clusterName: SOURCE, backupName } });
  const refused = await eventually('the restore is refused', async () => {
    const r = await env.client.get(EtcdRestores, { namespace: ns, name: 'clash' });
    return r.status?.conditions?.find((c) => c.type === 'Complete' && c.reason === 'ClusterExists') ? r : undefined;
  }, { timeoutMs: 60_000, intervalMs: 1000 });
  assert.equal(refused.status?.phase, 'Pending');
  const afterwards = await env.client.get(EtcdClusters, { namespace: ns, name: SOURCE });
  assert.equal(afterwards.metadata.generation, before.metadata.generation, 'the existing cluster spec is unchanged');
  assert.equal(afterwards.metadata.labels?.[RESTORE_LABEL], undefined);
  assert.equal(afterwards.spec.bootstrap, undefined);
});

test('an EtcdRestore whose backup never appears says so while it waits, and fails past spec.backupWaitSeconds', async () => {
  const created = await env.client.create(EtcdRestores, {
    apiVersion: 'etcd.quorum.dev/v1alpha1',
    kind: 'EtcdRestore',
    metadata: { name: 'never', namespace: ns },
    spec: { clusterName: 'never-restored', backupName: 'never-taken', backupWaitSeconds: 45 },
  });
  const waiting = await eventually('the restore reports its wait', async () => {
    const r = await env.client.get(EtcdRestores, { namespace: ns, name: 'never' });
    return r.status?.conditions?.find((c) => c.type === 'Complete' && c.reason === 'BackupNotFound') ? r : undefined;
  }, { timeoutMs: 30_000, intervalMs: 1000 });
  assert.equal(waiting.status?.phase, 'Pending');
  assert.match(waiting.status?.conditions?.find((c) => c.type === 'Complete')?.message ?? '', /does not exist in this namespace \(waited \d+ s of the 45 s spec\.backupWaitSeconds allows\)/);

  const failed = await eventually('the restore failed', async () => {
    const r = await env.client.get(EtcdRestores, { namespace: ns, name: 'never' });
    return r.status?.phase === 'Failed' ? r : undefined;
  }, { timeoutMs: 120_000, intervalMs: 1000 });
  const waitedMs = Date.parse(failed.status!.completedAt!) - Date.parse(created.metadata.creationTimestamp!);
  assert.ok(waitedMs >= 45_000 && waitedMs < 75_000, `failed after ${waitedMs} ms`);
  const reason = failed.status?.conditions?.find((c) => c.type === 'Failed');
  assert.equal(reason?.status, 'True');
  assert.equal(reason?.reason, 'BackupWaitExceeded');
  assert.match(reason?.message ?? '', /^the EtcdBackup named by spec\.backupName does not exist in this namespace: gave up after waiting \d+ s \(spec\.backupWaitSeconds: 45\); no cluster was created$/);
  const events = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=never', '-o', 'jsonpath={.items[*].reason}']);
  assert.match(events, /RestoreWaiting/, 'a Warning after 30 s of waiting');
  assert.match(events, /RestoreFailed/);
  assert.equal(await env.client.find(EtcdClusters, { namespace: ns, name: 'never-restored' }), undefined, 'no cluster was created');
});
