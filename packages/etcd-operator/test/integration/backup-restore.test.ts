// Backups and restores on localkube, against a real MinIO (`localkube addon enable s3`), with the data checker:
// a backup taken under load restores into a new cluster with every acknowledged write up to its revision;
// corrupted and truncated snapshots are refused before any member starts; wrong credentials, a missing
// bucket and a cluster without quorum fail with their own reasons. (The store stopped during an upload is in
// backup-storage-outage.test.ts, which holds the s3 addon alone; this file only shares it.)
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator addons/s3 addons/gcs addons/azure
// @timeout 30m: several 3-5 minute backups and restores
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { GetObjectCommand, PutObjectCommand, type S3Client } from '@aws-sdk/client-s3';
import { PersistentVolumeClaims, Pods, Secrets } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import { EtcdClient } from '../../src/etcd/client.ts';
import { EtcdBackups, EtcdClusters } from '../../src/resources.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { BACKUP_CREDENTIALS_LABEL } from '../../src/backup/credentials.ts';
import { enableS3, enableStorage, type S3Addon } from '../support/s3-addon.ts';
import { applyCluster, clientServiceEndpoint, eventually, getCluster, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';

let env: TestEnv;
let ns: string;
let s3: S3Addon;
let hostS3: S3Client;
const NAME = 'src';
const PREFIX = 'e2e';

before(async () => {
  env = await setUpOperator();
  // Restricted, enforced by the API server: every member pod (and restore init container) must pass it.
  ns = await env.namespace('backup', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  s3 = await enableS3(env, [ns]);
  hostS3 = s3.hostClient;
});
after(async () => {
  hostS3?.destroy();
  await env.stop();
});

const destination = (over: Record<string, unknown> = {}): Record<string, unknown> => ({
  s3: { bucket: s3.bucket, prefix: PREFIX, endpoint: s3.endpoint, forcePathStyle: true, credentialsSecret: 's3-credentials', ...over },
});

async function backup(name: string, cluster: string, dest: Record<string, unknown>): Promise<EtcdBackup> {
  await env.client.create(EtcdBackups, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', metadata: { name, namespace: ns }, spec: { clusterName: cluster, destination: dest } });
  return eventually(`EtcdBackup ${name} finished`, async () => {
    const b = await env.client.get(EtcdBackups, { namespace: ns, name });
    return b.status?.phase === 'Succeeded' || b.status?.phase === 'Failed' ? b : undefined;
  }, { timeoutMs: 180_000, intervalMs: 1000 });
}

async function objectBytes(key: string): Promise<Buffer> {
  const got = await hostS3.send(new GetObjectCommand({ Bucket: s3.bucket, Key: key }));
  return Buffer.from(await got.Body!.transformToByteArray());
}

async function deleteClusterAndClaims(name: string): Promise<void> {
  await env.client.delete(EtcdClusters, { namespace: ns, name });
  await eventually(`${name}'s pods gone`, async () => (await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items.length === 0, { timeoutMs: 120_000 });
  for (const pvc of (await env.client.list(PersistentVolumeClaims, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items) {
    await env.client.delete(PersistentVolumeClaims, { namespace: ns, name: pvc.metadata.name! });
  }
  await eventually(`${name}'s claims gone`, async () => (await env.client.list(PersistentVolumeClaims, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items.length === 0, { timeoutMs: 120_000 });
}

let taken: EtcdBackup;

test('a backup taken under load, from a follower, is stored in MinIO with its size, hash and revision', async () => {
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3 });
  const before = await waitAvailable(env.client, ns, NAME, 3);
  const checker = new DataChecker({ endpoints: [await clientServiceEndpoint(env.client, ns, NAME)], ratePerSecond: 30 });
  checker.start();
  try {
    await eventually('writes acknowledged', () => checker.stats().acknowledged >= 100, { timeoutMs: 60_000 });
    taken = await backup('b1', NAME, destination());
    await eventually('more writes after the backup', () => checker.stats().acknowledged >= 200, { timeoutMs: 60_000 });
  } finally {
    await checker.stop();
  }
  const s = taken.status!;
  assert.equal(s.phase, 'Succeeded', JSON.stringify(s.conditions));
  assert.match(s.location ?? '', new RegExp(`^s3://${s3.bucket}/${PREFIX}/${NAME}-\\d{8}T\\d{6}Z-rev${s.revision}\\.db$`));
  assert.match(s.sha256 ?? '', /^[0-9a-f]{64}$/);
  assert.ok((s.revision ?? 0) > 100, `revision ${s.revision}`);
  assert.equal(s.etcdVersion, '3.6.16');
  assert.notEqual(s.member, before.cluster.status?.leader, 'taken from a follower, not the leader');
  const stored = await objectBytes(s.key!);
  assert.equal(stored.length, s.sizeBytes);
  const { createHash } = await import('node:crypto');
  assert.equal(createHash('sha256').update(stored).digest('hex'), s.sha256);
  const events = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=b1', '-o', 'jsonpath={.items[*].reason}']);
  assert.match(events, /BackupStarted/);
  assert.match(events, /BackupSucceeded/);

  // The cluster and its volumes are deleted; a new cluster under the same name comes back from the backup.
  const oldClusterID = before.cluster.status?.clusterID;
  await deleteClusterAndClaims(NAME);
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, bootstrap: { fromBackup: { backupName: 'b1' } } });
  const restored = await waitAvailable(env.client, ns, NAME, 3, 240_000);
  assert.notEqual(restored.cluster.status?.clusterID, oldClusterID, 'a restored cluster has a new cluster ID');
  const report = await checker.verify({ upToRevision: s.revision!, endpoints: [await clientServiceEndpoint(env.client, ns, NAME)], timeoutMs: 60_000 });
  assert.ok(report.acknowledged >= 100, `checked ${report.acknowledged} writes`);
  assert.deepEqual(report.lost, [], 'every write acknowledged up to the backup revision is there');
  assert.deepEqual(report.corrupted, [], 'and unchanged');
  await checker.close();
});

test('corrupted and truncated snapshots are refused before any member starts', async () => {
  const good = await objectBytes(taken.status!.key!);
  const corrupted = Buffer.from(good);
  corrupted[Math.floor(corrupted.length / 2)]! ^= 0xff;
  const truncated = good.subarray(0, Math.floor(good.length * 0.6));
  await hostS3.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}/corrupted.db`, Body: corrupted }));
  await hostS3.send(new PutObjectCommand({ Bucket: s3.bucket, Key: `${PREFIX}/truncated.db`, Body: truncated }));
  // A restore always names a SHA-256 (issue 23): the API server refuses destination and key without one.
  await assert.rejects(
    env.client.create(EtcdClusters, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'unhashed', namespace: ns }, spec: { ...PLAINTEXT, replicas: 1, bootstrap: { fromBackup: { destination: destination(), key: `${PREFIX}/corrupted.db` } } } }),
    /fromBackup with destination and key must set sha256/,
  );
  // With the corrupted bytes' own SHA-256 (it matches), etcd's own trailing hash must catch the corruption; with
  // the backup's, the mismatch catches the truncation.
  const { createHash } = await import('node:crypto');
  const cases = [
    { name: 'corrupted', fromBackup: { destination: destination(), key: `${PREFIX}/corrupted.db`, sha256: createHash('sha256').update(corrupted).digest('hex') } },
    { name: 'truncated', fromBackup: { destination: destination(), key: `${PREFIX}/truncated.db`, sha256: taken.status!.sha256 } },
  ];
  for (const c of cases) await applyCluster(env.client, ns, c.name, { ...PLAINTEXT, replicas: 3, bootstrap: { fromBackup: c.fromBackup } });
  for (const c of cases) {
    const degraded = await eventually(`${c.name} refused`, async () => {
      const s = await getCluster(env.client, ns, c.name);
      return s.cluster.status?.conditions?.find((x) => x.type === 'Degraded' && x.status === 'True' && x.reason === 'SnapshotRefused');
    }, { timeoutMs: 180_000, intervalMs: 1000 });
    assert.match(degraded.message, /no member serves it/);
    const pods = (await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${c.name}` })).items as unknown as { status?: { containerStatuses?: { name: string; state?: { running?: unknown } ; lastState?: { terminated?: unknown } }[] } }[];
    assert.ok(pods.length > 0);
    for (const p of pods) {
      const etcd = p.status?.containerStatuses?.find((x) => x.name === 'etcd');
      assert.ok(!etcd?.state?.running && !etcd?.lastState?.terminated, 'etcd never started on a refused snapshot');
    }
  }
});

test('wrong credentials, a missing bucket and a cluster without quorum fail with their own reasons', async () => {
  await env.client.create(Secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'wrong-credentials', namespace: ns, labels: { [BACKUP_CREDENTIALS_LABEL]: 'true' } }, stringData: { accessKeyId: 'nobody', secretAccessKey: 'not-the-password' } });
  const denied = await backup('denied', NAME, destination({ credentialsSecret: 'wrong-credentials' }));
  const missing = await backup('missing', NAME, destination({ bucket: 'quorum-missing' }));
  const failed = (b: EtcdBackup): { reason: string; message: string } => b.status!.conditions!.find((c) => c.type === 'Failed' && c.status === 'True')!;
  assert.equal(denied.status?.phase, 'Failed');
  assert.equal(failed(denied).reason, 'AccessDenied', failed(denied).message);
  assert.equal(missing.status?.phase, 'Failed');
  assert.equal(failed(missing).reason, 'BucketNotFound', failed(missing).message);
  assert.match(failed(missing).message, /quorum-missing/);

  // Two of three members down and kept down (paused): no quorum, said at once rather than after a timeout.
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { paused: true } });
  const members = (await getCluster(env.client, ns, NAME)).members.map((m) => m.name).slice(0, 2);
  for (const m of members) await env.client.delete(Pods, { namespace: ns, name: m }, { gracePeriodSeconds: 0 });
  await eventually('two member pods gone', async () => (await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${NAME}` })).items.length === 1, { timeoutMs: 60_000 });
  // The positive signal that the survivor has noticed: it reports no leader itself.
  const survivor = (await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${NAME}` })).items[0] as unknown as { status: { podIP: string } };
  const survivorClient = new EtcdClient({ endpoint: `http://${survivor.status.podIP}:2379`, timeoutMs: 2000 });
  await eventually('the survivor knows no leader', async () => (await survivorClient.status().catch(() => undefined))?.leaderId === '0', { timeoutMs: 60_000 });
  survivorClient.close();
  const started = Date.now();
  const noQuorum = await backup('no-quorum', NAME, destination());
  assert.equal(noQuorum.status?.phase, 'Failed');
  assert.equal(failed(noQuorum).reason, 'NoQuorum');
  assert.match(failed(noQuorum).message, /no quorum/);
  assert.ok(Date.now() - started < 60_000, 'not a timeout');
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { paused: false } });
  await waitAvailable(env.client, ns, NAME, 3);
});

test('GCS (fake-gcs-server) and Azure (Azurite): each stores a backup that a new cluster restores from', async () => {
  const gcs = await enableStorage(env, 'gcs', [ns]);
  const azure = await enableStorage(env, 'azure', [ns]);
  await env.client.create(PersistentVolumeClaims, {
    apiVersion: 'v1', kind: 'PersistentVolumeClaim', metadata: { name: 'etcd-backups', namespace: ns },
    spec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '1Gi' } } },
  });
  const destinations: Record<string, Record<string, unknown>> = {
    gcs: { gcs: { bucket: gcs.bucket, prefix: PREFIX, endpoint: gcs.endpoint, credentialsSecret: gcs.secretName } },
    azure: { azure: { container: azure.bucket, prefix: PREFIX, credentialsSecret: azure.secretName } },
  };
  const checker = new DataChecker({ endpoints: [await clientServiceEndpoint(env.client, ns, NAME)], ratePerSecond: 30 });
  checker.start();
  await eventually('writes acknowledged', () => checker.stats().acknowledged >= 50, { timeoutMs: 60_000 });
  await checker.stop();
  for (const [backend, dest] of Object.entries(destinations)) {
    const b = await backup(`to-${backend}`, NAME, dest);
    assert.equal(b.status?.phase, 'Succeeded', `${backend}: ${JSON.stringify(b.status?.conditions)}`);
    const scheme = { gcs: 'gs', azure: 'azure' }[backend];
    assert.match(b.status?.location ?? '', new RegExp(`^${scheme}://`));
    // One member is enough to prove the data: the restore path is the same for every size.
    const restored = `from-${backend}`;
    await applyCluster(env.client, ns, restored, { ...PLAINTEXT, replicas: 1, bootstrap: { fromBackup: { backupName: b.metadata.name } } });
    await waitAvailable(env.client, ns, restored, 1, 240_000);
    const report = await checker.verify({ upToRevision: b.status.revision!, endpoints: [await clientServiceEndpoint(env.client, ns, restored)], timeoutMs: 60_000 });
    assert.ok(report.acknowledged >= 50, `${backend}: checked ${report.acknowledged}`);
    assert.deepEqual(report.lost, [], `${backend}: nothing lost`);
    assert.deepEqual(report.corrupted, [], `${backend}: nothing changed`);
    await env.client.delete(EtcdClusters, { namespace: ns, name: restored });
  }
  await checker.close();
});

test('a PVC backup restores into 3 members: one restores from the claim, the others join it', async () => {
  // The claim made above for this: ReadWriteOnce on node-local storage, so it lives on one node only.
  const checker = new DataChecker({ endpoints: [await clientServiceEndpoint(env.client, ns, NAME)], ratePerSecond: 30 });
  checker.start();
  await eventually('writes acknowledged', () => checker.stats().acknowledged >= 50, { timeoutMs: 60_000 });
  await checker.stop();
  const b = await backup('to-pvc', NAME, { pvc: { claimName: 'etcd-backups', path: PREFIX } });
  assert.equal(b.status?.phase, 'Succeeded', JSON.stringify(b.status?.conditions));
  assert.match(b.status?.location ?? '', /^pvc:\/\/etcd-backups\//);
  await applyCluster(env.client, ns, 'from-pvc', { ...PLAINTEXT, replicas: 3, bootstrap: { fromBackup: { backupName: 'to-pvc' } } });
  const restored = await waitAvailable(env.client, ns, 'from-pvc', 3, 300_000);
  const report = await checker.verify({ upToRevision: b.status.revision!, endpoints: [await clientServiceEndpoint(env.client, ns, 'from-pvc')], timeoutMs: 60_000 });
  assert.ok(report.acknowledged >= 50, `checked ${report.acknowledged}`);
  assert.deepEqual(report.lost, [], 'nothing lost');
  assert.deepEqual(report.corrupted, [], 'nothing changed');
  // Only the first member read the claim; the other two were added to it and got the data from its leader.
  const events = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', 'involvedObject.name=from-pvc', '-o', 'jsonpath={range .items[*]}{.reason}{"\\n"}{end}']);
  assert.match(events, /MemberAdded/);
  assert.equal(restored.members.length, 3);
  await checker.close();
  await env.client.delete(EtcdClusters, { namespace: ns, name: 'from-pvc' });
});
