// A Job at an expired backup's prune Job name that the EtcdBackup does not control (issue 23): names are
// predictable, so anyone who may create Jobs in the namespace can put one there. It is never read as the prune's
// result nor deleted by a retry: the schedule waits, saying whose it is (RetentionFailing JobNameTaken), looks again
// every 15 s and, past the bound, at the retry cadence. Prune Jobs of earlier operators (an ownerReference without
// `controller`) are still the backup's. The planner, the ownership check, then the reconciler against in-memory stores.
import assert from 'node:assert/strict';
import test from 'node:test';
import { applyMergePatch, backupScheduleStatus, JOB_NAME_TAKEN_BOUND_MS, planSchedule, type ScheduleObserved, type ScheduledBackup } from '@quorum/kit';
import { AlreadyExistsError, createLogger, Store, type Client, type EventInput, type Job, type KubeObject, type OpenObject } from '@quorum/runtime';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { EtcdBackupSchedule } from '../../src/api/etcdbackupschedule.ts';
import { isOwnPruneJob, pruneJob, pruneJobName } from '../../src/schedule/prune-job.ts';
import { etcdBackupScheduleReconciler } from '../../src/schedule/reconcile.ts';

const T0 = Date.UTC(2026, 0, 1, 10, 0, 0);
const MIN = 60_000;
/** The status context of a schedule of the cluster c. */
const OF_CLUSTER_C = { target: 'c', backupKind: 'EtcdBackup' };
const scheduled = (minute: number): ScheduledBackup => ({ name: `s-${minute}`, uid: `uid-${minute}`, scheduledAt: T0 + minute * MIN, phase: 'Succeeded', completedAt: T0 + minute * MIN + 20_000, key: `k-${minute}`, deleting: false });
// maxCount 1 with two successful backups: the older one (minute 0) is expired and must be pruned.
const observed = (over: Partial<ScheduleObserved> = {}): ScheduleObserved => ({
  schedule: '0 0 1 1 *', hashSeed: 'ns/s', suspend: false, retention: { maxCount: 1 }, createdAt: T0 - MIN,
  lastScheduleTime: T0 + MIN, backups: [scheduled(0), scheduled(1)], pruneJobs: new Map(), now: T0 + 2 * MIN, pruneRetryMs: 10 * MIN, ...over,
});

test('the planner: a foreign Job at the prune name is waited for every 15 s, then at the retry cadence; never read, retried or replaced', () => {
  const foreign = new Map([['uid-0', { name: 's-0-prune-abcd1234', controller: 'CronJob sweep', since: T0 + 2 * MIN - 1000 }]]);
  // Its own failed prune Job would be retried (deleted): a foreign one at the name is not, whatever its state.
  const o = observed({ foreignPruneJobs: foreign, pruneJobs: new Map() });
  assert.deepEqual(planSchedule(o), { type: 'idle', requeueAfterMs: 15_000 });
  const status = backupScheduleStatus(o, planSchedule(o), {}, { generation: 1, ...OF_CLUSTER_C });
  const retention = status.conditions?.find((c) => c.type === 'RetentionFailing');
  assert.equal(retention?.status, 'True');
  assert.equal(retention?.reason, 'JobNameTaken');
  assert.match(retention?.message ?? '', /s-0: Job s-0-prune-abcd1234 is in the way of this expired backup's prune Job: it is controlled by CronJob sweep.*never reads, adopts or deletes it; waiting up to 5 min/);

  const late = observed({ foreignPruneJobs: foreign, now: T0 + 2 * MIN - 1000 + JOB_NAME_TAKEN_BOUND_MS });
  assert.deepEqual(planSchedule(late), { type: 'idle', requeueAfterMs: 10 * MIN }, 'past the bound: no 15 s loop');
  const lateStatus = backupScheduleStatus(late, planSchedule(late), {}, { generation: 1, ...OF_CLUSTER_C });
  assert.match(lateStatus.conditions?.find((c) => c.type === 'RetentionFailing')?.message ?? '', /waited 300 s\)\. Delete that Job \(the operator will not\)/);

  // Gone: the prune starts, and the condition clears once the backup is pruned.
  assert.deepEqual(planSchedule(observed()), { type: 'startPrune', backup: scheduled(0) });
  const cleared = backupScheduleStatus(observed({ backups: [scheduled(1)] }), { type: 'idle', requeueAfterMs: undefined }, status, { generation: 1, ...OF_CLUSTER_C });
  assert.equal(cleared.conditions?.find((c) => c.type === 'RetentionFailing')?.status, 'False');
});

const backupRecord: EtcdBackup = {
  apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup',
  metadata: { name: 'nightly-1767261600', namespace: 'ns', uid: 'b-uid', labels: { 'etcd.quorum.dev/schedule': 'nightly' } },
  spec: { clusterName: 'c', destination: { pvc: { claimName: 'b' } } },
  status: { phase: 'Succeeded', key: 'k-0', completedAt: new Date(T0 + 20_000).toISOString() },
};
const made = pruneJob(backupRecord, { schedule: 'nightly', key: 'k-0', agentImage: 'img' });
const withOwners = (ownerReferences: NonNullable<Job['metadata']['ownerReferences']>, labels = made.metadata.labels): Job => ({ ...made, metadata: { ...made.metadata, labels, ownerReferences } });
const legacyOwner = { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', name: backupRecord.metadata.name!, uid: 'b-uid' };

test('only a Job the backup controls is its prune Job; MIGRATION: one an earlier operator made (owner without controller, its labels) still is', () => {
  assert.equal(made.metadata.ownerReferences?.[0]?.controller, true, 'made controlled by its backup');
  assert.equal(isOwnPruneJob(made, backupRecord), true);
  assert.equal(isOwnPruneJob(withOwners([legacyOwner]), backupRecord), true, 'an earlier operator\'s prune Job');
  assert.equal(isOwnPruneJob(withOwners([legacyOwner], {}), backupRecord), false, 'the owner alone, without the operator\'s labels');
  assert.equal(isOwnPruneJob(withOwners([legacyOwner], { ...made.metadata.labels, 'etcd.quorum.dev/prune': 'another-backup' }), backupRecord), false, 'the prune label names another backup');
  assert.equal(isOwnPruneJob(withOwners([legacyOwner, { apiVersion: 'batch/v1', kind: 'CronJob', name: 'sweep', uid: 'c', controller: true }]), backupRecord), false, 'controlled by another');
  assert.equal(isOwnPruneJob(withOwners([{ ...legacyOwner, uid: 'an-earlier-backup', controller: true }]), backupRecord), false, 'controlled by an earlier backup of the name');
  assert.equal(isOwnPruneJob(withOwners([]), backupRecord), false, 'no owner at all');
});

/** The schedule reconciler over in-memory caches; the API server's Jobs (listed by name) may hold one the cache does not. */
function fixture(options: { cached?: Job; listed?: Job }) {
  const schedules = new Store<EtcdBackupSchedule>();
  const backups = new Store<EtcdBackup>();
  const jobs = new Store<Job>();
  schedules.upsert({
    apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackupSchedule',
    metadata: { name: 'nightly', namespace: 'ns', uid: 's-uid', generation: 1, creationTimestamp: new Date(T0 - MIN).toISOString() },
    spec: { clusterName: 'c', schedule: '0 0 1 1 *', retention: { maxCount: 1 }, destination: { pvc: { claimName: 'b' } } },
    status: { lastScheduleTime: new Date(T0 + MIN).toISOString() },
  });
  const owner = { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackupSchedule', name: 'nightly', uid: 's-uid', controller: true };
  backups.upsert({ ...backupRecord, metadata: { ...backupRecord.metadata, ownerReferences: [owner] } });
  backups.upsert({ ...backupRecord, metadata: { ...backupRecord.metadata, name: 'nightly-1767261660', uid: 'b2-uid', ownerReferences: [owner] }, status: { phase: 'Succeeded', key: 'k-1', completedAt: new Date(T0 + MIN + 20_000).toISOString() } });
  if (options.cached) jobs.upsert(options.cached);
  const writes: string[] = [];
  const events: EventInput[] = [];
  const client = {
    list: (_t: unknown, o: { fieldSelector?: string }) => Promise.resolve({ items: options.listed && o.fieldSelector === `metadata.name=${options.listed.metadata.name}` ? [options.listed] : [] }),
    create: (_t: unknown, obj: KubeObject) => {
      writes.push(`create ${obj.kind} ${obj.metadata.name}`);
      return options.listed ? Promise.reject(new AlreadyExistsError('POST', obj.metadata.name!, 409, { reason: 'AlreadyExists' })) : Promise.resolve(obj);
    },
    delete: (t: { kind: string }, k: { name: string }) => (writes.push(`delete ${t.kind} ${k.name}`), Promise.resolve()),
    mergePatch(_t: unknown, _k: unknown, patch: { status: Record<string, unknown> }): Promise<KubeObject> {
      const current = schedules.get('ns/nightly')!;
      schedules.upsert({ ...current, status: applyMergePatch(current.status, patch.status) as EtcdBackupSchedule['status'] });
      return Promise.resolve(current);
    },
  } as unknown as Client;
  const reconcile = etcdBackupScheduleReconciler({
    client, schedules: { store: schedules }, backups: { store: backups }, jobs: { store: jobs }, pods: { store: new Store<OpenObject>() },
    events: { record: (_o, e) => void events.push(e) }, agentImage: 'img', now: () => new Date(T0 + 2 * MIN),
  });
  const run = () => reconcile({ namespace: 'ns', name: 'nightly' }, { signal: new AbortController().signal, log: createLogger({ level: 'silent' }), retries: 0 });
  return { run, writes, events, schedule: () => schedules.get('ns/nightly')! };
}

const failed = { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: new Date(T0 - 20 * MIN).toISOString() }] };
const complete = { conditions: [{ type: 'Complete', status: 'True' }] };

test('the reconciler: a foreign Job at the prune name, in the cache or only in the API, is neither retried nor replaced; the schedule says whose it is', async () => {
  const foreignFailed = { ...withOwners([{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'sweep', uid: 'c', controller: true }]), status: failed } as Job;
  const unlabelled = { ...withOwners([], {}), status: complete } as Job;
  for (const jobs of [{ cached: foreignFailed }, { listed: unlabelled }]) {
    const t = fixture(jobs);
    const result = await t.run();
    assert.deepEqual(t.writes, [], `nothing made or deleted (${JSON.stringify(Object.keys(jobs))})`);
    assert.equal(result?.requeueAfter, 15_000);
    const retention = t.schedule().status?.conditions?.find((c) => c.type === 'RetentionFailing');
    assert.equal(retention?.reason, 'JobNameTaken');
    assert.match(retention?.message ?? '', new RegExp(`Job ${pruneJobName(backupRecord)} is in the way`));
    assert.deepEqual(t.events.map((e) => [e.type, e.reason]), [['Warning', 'BackupPruneJobNameTaken']]);
    await t.run();
    assert.equal(t.events.length, 1, 'said once');
  }
});

test('the reconciler: its own prune Job, or one an earlier operator made, is read and acted on', async () => {
  const own = fixture({ cached: { ...made, status: failed } });
  await own.run();
  assert.deepEqual(own.writes, [`delete Job ${pruneJobName(backupRecord)}`], 'a failed own Job is retried');
  const legacy = fixture({ cached: { ...withOwners([legacyOwner]), status: complete } });
  await legacy.run();
  assert.deepEqual(legacy.writes, [`delete EtcdBackup ${backupRecord.metadata.name}`], 'an earlier operator\'s finished prune: the record goes');
  const none = fixture({});
  await none.run();
  assert.deepEqual(none.writes, [`create Job ${pruneJobName(backupRecord)}`]);
});
