// The kit's backup-schedule reconciler, on a backup kind of its own (ToyBackup) with in-memory caches and client:
// a backup per scheduled time, made by the kind and controlled by the schedule; a time taken twice (a stale cache)
// meets AlreadyExists and is neither announced nor counted again; only backups the schedule controls are its own
// (pruned by a Job the backup controls, asked of the API through the kind when the cache lacks it, a foreign Job
// never deleted); a failed backup is announced once; a schedule's series go with it and with its old labels.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { AlreadyExistsError, createLogger, isControlledBy, resource, Store, type Client, type EventInput, type Job, type KubeObject, type Pod } from '@quorum/runtime';
import { applyMergePatch } from '../../src/index.ts';
import type { BackupScheduleStatus } from '../../src/backup-schedule.ts';
import { scheduledBackupName } from '../../src/backup-schedule.ts';
import type { ScheduleTimes, SkipReason } from '../../src/backup-schedule-metrics.ts';
import { backupScheduleReconciler, type BackupScheduleKind } from '../../src/backup-schedule-reconcile.ts';
import { observePruneJob, pruneJobName } from '../../src/prune-job.ts';

type ToySchedule = KubeObject & { spec: { target: string; schedule: string; suspend?: boolean; retention?: { maxCount?: number } }; status?: BackupScheduleStatus };
type ToyBackup = KubeObject & { spec: { target: string }; status?: { phase?: 'Pending' | 'Running' | 'Succeeded' | 'Failed'; completedAt?: string; key?: string; conditions?: NonNullable<BackupScheduleStatus['conditions']> } };
type Labels = { namespace: string; schedule: string; target: string };

const API = 'toy.quorum.dev/v1';
const T0 = Date.UTC(2026, 0, 1, 10, 0, 0);
const MIN = 60_000;

const TOY: BackupScheduleKind<ToySchedule, ToyBackup, Labels> = {
  schedules: resource<ToySchedule>(API, 'ToySchedule', 'toyschedules', true),
  backups: resource<ToyBackup>(API, 'ToyBackup', 'toybackups', true),
  backupKind: 'ToyBackup',
  scheduleLabel: 'toy.quorum.dev/schedule',
  scheduledAtAnnotation: 'toy.quorum.dev/scheduled-at',
  fieldManager: 'toy',
  storedNoun: 'toy',
  target: (s) => `toy ${s.spec.target}`,
  labels: (s) => ({ namespace: s.metadata.namespace ?? '', schedule: s.metadata.name ?? '', target: s.spec.target }),
  backup: (s, metadata) => ({ apiVersion: API, kind: 'ToyBackup', metadata, spec: { target: s.spec.target } }),
  pruneJobName: (b) => pruneJobName(b),
  pruneJob: (b, o) => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: pruneJobName(b), namespace: b.metadata.namespace!, labels: { key: o.key }, ownerReferences: [{ apiVersion: API, kind: 'ToyBackup', name: b.metadata.name!, uid: b.metadata.uid!, controller: true }] } }),
  isOwnPruneJob: (job, b) => isControlledBy(job, { kind: 'ToyBackup', metadata: b.metadata }),
  podsOfPruneJob: (job, pods) => pods.filter((p) => isControlledBy(p, job)),
  observePruneJob: (job, pods) => observePruneJob(job, pods, () => undefined),
  findJob: (_client, key) => Promise.resolve(apiOnlyJobs.get(key.name)),
};
/** Jobs only the API holds (without the operator's labels, so not in the cache): what TOY.findJob answers. */
const apiOnlyJobs = new Map<string, Job>();

const owner = { apiVersion: API, kind: 'ToySchedule', name: 'nightly', uid: 's-uid', controller: true };
/** A backup of the schedule for the time T0 + minute, finished as `phase`. */
function toyBackup(minute: number, phase: 'Succeeded' | 'Failed', controlled = true): ToyBackup {
  const at = T0 + minute * MIN;
  return {
    apiVersion: API, kind: 'ToyBackup',
    metadata: { name: scheduledBackupName('nightly', at), namespace: 'ns', uid: `b-${minute}`, labels: { 'toy.quorum.dev/schedule': 'nightly' }, annotations: { 'toy.quorum.dev/scheduled-at': new Date(at).toISOString() }, ownerReferences: [{ ...owner, controller: controlled }] },
    spec: { target: 'a' },
    status: { phase, completedAt: new Date(at + 10_000).toISOString(), ...(phase === 'Succeeded' ? { key: `k-${minute}` } : { conditions: [{ type: 'Failed', status: 'True', reason: 'StoreDown', message: 'no store', lastTransitionTime: new Date(at).toISOString() }] }) },
  };
}

function world(options: { backups?: ToyBackup[]; retention?: { maxCount?: number } } = {}) {
  apiOnlyJobs.clear();
  const schedules = new Store<ToySchedule>();
  const backups = new Store<ToyBackup>();
  const jobs = new Store<Job>();
  schedules.upsert({ apiVersion: API, kind: 'ToySchedule', metadata: { name: 'nightly', namespace: 'ns', uid: 's-uid', generation: 1, creationTimestamp: new Date(T0 - 30_000).toISOString() }, spec: { target: 'a', schedule: '* * * * *', ...(options.retention ? { retention: options.retention } : {}) } });
  for (const b of options.backups ?? []) backups.upsert(b);
  const inTheApi = new Set((options.backups ?? []).map((b) => b.metadata.name));
  const writes: string[] = [];
  const created: KubeObject[] = [];
  const client = {
    create: (_t: unknown, obj: KubeObject) => {
      if (inTheApi.has(obj.metadata.name)) return Promise.reject(new AlreadyExistsError('POST', obj.metadata.name!, 409, { reason: 'AlreadyExists' }));
      inTheApi.add(obj.metadata.name);
      writes.push(`create ${obj.kind} ${obj.metadata.name}`);
      return (created.push(obj), Promise.resolve(obj));
    },
    delete: (t: { kind: string }, k: { name: string }) => (writes.push(`delete ${t.kind} ${k.name}`), Promise.resolve()),
    mergePatch(_t: unknown, _k: unknown, patch: { status: BackupScheduleStatus }): Promise<KubeObject> {
      const current = schedules.get('ns/nightly')!;
      schedules.upsert({ ...current, status: applyMergePatch(current.status, patch.status) as BackupScheduleStatus });
      return Promise.resolve(current);
    },
  } as unknown as Client;
  const events: EventInput[] = [];
  const times: [Labels, ScheduleTimes][] = [];
  const skipped: [Labels, SkipReason, number][] = [];
  const forgotten: Labels[] = [];
  let clock = T0 + 5000;
  const reconcile = backupScheduleReconciler(TOY, {
    client, schedules: { store: schedules }, backups: { store: backups }, jobs: { store: jobs }, pods: { store: new Store<Pod>() },
    events: { record: (_o, e) => void events.push(e) }, agentImage: 'img', now: () => new Date(clock),
    metrics: { times: (l, t) => void times.push([l, t]), skipped: (l, r, n) => void skipped.push([l, r, n]), forget: (l) => void forgotten.push(l) },
  });
  const log = createLogger({ level: 'warn', destination: new Writable({ write: (_c, _e, done) => done() }) });
  const run = () => reconcile({ namespace: 'ns', name: 'nightly' }, { signal: new AbortController().signal, log, retries: 0 });
  return { schedules, backups, jobs, writes, created, events, times, skipped, forgotten, run, at: (ms: number) => void (clock = ms) };
}

test('a backup per scheduled time, made by the kind, named after the time and controlled by the schedule; the status and the series say when', async () => {
  const w = world();
  assert.deepEqual(await w.run(), { requeueAfter: 0 });
  const made = w.created[0] as ToyBackup;
  assert.deepEqual(made, {
    apiVersion: API, kind: 'ToyBackup', spec: { target: 'a' },
    metadata: { name: `nightly-${T0 / 1000}`, namespace: 'ns', labels: { 'toy.quorum.dev/schedule': 'nightly' }, annotations: { 'toy.quorum.dev/scheduled-at': new Date(T0).toISOString() }, ownerReferences: [owner] },
  });
  assert.deepEqual(w.events.map((e) => [e.reason, e.note]), [['BackupScheduled', `created ToyBackup nightly-${T0 / 1000} for the time ${new Date(T0).toISOString()}`]]);
  const status = w.schedules.get('ns/nightly')!.status!;
  assert.deepEqual([status.lastScheduleTime, status.active, status.nextScheduleTime], ['2026-01-01T10:00:00Z', made.metadata.name, '2026-01-01T10:01:00Z']);
  assert.equal(status.conditions?.find((c) => c.type === 'Ready')?.message, 'backups of toy a at * * * * * (UTC)');
  assert.deepEqual(w.times, [[{ namespace: 'ns', schedule: 'nightly', target: 'a' }, { lastScheduleTime: T0 / 1000, nextScheduleTime: (T0 + MIN) / 1000 }]]);
});

test('a time taken again on a stale cache meets AlreadyExists: not announced, its skipped times not counted twice', async () => {
  const w = world({ backups: [toyBackup(0, 'Succeeded')] });
  await w.run(); // 10:00 is taken (the backup is in the cache)
  w.at(T0 + 3 * MIN + 5000);
  await w.run();
  assert.deepEqual(w.skipped, [[{ namespace: 'ns', schedule: 'nightly', target: 'a' }, 'Missed', 2]]);
  // The cache has seen neither the new backup nor the status: the same time is decided again.
  w.backups.remove(`ns/${scheduledBackupName('nightly', T0 + 3 * MIN)}`);
  const current = w.schedules.get('ns/nightly')!;
  w.schedules.upsert({ ...current, status: { ...current.status, lastScheduleTime: new Date(T0).toISOString() } });
  const announced = w.events.length;
  await w.run();
  assert.equal(w.skipped.length, 1);
  assert.equal(w.events.length, announced);
  assert.equal(w.schedules.get('ns/nightly')!.status?.active, scheduledBackupName('nightly', T0 + 3 * MIN));
});

test('retention: an expired backup the schedule controls is pruned by its own Job, then its record; one it does not control is not its', async () => {
  const at = T0 + 2 * MIN + 30_000;
  // minute 0 is expired (maxCount 1); minute -1 is labelled for the schedule but not controlled by it.
  const w = world({ backups: [toyBackup(0, 'Succeeded'), toyBackup(1, 'Succeeded'), toyBackup(-1, 'Succeeded', false)], retention: { maxCount: 1 } });
  w.schedules.upsert({ ...w.schedules.get('ns/nightly')!, spec: { target: 'a', schedule: '0 0 1 1 *', retention: { maxCount: 1 } } });
  w.at(at);
  await w.run();
  const old = w.backups.get(`ns/${scheduledBackupName('nightly', T0)}`)!;
  assert.deepEqual(w.writes, [`create Job ${pruneJobName(old)}`]);
  w.jobs.upsert({ ...(w.created[0] as Job), status: { conditions: [{ type: 'Complete', status: 'True' }] } });
  await w.run();
  assert.deepEqual(w.writes.slice(1), [`delete ToyBackup ${old.metadata.name}`]);
  assert.deepEqual(w.events.map((e) => [e.reason, e.note]), [['BackupPruned', `deleted expired backup ${old.metadata.name} and its stored toy k-0`]]);
});

test('a Job only the API shows at the prune name, that the backup does not control, is asked for through the kind and never deleted', async () => {
  const w = world({ backups: [toyBackup(0, 'Succeeded'), toyBackup(1, 'Succeeded')], retention: { maxCount: 1 } });
  w.schedules.upsert({ ...w.schedules.get('ns/nightly')!, spec: { target: 'a', schedule: '0 0 1 1 *', retention: { maxCount: 1 } } });
  const old = w.backups.get(`ns/${scheduledBackupName('nightly', T0)}`)!;
  apiOnlyJobs.set(pruneJobName(old), { apiVersion: 'batch/v1', kind: 'Job', metadata: { name: pruneJobName(old), namespace: 'ns', uid: 'x', creationTimestamp: new Date(T0 + MIN).toISOString() }, status: { conditions: [{ type: 'Complete', status: 'True' }] } });
  w.at(T0 + 2 * MIN);
  assert.deepEqual(await w.run(), { requeueAfter: 15_000 });
  assert.deepEqual(w.writes, []);
  const failing = w.schedules.get('ns/nightly')!.status?.conditions?.find((c) => c.type === 'RetentionFailing');
  assert.deepEqual([failing?.status, failing?.reason], ['True', 'JobNameTaken']);
  assert.deepEqual(w.events.map((e) => e.reason), ['BackupPruneJobNameTaken']);
});

test('a failed backup is announced once; a schedule backing up something else, or deleted, forgets its series', async () => {
  const w = world({ backups: [toyBackup(0, 'Failed')] });
  await w.run();
  await w.run();
  assert.deepEqual(w.events.filter((e) => e.reason === 'ScheduledBackupFailed').map((e) => e.note), [`backup nightly-${T0 / 1000} of toy a failed: StoreDown: no store`]);
  const current = w.schedules.get('ns/nightly')!;
  w.schedules.upsert({ ...current, spec: { ...current.spec, target: 'b' } });
  await w.run();
  assert.deepEqual(w.forgotten, [{ namespace: 'ns', schedule: 'nightly', target: 'a' }]);
  w.schedules.remove('ns/nightly');
  await w.run();
  assert.deepEqual(w.forgotten.at(-1), { namespace: 'ns', schedule: 'nightly', target: 'b' });
});
