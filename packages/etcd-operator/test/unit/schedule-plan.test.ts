import assert from 'node:assert/strict';
import { applyMergePatch, backupScheduleStatus, durationMs, expiredBackups, parseSchedule, planSchedule, type PruneJob, type ScheduleObserved, type ScheduledBackup } from '@quorum/kit';
import test from 'node:test';
import { AlreadyExistsError, createLogger, Store, type Client, type KubeObject, type OpenObject } from '@quorum/runtime';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { EtcdBackupSchedule } from '../../src/api/etcdbackupschedule.ts';
import { scheduleTimes, skippedTimes, type ScheduleTimes, type SkipReason } from '@quorum/kit';
import type { ScheduleLabels } from '../../src/schedule/metrics.ts';
import { observePruneJob, pruneJob, pruneJobName } from '../../src/schedule/prune-job.ts';
import { etcdBackupScheduleReconciler, scheduledBackupName } from '../../src/schedule/reconcile.ts';

const T0 = Date.UTC(2026, 0, 1, 10, 0, 0);
const MIN = 60_000;
/** The status context of a schedule of the cluster c. */
const OF_CLUSTER_C = { target: 'c', backupKind: 'EtcdBackup' };
const backup = (minute: number, over: Partial<ScheduledBackup> = {}): ScheduledBackup => ({
  name: `s-${(T0 + minute * MIN) / 1000}`,
  uid: `uid-${minute}`,
  scheduledAt: T0 + minute * MIN,
  phase: 'Succeeded',
  completedAt: T0 + minute * MIN + 20_000,
  key: `p/c-${minute}.db`,
  deleting: false,
  ...over,
});
const observed = (over: Partial<ScheduleObserved> = {}): ScheduleObserved => ({
  schedule: '* * * * *',
  hashSeed: 'ns/s',
  suspend: false,
  retention: {},
  createdAt: T0 - 30_000,
  backups: [],
  pruneJobs: new Map(),
  now: T0 + 5000,
  pruneRetryMs: 10 * MIN,
  ...over,
});

test('an invalid schedule is reported with the parser\'s own message, and nothing is created', () => {
  const a = planSchedule(observed({ schedule: '61 * * * *' }));
  assert.equal(a.type, 'invalid');
  assert.match(a.type === 'invalid' ? a.message : '', /Constraint error, got value 61 expected range 0-59/);
  assert.equal(planSchedule(observed({ schedule: '0 0 30 2 *' })).type, 'invalid', 'a schedule that never fires');
  assert.equal(planSchedule(observed({ schedule: '* * * * * *' })).type, 'invalid', 'more than once a minute');
  assert.equal(parseSchedule('@daily', 'x').ok, true);
  assert.equal(parseSchedule('H 3 * * *', 'ns/a').ok, true);
});

test('the latest scheduled time at or before now is taken, once, and not one before the schedule existed', () => {
  assert.deepEqual(planSchedule(observed()), { type: 'createBackup', scheduledAt: T0 });
  assert.deepEqual(planSchedule(observed({ now: T0 })), { type: 'createBackup', scheduledAt: T0 }, 'exactly on the time');
  const idle = planSchedule(observed({ createdAt: T0 + 1000 }));
  assert.deepEqual(idle, { type: 'idle', requeueAfterMs: MIN - 5000 }, 'created after 10:00: the first time is 10:01');
  // Taken already: by the status, or by a backup that exists although the status write did not happen.
  assert.equal(planSchedule(observed({ lastScheduleTime: T0 })).type, 'idle');
  assert.equal(planSchedule(observed({ backups: [backup(0, { phase: 'Running', completedAt: undefined })] })).type, 'idle');
  assert.deepEqual(planSchedule(observed({ lastScheduleTime: T0, now: T0 + MIN + 1 })), { type: 'createBackup', scheduledAt: T0 + MIN });
});

test('after a downtime only the latest missed time is taken', () => {
  const a = planSchedule(observed({ lastScheduleTime: T0, backups: [backup(0)], now: T0 + 7 * MIN + 30_000 }));
  assert.deepEqual(a, { type: 'createBackup', scheduledAt: T0 + 7 * MIN });
  // And once it is taken, the earlier missed ones are not caught up.
  const b = planSchedule(observed({ lastScheduleTime: T0 + 7 * MIN, backups: [backup(0), backup(7, { phase: 'Running', completedAt: undefined })], now: T0 + 7 * MIN + 31_000 }));
  assert.equal(b.type, 'idle');
});

test('Forbid: no new backup while one runs, and a time passed while it ran is skipped, not taken late', () => {
  const running = backup(0, { phase: 'Running', completedAt: undefined, key: undefined });
  assert.equal(planSchedule(observed({ lastScheduleTime: T0, backups: [running], now: T0 + MIN + 1000 })).type, 'idle');
  // It finished at 10:01:30: 10:01 was skipped; at 10:01:40 nothing is taken, at 10:02 the next one is.
  const slow = backup(0, { completedAt: T0 + MIN + 30_000 });
  assert.equal(planSchedule(observed({ lastScheduleTime: T0, backups: [slow], now: T0 + MIN + 40_000 })).type, 'idle');
  assert.deepEqual(planSchedule(observed({ lastScheduleTime: T0, backups: [slow], now: T0 + 2 * MIN + 1000 })), { type: 'createBackup', scheduledAt: T0 + 2 * MIN });
});

test('suspend takes no new backup and does not requeue for scheduled times; resuming takes only the latest missed time', () => {
  const a = planSchedule(observed({ suspend: true, lastScheduleTime: T0, backups: [backup(0)], now: T0 + 5 * MIN + 1000 }));
  assert.deepEqual(a, { type: 'idle', requeueAfterMs: undefined });
  assert.deepEqual(planSchedule(observed({ suspend: false, lastScheduleTime: T0, backups: [backup(0)], now: T0 + 5 * MIN + 1000 })), { type: 'createBackup', scheduledAt: T0 + 5 * MIN });
});

test('retention by count: the oldest successful backups beyond maxCount go, stored object first, then the record', () => {
  const backups = [backup(0), backup(1), backup(2), backup(3)];
  assert.deepEqual(expiredBackups(backups, { maxCount: 2 }, T0 + 4 * MIN).map((b) => b.name), [backups[0]!.name, backups[1]!.name]);
  const base = observed({ retention: { maxCount: 2 }, backups, lastScheduleTime: T0 + 3 * MIN, now: T0 + 3 * MIN + 40_000 });
  assert.deepEqual(planSchedule(base), { type: 'startPrune', backup: backups[0] });
  const running = new Map<string, PruneJob>([['uid-0', { succeeded: false, failed: false }]]);
  assert.deepEqual(planSchedule({ ...base, pruneJobs: running }), { type: 'startPrune', backup: backups[1] }, 'the next one starts while the first runs');
  const done = new Map<string, PruneJob>([['uid-0', { succeeded: true, failed: false }]]);
  assert.deepEqual(planSchedule({ ...base, pruneJobs: done }), { type: 'deleteRecord', backup: backups[0], storedObjectDeleted: true });
  const bothRunning = new Map<string, PruneJob>([['uid-0', { succeeded: false, failed: false }], ['uid-1', { succeeded: false, failed: false }]]);
  assert.equal(planSchedule({ ...base, pruneJobs: bothRunning }).type, 'idle', 'waits for the Jobs (their events wake it)');
  assert.equal(planSchedule({ ...base, backups: [{ ...backups[0]!, deleting: true }, backups[1]!, backups[2]!] }).type, 'idle', 'a record being deleted is left alone');
});

test('retention by age never deletes the newest successful backup', () => {
  const backups = [backup(0), backup(60), backup(120)];
  const now = T0 + 24 * 60 * MIN;
  assert.deepEqual(expiredBackups(backups, { maxAgeMs: 60 * MIN }, now).map((b) => b.name), [backups[0]!.name, backups[1]!.name]);
  assert.deepEqual(expiredBackups([backup(0)], { maxAgeMs: MIN, maxCount: 1 }, now), [], 'the only success stays, however old');
  // Backups not yet expired: the controller wakes up when the next one ages out.
  // 10:60's backup ages out 90 minutes after its time: at 12:30, 20 minutes after now.
  const a = planSchedule(observed({ schedule: '0 0 1 1 *', retention: { maxAgeMs: 90 * MIN }, backups: backups.slice(1), lastScheduleTime: T0 + 120 * MIN, now: T0 + 130 * MIN }));
  assert.deepEqual(a, { type: 'idle', requeueAfterMs: 20 * MIN + 1 });
});

test('failed backups: their records are pruned by the same rules, without a Job (nothing was stored)', () => {
  const failed = (m: number): ScheduledBackup => backup(m, { phase: 'Failed', key: undefined, failure: { reason: 'NoQuorum', message: 'no quorum' } });
  const backups = [failed(0), failed(1), backup(2), failed(3)];
  assert.deepEqual(expiredBackups(backups, { maxCount: 1 }, T0 + 4 * MIN).map((b) => b.name), [backups[0]!.name, backups[1]!.name]);
  assert.deepEqual(planSchedule(observed({ retention: { maxCount: 1 }, backups, lastScheduleTime: T0 + 3 * MIN, now: T0 + 3 * MIN + 40_000 })), { type: 'deleteRecord', backup: backups[0], storedObjectDeleted: false });
});

test('a failed delete Job is retried after a pause, and reported meanwhile', () => {
  const backups = [backup(0), backup(1)];
  const failedJob = new Map<string, PruneJob>([['uid-0', { succeeded: false, failed: true, failedAt: T0 + MIN + 30_000, message: 'AccessDenied: denied' }]]);
  const base = observed({ retention: { maxCount: 1 }, backups, pruneJobs: failedJob, lastScheduleTime: T0 + MIN, now: T0 + MIN + 40_000 });
  const waiting = planSchedule(base);
  assert.equal(waiting.type, 'idle');
  assert.equal(waiting.type === 'idle' ? waiting.requeueAfterMs : 0, 20_000, 'the next minute comes before the retry');
  assert.deepEqual(planSchedule({ ...base, suspend: true, now: T0 + 11 * MIN + 30_000, lastScheduleTime: T0 + 11 * MIN }), { type: 'retryPrune', backup: backups[0] });
  const status = backupScheduleStatus(base, waiting, {}, { generation: 1, ...OF_CLUSTER_C });
  const retention = status.conditions?.find((c) => c.type === 'RetentionFailing');
  assert.equal(retention?.status, 'True');
  assert.match(retention?.message ?? '', /AccessDenied: denied/);
});

test('status: times, the active backup, the last failure and the conditions', () => {
  const failure = backup(2, { phase: 'Failed', key: undefined, failure: { reason: 'AccessDenied', message: 'denied' } });
  const o = observed({ backups: [backup(0), backup(1), failure, backup(3, { phase: 'Running', completedAt: undefined, key: undefined })], lastScheduleTime: T0 + 3 * MIN, now: T0 + 3 * MIN + 10_000 });
  const action = planSchedule(o);
  const s = backupScheduleStatus(o, action, {}, { generation: 4, ...OF_CLUSTER_C });
  assert.equal(s.observedGeneration, 4);
  assert.equal(s.lastScheduleTime, '2026-01-01T10:03:00Z');
  assert.equal(s.lastSuccessfulTime, '2026-01-01T10:01:20Z');
  assert.equal(s.nextScheduleTime, '2026-01-01T10:04:00Z');
  assert.equal(s.active, backup(3).name);
  assert.deepEqual(s.lastFailure, { time: '2026-01-01T10:02:20Z', backup: failure.name, reason: 'AccessDenied', message: 'denied' });
  const byType = Object.fromEntries((s.conditions ?? []).map((c) => [c.type, c]));
  assert.equal(byType['Ready']?.status, 'True');
  assert.equal(byType['BackupsFailing']?.status, 'True');
  assert.equal(byType['BackupsFailing']?.reason, 'AccessDenied');
  // A later success clears BackupsFailing; the last failure and success times only move forward.
  const later = observed({ backups: [backup(4)], lastScheduleTime: T0 + 4 * MIN, now: T0 + 4 * MIN + 30_000 });
  const s2 = backupScheduleStatus(later, planSchedule(later), s, { generation: 4, ...OF_CLUSTER_C });
  assert.equal(s2.conditions?.find((c) => c.type === 'BackupsFailing')?.status, 'False');
  assert.deepEqual(s2.lastFailure, s.lastFailure);
  assert.equal(s2.lastSuccessfulTime, '2026-01-01T10:04:20Z');
  assert.equal(s2.active, undefined);
  // Invalid and suspended.
  const invalid = observed({ schedule: 'nope' });
  const s3 = backupScheduleStatus(invalid, planSchedule(invalid), {}, { generation: 1, ...OF_CLUSTER_C });
  assert.equal(s3.conditions?.find((c) => c.type === 'Ready')?.reason, 'InvalidSchedule');
  assert.equal(s3.nextScheduleTime, undefined);
  const suspended = observed({ suspend: true });
  const s4 = backupScheduleStatus(suspended, planSchedule(suspended), {}, { generation: 1, ...OF_CLUSTER_C });
  assert.equal(s4.conditions?.find((c) => c.type === 'Ready')?.reason, 'Suspended');
  assert.equal(s4.nextScheduleTime, undefined);
});

test('creating a backup reports it as active and its time as lastScheduleTime', () => {
  const o = observed();
  const action = planSchedule(o);
  const s = backupScheduleStatus(o, action, {}, { generation: 1, ...OF_CLUSTER_C, createdBackup: scheduledBackupName('s', T0) });
  assert.equal(s.active, `s-${T0 / 1000}`);
  assert.equal(s.lastScheduleTime, '2026-01-01T10:00:00Z');
});

test('durations', () => {
  assert.equal(durationMs('168h'), 168 * 3_600_000);
  assert.equal(durationMs('1h30m'), 90 * MIN);
  assert.equal(durationMs('90s'), 90_000);
  assert.equal(durationMs('7d'), undefined);
});

test('the delete Job: the agent, the credentials mounted in it alone, one name per backup UID, owned by the backup', () => {
  const b: EtcdBackup = {
    metadata: { name: 'nightly-1767261600', namespace: 'ns', uid: 'u-1' },
    spec: { clusterName: 'c', destination: { s3: { bucket: 'quorum', prefix: 'p', credentialsSecret: 's3-credentials' } } },
    status: { phase: 'Succeeded', key: 'p/c.db' },
  };
  const job = pruneJob(b, { schedule: 'nightly', key: 'p/c.db', agentImage: 'img' }) as unknown as {
    metadata: { name: string; labels: Record<string, string>; ownerReferences: { kind: string; uid: string; controller?: boolean }[] };
    spec: { template: { spec: { containers: { command: string[]; args: string[]; volumeMounts: { name: string }[] }[]; volumes: { name: string; secret?: { secretName: string } }[] } } };
  };
  assert.equal(job.metadata.name, pruneJobName(b));
  assert.notEqual(pruneJobName(b), pruneJobName({ metadata: { ...b.metadata, uid: 'u-2' } }), 'a recreated backup gets another Job');
  assert.equal(job.metadata.labels['etcd.quorum.dev/schedule'], 'nightly');
  assert.deepEqual(job.metadata.ownerReferences.map((o) => [o.kind, o.uid]), [['EtcdBackup', 'u-1']]);
  const c = job.spec.template.spec.containers[0]!;
  assert.deepEqual(c.command.slice(1), ['/app/packages/etcd-operator/dist/backup/agent.js', 'delete']);
  assert.ok(c.args.includes('--key=p/c.db'));
  assert.ok(c.args.includes(`--destination-json=${JSON.stringify(b.spec.destination)}`));
  assert.ok(c.args.some((a) => a.startsWith('--credentials-dir=')));
  assert.equal(job.spec.template.spec.volumes.find((v) => v.secret)?.secret?.secretName, 's3-credentials');
});

test("a failed delete Job reports the agent's reason from its newest pod", () => {
  const job = { metadata: { name: 'j' }, status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', message: 'Job has reached the specified backoff limit', lastTransitionTime: '2026-01-01T10:00:00Z' }] } };
  const pod = (created: string, message: string): OpenObject => ({ metadata: { name: created, creationTimestamp: created }, status: { containerStatuses: [{ name: 'delete', state: { terminated: { exitCode: 1, message } } }] } });
  const observedJob = observePruneJob(job, [pod('2026-01-01T09:59:50Z', '{"ok":false,"reason":"StorageUnreachable","message":"old"}'), pod('2026-01-01T09:59:58Z', '{"ok":false,"reason":"AccessDenied","message":"the store refused"}')]);
  assert.deepEqual(observedJob, { succeeded: false, failed: true, message: 'AccessDenied: the store refused', failedAt: T0 });
  assert.deepEqual(observePruneJob({ metadata: { name: 'j' }, status: { conditions: [{ type: 'Complete', status: 'True' }] } }, []), { succeeded: true, failed: false });
  assert.match(observePruneJob(job, []).message ?? '', /BackoffLimitExceeded/);
});

test('skipped times, counted when the time that collapses them is taken: Missed after a downtime, Forbid while a backup ran, Suspended', () => {
  // Down from 10:00:20 to 10:07:30: 10:01 to 10:06 were missed, 10:07 is taken.
  const down = observed({ lastScheduleTime: T0, backups: [backup(0)], now: T0 + 7 * MIN + 30_000 });
  assert.deepEqual(planSchedule(down), { type: 'createBackup', scheduledAt: T0 + 7 * MIN });
  assert.deepEqual(skippedTimes(down, T0 + 7 * MIN, false), { Missed: 6 });
  // The 10:00 backup ran until 10:01:30: 10:01 was a Forbid skip; 10:02 is taken on time.
  const slow = observed({ lastScheduleTime: T0, backups: [backup(0, { completedAt: T0 + MIN + 30_000 })], now: T0 + 2 * MIN + 1000 });
  assert.deepEqual(skippedTimes(slow, T0 + 2 * MIN, false), { Forbid: 1 });
  // Both: 10:01 skipped by Forbid, then the operator was down until 10:05:10.
  const both = observed({ lastScheduleTime: T0, backups: [backup(0, { completedAt: T0 + MIN + 30_000 })], now: T0 + 5 * MIN + 10_000 });
  assert.deepEqual(skippedTimes(both, T0 + 5 * MIN, false), { Forbid: 1, Missed: 3 });
  // The status said Suspended: the times it collapses passed while the schedule was suspended.
  assert.deepEqual(skippedTimes(down, T0 + 7 * MIN, true), { Suspended: 6 });
  // Nothing taken before: times count from the schedule's creation, never before it.
  assert.deepEqual(skippedTimes(observed(), T0, false), {}, 'created at 09:59:30, first time 10:00');
  assert.deepEqual(skippedTimes(observed({ createdAt: T0 + 2 * MIN + 30_000, now: T0 + 6 * MIN + 5000 }), T0 + 6 * MIN, false), { Missed: 3 }, '10:03, 10:04, 10:05');
  // Taken on time: nothing skipped.
  assert.deepEqual(skippedTimes(observed({ lastScheduleTime: T0, backups: [backup(0)], now: T0 + MIN + 1000 }), T0 + MIN, false), {});
  assert.deepEqual(skippedTimes(observed({ schedule: 'nope' }), T0, false), {});
});

test('the status times as metric values, in seconds; a time that does not exist has none', () => {
  assert.deepEqual(scheduleTimes({ lastScheduleTime: '2026-01-01T10:03:00Z', lastSuccessfulTime: '2026-01-01T10:01:20Z', nextScheduleTime: '2026-01-01T10:04:00Z' }), {
    lastScheduleTime: (T0 + 3 * MIN) / 1000,
    lastSuccessfulTime: (T0 + MIN + 20_000) / 1000,
    nextScheduleTime: (T0 + 4 * MIN) / 1000,
  });
  assert.deepEqual(scheduleTimes({}), {});
});

/** The schedule reconciler with its caches, the API server's part of create and status, and the metrics recorded. */
function scheduleReconciler(spec: Partial<EtcdBackupSchedule['spec']> = {}) {
  const schedules = new Store<EtcdBackupSchedule>();
  const backups = new Store<EtcdBackup>();
  const empty = new Store<OpenObject>();
  const key = 'ns/nightly';
  schedules.upsert({
    apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackupSchedule',
    metadata: { name: 'nightly', namespace: 'ns', uid: 's-uid', generation: 1, creationTimestamp: new Date(T0 - 30_000).toISOString() },
    spec: { clusterName: 'c', schedule: '* * * * *', destination: { pvc: { claimName: 'b' } }, ...spec },
  });
  // What the API server holds, which the cache (backups) may not show yet.
  const stored = new Set<string>();
  const client = {
    create(_t: unknown, obj: EtcdBackup): Promise<KubeObject> {
      const k = `${obj.metadata.namespace}/${obj.metadata.name}`;
      if (stored.has(k)) return Promise.reject(new AlreadyExistsError('POST', k, 409, { reason: 'AlreadyExists' }));
      stored.add(k);
      backups.upsert({ ...obj, metadata: { ...obj.metadata, uid: `uid-${obj.metadata.name}` } });
      return Promise.resolve(obj);
    },
    mergePatch(_t: unknown, _k: unknown, patch: { status: Record<string, unknown> }): Promise<KubeObject> {
      const current = schedules.get(key)!;
      schedules.upsert({ ...current, status: applyMergePatch(current.status, patch.status) as EtcdBackupSchedule['status'] });
      return Promise.resolve(current);
    },
  } as unknown as Client;
  const times: [ScheduleLabels, ScheduleTimes][] = [];
  const skipped: [ScheduleLabels, SkipReason, number][] = [];
  const forgotten: ScheduleLabels[] = [];
  let clock = T0;
  const reconcile = etcdBackupScheduleReconciler({
    client, schedules: { store: schedules }, backups: { store: backups }, jobs: { store: empty }, pods: { store: empty },
    events: { record: () => undefined }, agentImage: 'img', now: () => new Date(clock),
    metrics: { times: (l, t) => void times.push([l, t]), skipped: (l, r, n) => void skipped.push([l, r, n]), forget: (l) => void forgotten.push(l) },
  });
  const log = createLogger({ level: 'silent' });
  const run = async (): Promise<void> => {
    await reconcile({ namespace: 'ns', name: 'nightly' }, { signal: new AbortController().signal, log, retries: 0 });
  };
  return { schedules, backups, times, skipped, forgotten, run, at: (ms: number) => void (clock = ms) };
}

test('the schedule reconciler sets the times of each status it reports, counts skipped times once, and forgets a deleted schedule', async () => {
  const t = scheduleReconciler();
  const labels = { namespace: 'ns', schedule: 'nightly', cluster: 'c' };
  t.at(T0 + 5000);
  await t.run();
  assert.deepEqual(t.times.at(-1), [labels, { lastScheduleTime: T0 / 1000, nextScheduleTime: (T0 + MIN) / 1000 }]);
  assert.deepEqual(t.skipped, [], 'the first time is on time');

  // The 10:00 backup succeeds; the operator is then away until 10:04:10.
  const first = t.backups.get(`ns/${scheduledBackupName('nightly', T0)}`)!;
  t.backups.upsert({ ...first, status: { phase: 'Succeeded', completedAt: new Date(T0 + 20_000).toISOString(), key: 'k' } });
  t.at(T0 + 4 * MIN + 10_000);
  await t.run();
  assert.deepEqual(t.skipped, [[labels, 'Missed', 3]]);
  assert.deepEqual(t.times.at(-1), [labels, { lastScheduleTime: (T0 + 4 * MIN) / 1000, lastSuccessfulTime: (T0 + 20_000) / 1000, nextScheduleTime: (T0 + 5 * MIN) / 1000 }]);

  // A stale cache (neither the new backup nor the status write seen yet) decides the same time again:
  // AlreadyExists, and nothing is counted twice.
  t.backups.remove(`ns/${scheduledBackupName('nightly', T0 + 4 * MIN)}`);
  const current = t.schedules.get('ns/nightly')!;
  t.schedules.upsert({ ...current, status: { ...current.status, lastScheduleTime: new Date(T0).toISOString() } });
  await t.run();
  assert.deepEqual(t.skipped, [[labels, 'Missed', 3]]);

  // Suspended: no next time, so no series for it.
  t.schedules.upsert({ ...t.schedules.get('ns/nightly')!, spec: { ...current.spec, suspend: true } });
  await t.run();
  assert.equal(t.times.at(-1)?.[1].nextScheduleTime, undefined);

  // Deleted: its series go, under the labels they were set with.
  t.schedules.remove('ns/nightly');
  await t.run();
  assert.deepEqual(t.forgotten, [labels]);
});

test('a schedule whose clusterName changes forgets the series of the old cluster', async () => {
  const t = scheduleReconciler();
  t.at(T0 + 5000);
  await t.run();
  const current = t.schedules.get('ns/nightly')!;
  t.schedules.upsert({ ...current, spec: { ...current.spec, clusterName: 'd' } });
  await t.run();
  assert.deepEqual(t.forgotten, [{ namespace: 'ns', schedule: 'nightly', cluster: 'c' }]);
  assert.equal(t.times.at(-1)?.[0].cluster, 'd');
});
