// The RedisBackupSchedule: its reconciler on the kit's planner with fake caches and client (a RedisBackup per
// scheduled time, controlled by the schedule; retention by a prune Job the expired backup controls, then the record;
// a Job at the prune name that the backup does not control never read nor deleted), the agent's idempotent delete,
// and the webhook's check that the schedule parses.
import assert from 'node:assert/strict';
import { mkdir, mkdtemp, readdir, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { applyMergePatch } from '@quorum/kit';
import { AlreadyExistsError, createLogger, Store, type AdmissionRequest, type Client, type EventInput, type Job, type KubeObject, type Pod } from '@quorum/runtime';
import { runDelete } from '../../src/backup/agent.ts';
import type { RedisBackupObject, RedisBackupScheduleObject } from '../../src/resources.ts';
import { pruneJob, pruneJobName } from '../../src/schedule/prune-job.ts';
import { redisBackupScheduleReconciler } from '../../src/schedule/reconcile.ts';
import { scheduleProblem, validateSchedule } from '../../src/webhooks/schedule.ts';

const T0 = Date.UTC(2026, 0, 1, 10, 0, 0);
const MIN = 60_000;
const destination = { s3: { bucket: 'bk', prefix: 'p', credentialsSecret: 's3' } };
const scheduleOwner = { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackupSchedule', name: 'nightly', uid: 's-uid', controller: true };

/** A Succeeded backup of the schedule for the time T0 + minute. */
function scheduledBackup(minute: number): RedisBackupObject {
  const at = T0 + minute * MIN;
  return {
    apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup',
    metadata: { name: `nightly-${at / 1000}`, namespace: 'team', uid: `b-${minute}`, labels: { 'redis.quorum.dev/schedule': 'nightly' }, annotations: { 'redis.quorum.dev/scheduled-at': new Date(at).toISOString() }, ownerReferences: [scheduleOwner] },
    spec: { redisName: 'shop', destination },
    status: { phase: 'Succeeded', key: `p/shop-${minute}.rdb`, completedAt: new Date(at + 10_000).toISOString() },
  };
}

function world(options: { backups?: RedisBackupObject[]; cachedJob?: Job; apiJob?: Job; now?: number; retention?: RedisBackupScheduleObject['spec']['retention'] } = {}) {
  const schedules = new Store<RedisBackupScheduleObject>();
  const backups = new Store<RedisBackupObject>();
  const jobs = new Store<Job>();
  schedules.upsert({
    apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackupSchedule',
    metadata: { name: 'nightly', namespace: 'team', uid: 's-uid', generation: 1, creationTimestamp: new Date(T0 - 30_000).toISOString() },
    spec: { redisName: 'shop', schedule: '* * * * *', destination, ...(options.retention ? { retention: options.retention } : {}) },
    ...(options.backups?.length ? { status: { lastScheduleTime: new Date(Math.max(...options.backups.map((b) => Date.parse(b.metadata.annotations!['redis.quorum.dev/scheduled-at']!)))).toISOString() } } : {}),
  });
  for (const b of options.backups ?? []) backups.upsert(b);
  if (options.cachedJob) jobs.upsert(options.cachedJob);
  const writes: string[] = [];
  const created: KubeObject[] = [];
  const client = {
    create: (_t: unknown, obj: KubeObject) => {
      writes.push(`create ${obj.kind} ${obj.metadata.name}`);
      created.push(obj);
      return options.apiJob?.metadata.name === obj.metadata.name ? Promise.reject(new AlreadyExistsError('POST', '/jobs', 409, { reason: 'AlreadyExists' })) : Promise.resolve(obj);
    },
    delete: (t: { kind: string }, k: { name: string }) => (writes.push(`delete ${t.kind} ${k.name}`), Promise.resolve()),
    find: (_t: unknown, k: { name: string }) => Promise.resolve(options.apiJob?.metadata.name === k.name ? options.apiJob : undefined),
    mergePatch(_t: unknown, _k: unknown, patch: { status: RedisBackupScheduleObject['status'] }): Promise<KubeObject> {
      const current = schedules.get('team/nightly')!;
      schedules.upsert({ ...current, status: applyMergePatch(current.status, patch.status) as RedisBackupScheduleObject['status'] });
      return Promise.resolve(current);
    },
  } as unknown as Client;
  const events: EventInput[] = [];
  const reconcile = redisBackupScheduleReconciler({
    client, schedules: { store: schedules }, backups: { store: backups }, jobs: { store: jobs }, pods: { store: new Store<Pod>() },
    events: { record: (_o, e) => void events.push(e) }, agentImage: 'op:test', now: () => new Date(options.now ?? T0 + 5000),
  });
  const log = createLogger({ level: 'warn', destination: new Writable({ write: (_c, _e, done) => done() }) });
  const run = () => reconcile({ namespace: 'team', name: 'nightly' }, { signal: new AbortController().signal, log, retries: 0 });
  return { run, writes, created, events, status: () => schedules.get('team/nightly')!.status };
}

test('a RedisBackup per scheduled time, named after it and controlled by the schedule; the status says when', async () => {
  const w = world();
  assert.deepEqual(await w.run(), { requeueAfter: 0 });
  const made = w.created[0] as RedisBackupObject;
  assert.equal(made.metadata.name, `nightly-${T0 / 1000}`);
  assert.deepEqual(made.spec, { redisName: 'shop', destination });
  assert.deepEqual(made.metadata.ownerReferences, [scheduleOwner]);
  assert.equal(made.metadata.annotations?.['redis.quorum.dev/scheduled-at'], new Date(T0).toISOString());
  const status = w.status();
  assert.equal(status?.lastScheduleTime, '2026-01-01T10:00:00Z');
  assert.equal(status?.active, made.metadata.name);
  assert.equal(status?.nextScheduleTime, '2026-01-01T10:01:00Z');
  assert.equal(status?.conditions?.find((c) => c.type === 'Ready')?.message, 'backups of Redis shop at * * * * * (UTC)');
});

test('retention: the expired backup\'s RDB is deleted by a prune Job it controls, then its record', async () => {
  const old = scheduledBackup(0);
  const expired = { backups: [old, scheduledBackup(1)], retention: { maxCount: 1 }, now: T0 + MIN + 30_000 };
  const start = world(expired);
  await start.run();
  assert.deepEqual(start.writes, [`create Job ${pruneJobName(old)}`]);
  const job = start.created[0] as Job;
  assert.deepEqual(job.metadata.ownerReferences?.map((o) => [o.kind, o.uid, o.controller]), [['RedisBackup', 'b-0', true]]);
  const container = job.spec!.template.spec!.containers[0]!;
  assert.deepEqual(container.command?.slice(1), ['/app/packages/redis-operator/dist/backup/agent.js', 'delete']);
  assert.ok(container.args?.includes('--key=p/shop-0.rdb'));

  const done = world({ ...expired, cachedJob: { ...pruneJob(old, { schedule: 'nightly', key: 'p/shop-0.rdb', agentImage: 'op:test' }), status: { conditions: [{ type: 'Complete', status: 'True' }] } } });
  await done.run();
  assert.deepEqual(done.writes, [`delete RedisBackup ${old.metadata.name}`]);
  assert.deepEqual(done.events.map((e) => e.reason), ['BackupPruned']);

  const failedAt = new Date(T0 - 20 * MIN).toISOString();
  const failed = world({ ...expired, cachedJob: { ...pruneJob(old, { schedule: 'nightly', key: 'p/shop-0.rdb', agentImage: 'op:test' }), status: { conditions: [{ type: 'Failed', status: 'True', reason: 'BackoffLimitExceeded', lastTransitionTime: failedAt }] } } });
  await failed.run();
  assert.deepEqual(failed.writes, [`delete Job ${pruneJobName(old)}`], 'its own failed Job is run again');
});

test('a Job at the prune name that the backup does not control, even one only the API shows, is never read nor deleted: JobNameTaken', async () => {
  const old = scheduledBackup(0);
  const foreign = (owners: NonNullable<Job['metadata']['ownerReferences']>): Job => ({ apiVersion: 'batch/v1', kind: 'Job', metadata: { name: pruneJobName(old), namespace: 'team', uid: 'x', creationTimestamp: new Date(T0 + MIN).toISOString(), ownerReferences: owners }, status: { conditions: [{ type: 'Complete', status: 'True' }] } });
  const base = { backups: [old, scheduledBackup(1)], retention: { maxCount: 1 }, now: T0 + MIN + 30_000 };
  const withoutController = { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup', name: old.metadata.name!, uid: 'b-0' };
  for (const jobs of [{ apiJob: foreign([]) }, { cachedJob: foreign([{ apiVersion: 'batch/v1', kind: 'CronJob', name: 'sweep', uid: 'c', controller: true }]) }, { cachedJob: foreign([withoutController]) }]) {
    const w = world({ ...base, ...jobs });
    const result = await w.run();
    assert.deepEqual(w.writes, [], 'its Complete condition is not the prune\'s: the record stays');
    assert.deepEqual(result, { requeueAfter: 15_000 });
    const retention = w.status()?.conditions?.find((c) => c.type === 'RetentionFailing');
    assert.equal(retention?.reason, 'JobNameTaken');
    assert.match(retention?.message ?? '', new RegExp(`Job ${pruneJobName(old)} is in the way of this expired backup's prune Job`));
    assert.deepEqual(w.events.map((e) => [e.type, e.reason]), [['Warning', 'BackupPruneJobNameTaken']]);
  }
});

test("the agent's delete removes the RDB and its .sha256, and what is already gone is a success", async () => {
  const root = await mkdtemp(join(tmpdir(), 'redis-delete-'));
  await mkdir(join(root, 'p'), { recursive: true });
  await writeFile(join(root, 'p', 'shop.rdb'), 'REDIS0011');
  await writeFile(join(root, 'p', 'shop.rdb.sha256'), 'x  shop.rdb\n');
  const args = { destination: { pvc: { claimName: 'backups', prefix: '' } }, key: 'p/shop.rdb', pvcRoot: root };
  assert.deepEqual(await runDelete(args), { ok: true, key: 'p/shop.rdb' });
  assert.deepEqual(await readdir(join(root, 'p')), []);
  assert.deepEqual(await runDelete(args), { ok: true, key: 'p/shop.rdb' }, 'idempotent');
});

test('the webhook refuses a schedule that does not parse (as the operator parses it), then checks the credentials', async () => {
  const schedule = (cron: string): KubeObject => ({ apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackupSchedule', metadata: { name: 'nightly', namespace: 'team' }, spec: { redisName: 'shop', schedule: cron, destination } }) as KubeObject;
  assert.match(scheduleProblem(schedule('61 * * * *'), 'team') ?? '', /spec\.schedule "61 \* \* \* \*" is not a valid cron expression/);
  assert.equal(scheduleProblem(schedule('H 3 * * *'), 'team'), undefined);
  const checked: string[] = [];
  const validate = validateSchedule((req) => (checked.push(req.object!.metadata.name!), Promise.resolve({ allowed: true })));
  const request = (obj: KubeObject): AdmissionRequest<KubeObject> => ({ uid: 'u', operation: 'CREATE', namespace: 'team', object: obj, userInfo: { username: 'alice' } }) as AdmissionRequest<KubeObject>;
  const refused = await validate(request(schedule('0 0 30 2 *')));
  assert.equal(refused.allowed, false);
  assert.deepEqual(checked, [], 'refused before the credentials check');
  assert.deepEqual(await validate(request(schedule('@daily'))), { allowed: true });
  assert.deepEqual(checked, ['nightly']);
});
