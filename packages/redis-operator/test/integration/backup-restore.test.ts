// A RedisBackup on localkube, against a real MinIO (the s3 addon) and real redis-server: keys written with the
// data checker (acknowledged once WAIT 1 confirms a replica has them) are backed up from the replica, streamed by
// the agent's Job over the replication protocol, hash-verified; a new Redis bootstrapped from that backup has every
// acknowledged key. Bad input is refused by the API server with the field named. Then the operator is installed from
// its manifests (the image already loaded, a Role in the namespace): its admission webhook refuses a RedisBackup whose
// author (impersonated) may create RedisBackups but not get the credentials Secret it names (no confused deputy),
// and a RedisBackupSchedule whose cron does not parse. A RedisBackupSchedule every minute with retention.maxCount 1,
// created once the source Redis is up with one backup of an earlier time (made here as the schedule makes them, so
// that one scheduled time shows retention), runs beside the rest (first the in-process operator, then the installed
// one under its least-privilege Role): by the end its first scheduled backup succeeded and the earlier one was
// pruned (its RDB deleted by a prune Job, then its record).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive redis-operator
// @shared addons/s3
// @timeout 9m: image assembly on a cold cache (the operator's image carries the agent), then two small Redises and a scheduled backup
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, connect, RoleBindings, Roles, Secrets } from '@quorum/runtime';
import { eventually } from '@quorum/localkube/testing';
import { REDIS_BACKUP_CREDENTIALS_LABEL } from '../../src/api/backup.ts';
import { install, uninstall } from '../../src/deploy/install.ts';
import { RedisBackups, RedisBackupSchedules } from '../../src/resources.ts';
import { RedisDataChecker } from '../../src/testing/data-checker.ts';
import { redisReaders, settled, startRedisEnv, type RedisTestEnv } from './support.ts';

let t: RedisTestEnv;
let s3: { bucket: string; endpoint: string; secretName: string };
const started = Date.now();
const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);
// Sentinels play no part in a backup: an operator-decided primary and one replica keep the file short.
const SMALL = { replicas: 1, sentinel: { replicas: 0 } };

before(async () => {
  t = await startRedisEnv({ agentImage: true });
  const addon = await t.env.kube.enableAddon('s3', { namespaces: [t.ns] });
  await t.env.client.mergePatch(Secrets, { namespace: t.ns, name: addon.secretName }, { metadata: { labels: { [REDIS_BACKUP_CREDENTIALS_LABEL]: 'true' } } }, { fieldManager: 'quorum-tests' });
  s3 = { bucket: addon.bucket, endpoint: addon.endpoint, secretName: addon.secretName };
  console.log(`set-up: ${seconds(started)} s`);
});

let installed = false;
after(async () => {
  await t?.stopOperator();
  if (installed) await uninstall(t.env.client, { namespaces: [t.ns] }).catch(() => undefined);
  await t?.env.stop();
});

const destination = (over: Record<string, unknown> = {}): Record<string, unknown> => ({ s3: { bucket: s3.bucket, prefix: 'redis-e2e', endpoint: s3.endpoint, forcePathStyle: true, credentialsSecret: s3.secretName, ...over } });

let scheduleCreated = 0;
/** The backup of an earlier time the schedule's retention must prune once its own first backup succeeded. */
let earlierBackup = '';

/** The schedule, and a backup for the minute before it existed, labelled, annotated and owned as it makes them. */
async function startSchedule(): Promise<void> {
  scheduleCreated = Date.now();
  const schedule = await t.env.client.create(RedisBackupSchedules, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackupSchedule', metadata: { name: 'every-minute', namespace: t.ns }, spec: { redisName: 'src', schedule: '* * * * *', retention: { maxCount: 1 }, destination: destination({ prefix: 'redis-e2e-scheduled' }) } });
  const earlier = Math.floor(scheduleCreated / 60_000) * 60_000 - 60_000;
  earlierBackup = `every-minute-${earlier / 1000}`;
  const owner = { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackupSchedule', name: 'every-minute', uid: schedule.metadata.uid!, controller: true };
  await t.env.client.create(RedisBackups, {
    apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup',
    metadata: { name: earlierBackup, namespace: t.ns, labels: { 'redis.quorum.dev/schedule': 'every-minute' }, annotations: { 'redis.quorum.dev/scheduled-at': new Date(earlier).toISOString() }, ownerReferences: [owner] },
    spec: { redisName: 'src', destination: destination({ prefix: 'redis-e2e-scheduled' }) },
  });
}

function createBackup(name: string, redisName: string, dest: Record<string, unknown>): Promise<unknown> {
  return t.env.client.create(RedisBackups, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup', metadata: { name, namespace: t.ns }, spec: { redisName, destination: dest } });
}

async function settledRedis(name: string, instances: number): Promise<void> {
  const r = redisReaders(t, name);
  await eventually(`${name} settled`, async () => settled(await r.status(), instances, 0, 0), { timeoutMs: 180_000, intervalMs: 500 });
}

test('keys written with the checker are backed up from the replica and restored into a new Redis, every one', async () => {
  const src = redisReaders(t, 'src');
  await src.create(SMALL);
  await settledRedis('src', 2);
  await startSchedule();
  const checker = new RedisDataChecker({ host: await src.serviceIP('src'), port: 6379, password: await src.password(), tls: await src.serviceTLS('src'), writers: 4 });
  checker.start();
  await eventually('keys acknowledged', () => checker.acknowledged >= 500, { timeoutMs: 60_000, intervalMs: 100 });
  await checker.stop();

  const backupStart = Date.now();
  await createBackup('b1', 'src', destination());
  const status = await eventually('b1 finished', async () => {
    const s = (await t.env.client.get(RedisBackups, { namespace: t.ns, name: 'b1' })).status;
    return s?.phase === 'Succeeded' || s?.phase === 'Failed' ? s : undefined;
  }, { timeoutMs: 120_000, intervalMs: 500 });
  console.log(`backup: ${seconds(backupStart)} s, ${status.sizeBytes} bytes from ${status.sourceRole} ${status.source}, sha256 ${status.sha256}`);
  assert.equal(status.phase, 'Succeeded', JSON.stringify(status.conditions));
  assert.equal(status.sourceRole, 'replica');
  assert.equal(status.source, 'src-1');
  assert.match(status.sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.match(status.location ?? '', /^s3:\/\/.+\/redis-e2e\/src-\d{8}T\d{6}Z\.rdb$/);

  const restoreStart = Date.now();
  const dst = redisReaders(t, 'dst');
  await dst.create({ ...SMALL, bootstrap: { fromBackup: { backupName: 'b1' } } });
  await settledRedis('dst', 2);
  const restored = await dst.status();
  assert.equal(restored?.bootstrap?.sha256, status.sha256);
  const report = await checker.verify(30_000, { host: await dst.serviceIP('dst'), port: 6379, password: await dst.password(), tls: await dst.serviceTLS('dst') });
  console.log(`restore: ${seconds(restoreStart)} s; ${report.acknowledged} acknowledged keys, ${report.lost.length} missing`);
  assert.ok(report.acknowledged >= 500);
  assert.deepEqual(report.lost, []);
});

test('bad input is refused by the API server with the field named', async () => {
  await assert.rejects(createBackup('plain-http', 'src', destination({ endpoint: 'http://minio.example.com:9000' })), /endpoint must be https:\/\/, or http:\/\/ only to a Service in this cluster/);
  await assert.rejects(createBackup('two', 'src', { ...destination(), pvc: { claimName: 'x' } }), /exactly one of s3, gcs, azure or pvc/);
  await assert.rejects(redisReaders(t, 'aof').create({ ...SMALL, persistence: { rdb: true, aof: true }, bootstrap: { fromBackup: { backupName: 'b1' } } }), /spec\.persistence\.aof must be false with spec\.bootstrap\.fromBackup/);
  await assert.rejects(t.env.client.mergePatch(RedisBackups, { namespace: t.ns, name: 'b1' }, { spec: { redisName: 'dst' } }), /spec is immutable/);
  console.log(`whole file: ${seconds(started)} s`);
});

test('installed from its manifests, the webhook refuses a RedisBackup naming a Secret its author may not get, naming the Secret', async () => {
  const start = Date.now();
  await t.stopOperator();
  installed = true;
  await install(t.env.client, { image: t.operatorImage!, namespaces: [t.ns] });
  console.log(`install → operator ready, webhook CA published: ${seconds(start)} s`);
  // RBAC as the API server decides it: mallory may create RedisBackups, and get no Secret.
  const rbac = 'rbac.authorization.k8s.io';
  const write = { fieldManager: 'quorum-tests' };
  await t.env.client.create(Roles, { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: 'backup-author', namespace: t.ns }, rules: [{ apiGroups: ['redis.quorum.dev'], resources: ['redisbackups'], verbs: ['create', 'get'] }] }, write);
  await t.env.client.create(RoleBindings, { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: 'backup-author', namespace: t.ns }, roleRef: { apiGroup: rbac, kind: 'Role', name: 'backup-author' }, subjects: [{ apiGroup: rbac, kind: 'User', name: 'mallory' }] }, write);
  const admin = await connect({ kubeconfig: t.env.kube.kubeconfig });
  const mallory = new Client({ ...admin, headers: async () => ({ ...(await admin.headers()), 'Impersonate-User': 'mallory' }) });
  // The S3 Secret is labelled for backups: only the access review stands in mallory's way.
  const steal = (dryRun: boolean): Promise<unknown> => mallory.create(RedisBackups, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup', metadata: { name: 'steal', namespace: t.ns }, spec: { redisName: 'src', destination: destination() } }, { dryRun });
  const refusal = new RegExp(`spec\\.destination\\.s3\\.credentialsSecret "${s3.secretName}": mallory may not get the Secret ${s3.secretName} in namespace ${t.ns}.*a pod of the operator would mount it with the operator's identity`);
  try {
    // Until the API server reaches the webhook (its endpoints, kube-proxy), it fails open: dry runs make nothing meanwhile.
    await eventually('the webhook refuses mallory', () => steal(true).then(() => false, (err: Error) => refusal.test(err.message) || Promise.reject(err)), { timeoutMs: 30_000, intervalMs: 500 });
    await assert.rejects(steal(false), (err: Error) => (assert.match(err.message, refusal), true));
    assert.equal(await t.env.client.find(RedisBackups, { namespace: t.ns, name: 'steal' }), undefined, 'nothing is created');
    // An admin who may get every Secret passes the webhook (server-side dry run: admission in full, nothing made).
    await t.env.client.create(RedisBackups, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackup', metadata: { name: 'own', namespace: t.ns }, spec: { redisName: 'src', destination: destination() } }, { dryRun: true });
    // A schedule that never fires is refused by the webhook with the parser's words.
    const never = { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackupSchedule', metadata: { name: 'never', namespace: t.ns }, spec: { redisName: 'src', schedule: '0 0 30 2 *', destination: destination() } };
    await assert.rejects(t.env.client.create(RedisBackupSchedules, never, { dryRun: true }), /spec\.schedule "0 0 30 2 \*" is not a valid cron expression/);
  } finally {
    mallory.close();
  }
  console.log(`install and webhook check: ${seconds(start)} s`);
});

test('a schedule every minute with maxCount 1 makes its backup at the next minute and prunes the earlier one, RDB and record', async () => {
  const start = Date.now();
  const ofSchedule = async () => (await t.env.client.list(RedisBackups, { namespace: t.ns, labelSelector: 'redis.quorum.dev/schedule=every-minute' })).items;
  // The first scheduled time after its creation, the backup a few seconds, then the prune Job and the record's deletion.
  const status = await eventually('a scheduled backup succeeded and the earlier one was pruned', async () => {
    const s = (await t.env.client.get(RedisBackupSchedules, { namespace: t.ns, name: 'every-minute' })).status;
    const backups = await ofSchedule();
    const names = backups.map((b) => b.metadata.name);
    const succeeded = backups.filter((b) => b.status?.phase === 'Succeeded');
    return !names.includes(earlierBackup) && succeeded.length === 1 && backups.length === 1 && s?.lastSuccessfulTime && s.active === undefined ? s : undefined;
  }, { timeoutMs: 180_000, intervalMs: 1000 });
  assert.equal(status.conditions?.find((c) => c.type === 'Ready')?.status, 'True');
  assert.notEqual(status.conditions?.find((c) => c.type === 'RetentionFailing')?.status, 'True', JSON.stringify(status.conditions));
  assert.notEqual(status.conditions?.find((c) => c.type === 'BackupsFailing')?.status, 'True', JSON.stringify(status.conditions));
  console.log(`schedule: waited ${seconds(start)} s here (${seconds(scheduleCreated)} s since it was created); last scheduled ${status.lastScheduleTime}`);
});
