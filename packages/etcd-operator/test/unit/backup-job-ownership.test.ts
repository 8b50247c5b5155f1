// A Job at a backup Job's name that the EtcdBackup does not control (issue 23): names are predictable, so anyone who
// may create Jobs in the namespace can put one there, with a pod whose termination message looks like a result. It
// is never used, read for results, adopted or deleted: the backup says whose it is (JobNameTaken), waits for it to
// go, and fails once the wait passes its bound. The planner, then the reconciler against in-memory stores.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConflictError, Store, type EventInput, type Job, type Pod } from '@quorum/runtime';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import { BACKUP_CREDENTIALS_LABEL } from '../../src/backup/credentials.ts';
import { backupJobName, JOB_CONTROLLER_UID_LABEL } from '../../src/backup/job.ts';
import { JOB_NAME_TAKEN_BOUND_MS } from '@quorum/kit';
import { planBackup, type BackupObserved } from '../../src/backup/plan.ts';
import { backupReconcilerFixture } from './backup-reconciler-fixture.ts';

const NOW = Date.parse('2026-11-28T04:00:00Z');
const member = { name: 'c-1', healthy: true, leader: false, learner: false, hasLeader: true, appliedIndex: '1', dbSize: 1 };
const base = (over: Partial<BackupObserved> = {}): BackupObserved => ({ phase: undefined, clusterExists: true, members: [member], job: undefined, now: NOW, cannotStartGraceMs: 60_000, ...over });
const RESULT = { ok: true, key: 'k', location: 's3://quorum/k', sizeBytes: 1, sha256: 'a'.repeat(64), revision: '9', etcdVersion: '3.6.16', member: 'c-1', startedAt: '', completedAt: '' };

test('the planner: a foreign Job at the name is a visible wait naming it, then a failure past the bound; never a new Job', () => {
  const foreignJob = { name: 'b-backup-1234abcd', controller: 'CronJob nightly', since: NOW - 1000 };
  const waiting = planBackup(base({ foreignJob }));
  assert.ok(waiting.type === 'wait' && waiting.reason === 'JobNameTaken', JSON.stringify(waiting));
  assert.match(waiting.message, /Job b-backup-1234abcd is in the way.*controlled by CronJob nightly.*never reads, adopts or deletes it/);
  assert.equal(waiting.requeueAfterMs, 15_000);
  // Recorded Running (the operator stopped after the status write): the same, not a second Job attempt.
  assert.equal(planBackup(base({ phase: 'Running', recordedMember: 'c-1', foreignJob })).type, 'wait');
  const failed = planBackup(base({ foreignJob: { name: 'b-backup-1234abcd', since: NOW - JOB_NAME_TAKEN_BOUND_MS } }));
  assert.ok(failed.type === 'fail' && failed.reason === 'JobNameTaken' && /has no controller/.test(failed.message) && /Create the EtcdBackup again/.test(failed.message), JSON.stringify(failed));
  assert.deepEqual(planBackup(base()), { type: 'startJob', member: 'c-1', dbSize: 1 }, 'without it, the Job is made');
});

const backup: EtcdBackup = {
  apiVersion: 'etcd.quorum.dev/v1alpha1',
  kind: 'EtcdBackup',
  metadata: { name: 'b', namespace: 'team', uid: 'b-uid', generation: 1 },
  spec: { clusterName: 'c', destination: { s3: { bucket: 'quorum', credentialsSecret: 'creds' } } },
};
const JOB_NAME = backupJobName(backup);

function jobAtName(ownerReferences: NonNullable<Job['metadata']['ownerReferences']>, created = new Date(NOW - 1000).toISOString()): Job {
  return { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: JOB_NAME, namespace: 'team', uid: 'job-uid', creationTimestamp: created, ownerReferences }, status: { active: 1 } };
}

/** The Job's pod, made by its controller as the Job controller makes them, with a successful agent's result. */
const podWithResult: Pod = {
  apiVersion: 'v1',
  kind: 'Pod',
  metadata: { name: `${JOB_NAME}-x`, namespace: 'team', labels: { [JOB_CONTROLLER_UID_LABEL]: 'job-uid' }, ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: JOB_NAME, uid: 'job-uid', controller: true }] },
  status: { containerStatuses: [{ name: 'backup', image: 'agent', imageID: '', ready: false, restartCount: 0, state: { terminated: { exitCode: 0, message: JSON.stringify(RESULT) } } }] },
};

async function reconcileWith(job: Job, status: EtcdBackup['status'] = {}, now = NOW): Promise<{ backup: EtcdBackup; writes: string[]; events: EventInput[]; requeueAfter: number | undefined }> {
  const fixture = backupReconcilerFixture({ ...backup, status }, { credentialsLabels: { [BACKUP_CREDENTIALS_LABEL]: 'true' }, now });
  fixture.jobs.upsert(job);
  fixture.pods.upsert(podWithResult);
  const result = await fixture.reconcile('team', 'b');
  return { backup: fixture.backups.get('team/b')!, writes: fixture.writes, events: fixture.events, requeueAfter: result?.requeueAfter };
}

const complete = (b: EtcdBackup): { status: string; reason?: string; message: string } | undefined => b.status?.conditions?.find((c) => c.type === 'Complete');

test('the reconciler: a Job of no controller, or of another, at the name is not made, read or deleted; the backup waits, saying so', async () => {
  for (const owners of [[], [{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'nightly', uid: 'cron-uid', controller: true }], [{ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', name: 'b', uid: 'b-uid' }]]) {
    const { backup: after, writes, events, requeueAfter } = await reconcileWith(jobAtName(owners));
    assert.equal(complete(after)?.reason, 'JobNameTaken', JSON.stringify(owners));
    assert.match(complete(after)?.message ?? '', new RegExp(`Job ${JOB_NAME} is in the way`));
    assert.deepEqual(writes, [], 'no Job made, none deleted');
    assert.deepEqual(events.map((e) => [e.type, e.reason]), [['Warning', 'BackupJobNameTaken']]);
    assert.equal(requeueAfter, 15_000, 'looked at again: its deletion wakes nothing (it is not owned)');
  }
});

test("the reconciler: a Running backup never takes the result of a foreign Job's pod, and fails JobNameTaken past the bound", async () => {
  const running = { phase: 'Running' as const, member: 'c-1', job: JOB_NAME };
  const foreign = jobAtName([{ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', name: 'b', uid: 'an-earlier-b', controller: true }]);
  const waiting = await reconcileWith(foreign, running);
  assert.equal(waiting.backup.status?.phase, 'Running');
  assert.equal(waiting.backup.status?.sha256, undefined, 'the forged result was not read');
  assert.equal(complete(waiting.backup)?.reason, 'JobNameTaken');
  const failed = await reconcileWith(foreign, running, NOW + JOB_NAME_TAKEN_BOUND_MS);
  assert.equal(failed.backup.status?.phase, 'Failed');
  assert.equal(failed.backup.status?.conditions?.find((c) => c.type === 'Failed')?.reason, 'JobNameTaken');
  assert.deepEqual(failed.writes, []);
  // The control: the same Job controlled by this backup is its Job, and its pod's result is the backup's.
  const own = await reconcileWith(jobAtName([{ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', name: 'b', uid: 'b-uid', controller: true }]), running);
  assert.equal(own.backup.status?.phase, 'Succeeded');
  assert.equal(own.backup.status?.sha256, RESULT.sha256);
});

test('a finished backup is finished once: a reconcile on a stale cache (still Running) is refused by the version and leaves its completedAt as reported', async () => {
  const running = { phase: 'Running' as const, member: 'c-1', job: JOB_NAME };
  const finished = { ...backup, metadata: { ...backup.metadata, resourceVersion: '8' }, status: { ...running, phase: 'Succeeded' as const, completedAt: '2026-01-01T00:00:00Z' } };
  const stored = new Store<EtcdBackup>();
  stored.upsert(finished);
  // The cache still has version 7, Running: the Job's result would finish it again, with another completedAt.
  const fixture = backupReconcilerFixture({ ...backup, metadata: { ...backup.metadata, resourceVersion: '7' }, status: running }, { credentialsLabels: { [BACKUP_CREDENTIALS_LABEL]: 'true' }, now: NOW, stored });
  fixture.jobs.upsert(jobAtName([{ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', name: 'b', uid: 'b-uid', controller: true }]));
  fixture.pods.upsert(podWithResult);
  await assert.rejects(fixture.reconcile('team', 'b'), ConflictError);
  assert.equal(stored.get('team/b')?.status?.completedAt, '2026-01-01T00:00:00Z');
  assert.deepEqual(fixture.writes, []);
});

test('a reconcile on a stale cache (still Pending) is refused by the version: it writes nothing over a finished backup', async () => {
  const finished = { ...backup, metadata: { ...backup.metadata, resourceVersion: '8' }, status: { phase: 'Succeeded' as const, member: 'c-1', job: JOB_NAME, completedAt: '2026-01-01T00:00:00Z' } };
  const stored = new Store<EtcdBackup>();
  stored.upsert(finished);
  // The cache still has version 1, before anything was recorded: it would take the backup's first steps again.
  const fixture = backupReconcilerFixture({ ...backup, metadata: { ...backup.metadata, resourceVersion: '1' } }, { credentialsLabels: { [BACKUP_CREDENTIALS_LABEL]: 'true' }, now: NOW, stored });
  await assert.rejects(fixture.reconcile('team', 'b'), ConflictError);
  assert.deepEqual(stored.get('team/b'), finished);
  assert.deepEqual(fixture.writes, []);
});
