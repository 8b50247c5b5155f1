// The RedisBackup reconciler with fake caches and client: an attempt is recorded before its Job exists; a failed
// attempt is voiced (status.lastFailure, a Warning event, the metric) before the next Job; the agent's result
// makes it Succeeded with the size, hash and location; an unlabelled credentials Secret fails it before any Job.
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { applyMergePatch } from '@quorum/kit';
import { createLogger, Store, type Client, type EventInput, type Job, type KubeObject, type Pod } from '@quorum/runtime';
import { redisBackupReconciler } from '../../src/backup/reconcile.ts';
import type { RedisBackupObject, RedisObject } from '../../src/resources.ts';

const SHA = 'c'.repeat(64);

function world(secretLabels: Record<string, string>) {
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
    create: (_t: unknown, obj: Job) => (created.push(obj), jobs.upsert(obj), Promise.resolve(obj)),
    mergePatch(_t: unknown, _k: unknown, patch: { status: RedisBackupObject['status'] }): Promise<KubeObject> {
      const current = backups.get('team/b')!;
      backups.upsert({ ...current, status: applyMergePatch(current.status, patch.status) as RedisBackupObject['status'] });
      return Promise.resolve(current);
    },
  } as unknown as Client;
  const events: EventInput[] = [];
  const failures: string[] = [];
  const reconcile = redisBackupReconciler({
    client, backups: { store: backups }, redises: { store: redises }, jobs: { store: jobs }, pods: { store: pods },
    events: { record: (_o: KubeObject, e: EventInput) => void events.push(e) }, agentImage: 'op:test',
    metrics: { attemptFailed: (l) => void failures.push(l.reason) },
  });
  const log = createLogger({ level: 'warn', destination: new Writable({ write: (_c, _e, done) => done() }) });
  const run = () => reconcile({ namespace: 'team', name: 'b' }, { signal: new AbortController().signal, log, retries: 0 });
  /** The Job's pod ended with the agent's result line as its termination message. */
  const finish = (job: Job, message: string, exitCode: number): void =>
    void pods.upsert({ apiVersion: 'v1', kind: 'Pod', metadata: { name: `${job.metadata.name}-x`, namespace: 'team', labels: { 'batch.kubernetes.io/job-name': job.metadata.name! } }, status: { containerStatuses: [{ name: 'backup', ready: false, restartCount: 0, image: '', imageID: '', state: { terminated: { exitCode, message } } }] } });
  return { backups, created, events, failures, run, finish, status: () => backups.get('team/b')?.status };
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
