// The RedisBackup reconciler with fake caches and client: an attempt is recorded before its Job exists; a failed
// attempt is voiced (status.lastFailure, a Warning event, the metric) before the next Job; the agent's result
// makes it Succeeded with the size, hash and location; an unlabelled credentials Secret fails it before any Job; a
// Job at the attempt's name that the backup does not control is never read or used (JobNameTaken), nor are pods
// that only carry its name. A reconcile on a stale cache is refused by the version it read (Conflict), never
// finishing the backup twice nor putting an older attempt back.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { applyMergePatch } from '@quorum/kit';
import { AlreadyExistsError, ConflictError, createLogger, Store, type Client, type EventInput, type Job, type KubeObject, type Pod } from '@quorum/runtime';
import { JOB_NAME_TAKEN_BOUND_MS } from '@quorum/kit';
import { backupJobName } from '../../src/backup/job.ts';
import { redisBackupReconciler } from '../../src/backup/reconcile.ts';
import type { RedisBackupObject, RedisObject } from '../../src/resources.ts';

const SHA = 'c'.repeat(64);

/**
 * `stored`, when given, is the API server's copy of the backups, apart from the reconciler's cache (`backups`): a
 * test makes the cache stale by giving the two different versions.
 */
function world(secretLabels: Record<string, string>, options: { inTheApi?: Job; clock?: { now: number }; stored?: Store<RedisBackupObject> } = {}) {
  const backups = new Store<RedisBackupObject>();
  const redises = new Store<RedisObject>();
  const jobs = new Store<Job>();
  const pods = new Store<Pod>();
  backups.upsert({ apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup', metadata: { name: 'b', namespace: 'team', uid: 'b-uid', generation: 1 }, spec: { redisName: 'shop', destination: { s3: { bucket: 'bk', prefix: '', credentialsSecret: 's3' } } } });
  redises.upsert({
    apiVersion: 'redis.quorum.dev/v1alpha1',
    kind: 'Redis',
    metadata: { name: 'shop', namespace: 'team' },
    spec: { replicas: 1 },
    status: { instances: [{ name: 'shop-0', role: 'primary', ready: true }, { name: 'shop-1', role: 'replica', ready: true, linkStatus: 'up', lagBytes: 0 }] },
  });
  const created: Job[] = [];
  const client = {
    request: () => Promise.resolve({ kind: 'PartialObjectMetadata', metadata: { name: 's3', labels: secretLabels } }),
    create: (_t: unknown, obj: Job) => {
      if (options.inTheApi?.metadata.name === obj.metadata.name) return Promise.reject(new AlreadyExistsError('POST', '/jobs', 409, { reason: 'AlreadyExists', message: 'exists' }));
      const made = { ...obj, metadata: { ...obj.metadata, uid: `job-uid-${created.length + 1}` } };
      return (created.push(made), jobs.upsert(made), Promise.resolve(made));
    },
    // A Job without the operator's labels is not in the cache: the reconciler asks the API for it.
    find: (_t: unknown, key: { name: string }) => Promise.resolve(options.inTheApi?.metadata.name === key.name ? options.inTheApi : undefined),
    mergePatch(_t: unknown, _k: unknown, patch: { metadata?: { resourceVersion?: string }; status: RedisBackupObject['status'] }): Promise<KubeObject> {
      const api = options.stored ?? backups;
      const current = api.get('team/b')!;
      // As the API server does: a patch that names a resourceVersion applies only to that version.
      const expected = patch.metadata?.resourceVersion;
      if (expected !== undefined && expected !== current.metadata.resourceVersion) return Promise.reject(new ConflictError('PATCH', 'b', 409, { reason: 'Conflict', message: 'the object has been modified' }));
      const next = { ...current, metadata: { ...current.metadata, resourceVersion: String(Number(current.metadata.resourceVersion ?? '0') + 1) }, status: applyMergePatch(current.status, patch.status) as RedisBackupObject['status'] };
      api.upsert(next);
      return Promise.resolve(next);
    },
  } as unknown as Client;
  const events: EventInput[] = [];
  const failures: string[] = [];
  const reconcile = redisBackupReconciler({
    client, backups: { store: backups }, redises: { store: redises }, jobs: { store: jobs }, pods: { store: pods },
    events: { record: (_o: KubeObject, e: EventInput) => void events.push(e) }, agentImage: 'op:test',
    metrics: { attemptFailed: (l) => void failures.push(l.reason) },
    ...(options.clock ? { now: () => new Date(options.clock!.now) } : {}),
  });
  const log = createLogger({ level: 'warn', destination: new Writable({ write: (_c, _e, done) => done() }) });
  const run = () => reconcile({ namespace: 'team', name: 'b' }, { signal: new AbortController().signal, log, retries: 0 });
  /** The Job's pod (controlled by it, unless `controlled` is false) ended with the agent's result line as its termination message. */
  const finish = (job: Job, message: string, exitCode: number, controlled = true): void => {
    const owner = controlled ? { ownerReferences: [{ apiVersion: 'batch/v1', kind: 'Job', name: job.metadata.name!, uid: job.metadata.uid!, controller: true }] } : {};
    pods.upsert({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${job.metadata.name}-x`, namespace: 'team', labels: { 'batch.kubernetes.io/job-name': job.metadata.name! }, ...owner }, status: { containerStatuses: [{ name: 'backup', ready: false, restartCount: 0, image: '', imageID: '', state: { terminated: { exitCode, message } } }] } });
  };
  return { backups, jobs, created, events, failures, run, finish, status: () => backups.get('team/b')?.status };
}

test('attempt 1 fails and is voiced, attempt 2 stores the RDB: Succeeded with its size, hash and location, from the replica', async () => {
  const w = world({ 'redis.quorum.dev/backup-credentials': 'true' });
  await w.run();
  assert.equal(w.status()?.phase, 'Running');
  assert.equal(w.status()?.attempts, 1);
  assert.equal(w.status()?.source, 'shop-1');
  assert.equal(w.status()?.sourceRole, 'replica');
  assert.equal(w.created.length, 1);
  w.finish(w.created[0]!, '{"ok":false,"reason":"SourceRefused","message":"SYNC refused: NOMASTERLINK"}', 1);
  await w.run();
  assert.equal(w.status()?.attempts, 2);
  assert.deepEqual({ ...w.status()?.lastFailure, at: undefined }, { attempt: 1, reason: 'SourceRefused', message: 'attempt 1 of 3: SYNC refused: NOMASTERLINK', at: undefined });
  assert.deepEqual(w.failures, ['SourceRefused']);
  assert.ok(w.events.some((e) => e.type === 'Warning' && e.reason === 'BackupAttemptFailed' && /NOMASTERLINK/.test(e.note ?? '')));
  assert.equal(w.created.length, 2);
  assert.notEqual(w.created[1]!.metadata.name, w.created[0]!.metadata.name);
  w.finish(w.created[1]!, `{"ok":true,"key":"shop-x.rdb","location":"s3://bk/shop-x.rdb","sizeBytes":1234,"sha256":"${SHA}","serverVersion":"7.0.15"}`, 0);
  await w.run();
  const s = w.status();
  assert.equal(s?.phase, 'Succeeded');
  assert.deepEqual([s?.sizeBytes, s?.sha256, s?.location, s?.serverVersion], [1234, SHA, 's3://bk/shop-x.rdb', '7.0.15']);
  assert.equal(s?.conditions?.find((c) => c.type === 'Complete')?.status, 'True');
  await w.run();
  assert.equal(w.created.length, 2, 'a finished backup makes nothing more');
});

test('an unlabelled credentials Secret fails the backup with the reason and a Warning event, and no Job is made', async () => {
  const w = world({ app: 'db' });
  await w.run();
  assert.equal(w.status()?.phase, 'Failed');
  const failed = w.status()?.conditions?.find((c) => c.type === 'Failed');
  assert.equal(failed?.reason, 'CredentialsNotLabelled');
  assert.match(failed?.message ?? '', /not labelled redis\.quorum\.dev\/backup-credentials=true/);
  assert.deepEqual(w.events.map((e) => [e.type, e.reason]), [['Warning', 'BackupFailed']]);
  assert.deepEqual(w.created, []);
});

const RESULT = `{"ok":true,"key":"forged.rdb","location":"s3://bk/forged.rdb","sizeBytes":1,"sha256":"${SHA}","serverVersion":"7.0.15"}`;
const LABELLED = { 'redis.quorum.dev/backup-credentials': 'true' };
/** A Job at the name of attempt `attempt` of backup b, controlled by `controller` (or by nothing). */
const squatter = (attempt: number, controller?: { kind: string; name: string; uid: string }): Job => ({
  apiVersion: 'batch/v1',
  kind: 'Job',
  metadata: { name: backupJobName({ metadata: { name: 'b', uid: 'b-uid' } }, attempt), namespace: 'team', uid: 'squat-uid', creationTimestamp: '2026-11-28T00:00:00Z', ...(controller ? { ownerReferences: [{ apiVersion: 'redis.quorum.dev/v1alpha1', ...controller, controller: true }] } : {}) },
});

test('a Job at the attempt\'s name that this backup does not control is never read or used: JobNameTaken names it, then fails past its bound', async () => {
  for (const foreign of [squatter(1), squatter(1, { kind: 'RedisBackup', name: 'other', uid: 'other-uid' })]) {
    const clock = { now: Date.parse('2026-11-28T01:00:00Z') };
    const w = world(LABELLED, { clock });
    await w.run(); // attempt 1 recorded, its Job made
    const own = w.created[0]!;
    // Replaced by someone else's Job of that name (the cache sees it), whose pod claims a result.
    assert.equal(own.metadata.name, foreign.metadata.name);
    w.jobs.upsert(foreign);
    w.finish(foreign, RESULT, 0);
    await w.run();
    const complete = w.status()?.conditions?.find((c) => c.type === 'Complete');
    assert.equal(complete?.reason, 'JobNameTaken');
    assert.match(complete?.message ?? '', new RegExp(`Job ${foreign.metadata.name} is in the way of this backup's Job: ${foreign.metadata.ownerReferences ? 'it is controlled by RedisBackup other' : 'it has no controller'}`));
    assert.equal(w.status()?.phase, 'Running', 'its pod\'s result is not read');
    assert.ok(w.events.some((e) => e.type === 'Warning' && e.reason === 'BackupJobNameTaken'));
    assert.equal(w.created.length, 1, 'no Job is made over it');
    clock.now += JOB_NAME_TAKEN_BOUND_MS;
    await w.run();
    assert.equal(w.status()?.phase, 'Failed');
    assert.equal(w.status()?.conditions?.find((c) => c.type === 'Failed')?.reason, 'JobNameTaken');
    assert.equal(w.created.length, 1);
  }
});

test('a foreign Job without the operator\'s labels (not in the cache) is found through the API; a pod that only carries the Job\'s name is not read', async () => {
  const w = world(LABELLED, { inTheApi: squatter(2) });
  await w.run();
  const own = w.created[0]!;
  // A pod labelled with the Job's name but not controlled by it: not the attempt's result.
  w.finish(own, RESULT, 0, false);
  await w.run();
  assert.equal(w.status()?.phase, 'Running');
  assert.equal(w.status()?.attempts, 1);
  // Attempt 1 fails; attempt 2's name is held by an unlabelled Job the cache does not hold.
  w.finish(own, '{"ok":false,"reason":"SourceRefused","message":"NOMASTERLINK"}', 1);
  await w.run();
  assert.equal(w.status()?.attempts, 2);
  await w.run();
  assert.equal(w.status()?.conditions?.find((c) => c.type === 'Complete')?.reason, 'JobNameTaken');
  assert.equal(w.created.length, 1, 'nothing is made over the foreign Job');
});

test('a finished backup is finished once: a reconcile on a stale cache (still Running) is refused by the version and leaves the reported status as it is', async () => {
  const stored = new Store<RedisBackupObject>();
  const w = world(LABELLED, { stored });
  const running = w.backups.get('team/b')!;
  stored.upsert(running);
  await w.run(); // attempt 1 recorded (in the API), its Job made
  const recorded = stored.get('team/b')!;
  w.backups.upsert(recorded);
  w.finish(w.created[0]!, `{"ok":true,"key":"shop-x.rdb","location":"s3://bk/shop-x.rdb","sizeBytes":1234,"sha256":"${SHA}","serverVersion":"7.0.15"}`, 0);
  await w.run(); // Succeeded in the API; the cache is not told
  const finished = stored.get('team/b')!;
  assert.equal(finished.status?.phase, 'Succeeded');
  // The cache still holds the Running version: the Job's result would finish it again, with another completedAt.
  assert.equal(w.backups.get('team/b')?.status?.phase, 'Running');
  await assert.rejects(w.run(), ConflictError);
  assert.deepEqual(stored.get('team/b'), finished);
});

test('a reconcile on a stale cache does not put an older attempt back: the next attempt, once recorded, is not recorded again', async () => {
  const stored = new Store<RedisBackupObject>();
  const w = world(LABELLED, { stored });
  stored.upsert(w.backups.get('team/b')!);
  await w.run();
  w.backups.upsert(stored.get('team/b')!);
  w.finish(w.created[0]!, '{"ok":false,"reason":"SourceRefused","message":"NOMASTERLINK"}', 1);
  await w.run(); // attempt 2 recorded in the API with attempt 1's failure; the cache still shows attempt 1
  const second = stored.get('team/b')!;
  assert.equal(second.status?.attempts, 2);
  await assert.rejects(w.run(), ConflictError);
  assert.deepEqual(stored.get('team/b'), second, 'the failure is recorded once, with its first time');
  assert.deepEqual(w.failures, ['SourceRefused'], 'and counted once');
});
