// The operator killed right after every etcd or Kubernetes write it makes, through a scale-up and a
// scale-down: each "process" is a fresh operator (empty caches, no memory) acting with only the operator's
// generated RBAC, stopped by a failpoint the moment its write returns. It must converge with no duplicate,
// stuck-learner or orphan member. The same holds on the backup and restore paths: one Job and one stored
// object per backup, and a restored cluster whose every member restored the same snapshot.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive operator
// @shared addons/s3
// @timeout 60m: seven crash runs, each bounded at 10 minutes
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { ListObjectsV2Command } from '@aws-sdk/client-s3';
import { Client, Pods, createLogger } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { createOperator } from '../../src/operator/operator.ts';
import { configFromEnv } from '../../src/operator/config.ts';
import { BACKUP_LABEL } from '../../src/backup/job.ts';
import { EtcdClient } from '../../src/etcd/client.ts';
import { EtcdBackups, EtcdClusters, EtcdRestores, Jobs } from '../../src/resources.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { enableS3, type S3Addon } from '../support/s3-addon.ts';
import { NAME as OPERATOR } from '../../src/deploy/manifests.ts';
import { waitForWebhooks } from '../../src/deploy/install.ts';
import { applyCluster, clientServiceEndpoint, etcdctl, eventually, installOptions, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';

const quiet = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

let env: TestEnv;
let ns: string;
let operatorClient: Client;
let s3: S3Addon;

class Crash extends Error {}

before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('crash');
  // The deployed operator steps aside (it watches another namespace); the webhooks it serves stay on.
  await env.kube.kubectl(['-n', 'quorum-system', 'set', 'env', `deploy/${OPERATOR}`, 'WATCH_NAMESPACES=quorum-elsewhere']);
  await env.kube.kubectl(['-n', 'quorum-system', 'rollout', 'status', `deploy/${OPERATOR}`, '--timeout=120s']);
  await waitForWebhooks(env.client);
  operatorClient = await env.clientFor('quorum-system', OPERATOR);
  s3 = await enableS3(env, [ns]);
});
after(async () => {
  await env.kube.kubectl(['-n', 'quorum-system', 'set', 'env', `deploy/${OPERATOR}`, 'WATCH_NAMESPACES=']).catch(() => '');
  operatorClient?.close();
  s3?.hostClient.destroy();
  await env.stop();
});

/** Runs operator "processes" one after another until `done` holds; each dies right after its first write. */
async function runCrashingOperators(done: () => Promise<boolean>, writes: string[]): Promise<number> {
  let lives = 0;
  const deadline = Date.now() + 600_000;
  while (!(await done())) {
    assert.ok(Date.now() < deadline, `not converged after ${lives} operator lives; writes: ${writes.join(', ')}`);
    lives++;
    const stop = new AbortController();
    // Backup Jobs and restore init containers run the operator image the test built (there is no registry).
    const config = { ...configFromEnv({}), agentImage: installOptions().image, watchNamespaces: [ns], leaderElection: false, webhooks: false, probePort: 0, crashLoopGraceMs: 15_000 };
    const manager = await createOperator({
      config,
      logger: quiet,
      manager: { client: operatorClient, gracefulShutdownMs: 1000 },
      afterWrite: (what) => {
        writes.push(what);
        stop.abort();
        throw new Crash(`failpoint after ${what}`);
      },
    });
    const running = manager.start(stop.signal).catch(() => undefined);
    // A life ends at its first write, or after a while with nothing to write (converging needs no write).
    await Promise.race([new Promise((r) => stop.signal.addEventListener('abort', r, { once: true })), new Promise((r) => setTimeout(r, 8000))]);
    stop.abort();
    await running;
  }
  return lives;
}

async function converged(replicas: number, name = 'crashy'): Promise<boolean> {
  try {
    await waitAvailable(env.client, ns, name, replicas, 1);
  } catch {
    return false;
  }
  return true;
}

async function assertClean(replicas: number, name = 'crashy'): Promise<void> {
  const state = await waitAvailable(env.client, ns, name, replicas, 60_000);
  const endpoint = await clientServiceEndpoint(env.client, ns, name);
  const listed = JSON.parse(await etcdctl(endpoint, 'member', 'list', '-w', 'json')) as { members: { name: string; isLearner?: boolean; peerURLs: string[] }[] };
  assert.equal(listed.members.length, replicas, 'no duplicate or leftover members');
  assert.ok(listed.members.every((m) => !m.isLearner && m.name), 'no learner stuck, no member that never started');
  assert.deepEqual(new Set(listed.members.map((m) => m.peerURLs[0])).size, replicas);
  const pods = (await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items.filter((p) => !p.metadata.deletionTimestamp);
  assert.deepEqual(pods.map((p) => p.metadata.name).sort(), listed.members.map((m) => m.name).sort(), 'a pod for every member and no orphan pod');
  assert.deepEqual(state.members.map((m) => m.name).sort(), listed.members.map((m) => m.name).sort());
}

test('killed after every write, the operator still creates the cluster and scales it 3 → 5 → 3', async () => {
  const writes: string[] = [];
  await applyCluster(env.client, ns, 'crashy', { ...PLAINTEXT, replicas: 3 });
  const created = await runCrashingOperators(() => converged(3), writes);
  await assertClean(3);
  for (const n of [5, 3]) {
    await env.client.mergePatch(EtcdClusters, { namespace: ns, name: 'crashy' }, { spec: { replicas: n } });
    await runCrashingOperators(() => converged(n), writes);
    await assertClean(n);
  }
  process.stderr.write(`operator died ${writes.length} times (${created} lives to create); after: ${writes.join(' | ')}\n`);
  for (const kind of ['etcd member add', 'etcd member promote', 'etcd member remove', 'create pod', 'create pvc', 'delete pod']) {
    assert.ok(writes.some((w) => w.startsWith(kind)), `a crash right after "${kind}" was exercised`);
  }
});

test('killed after every write of the backup and restore paths: one Job and one object per backup, and a whole restored cluster', async () => {
  const writes: string[] = [];
  // The cluster the test above left at 3 members (made again here when this test runs alone).
  if (!(await env.client.find(EtcdClusters, { namespace: ns, name: 'crashy' }))) await applyCluster(env.client, ns, 'crashy', { ...PLAINTEXT, replicas: 3 });
  await runCrashingOperators(() => converged(3), writes);
  const checker = new DataChecker({ endpoints: [await clientServiceEndpoint(env.client, ns, 'crashy')], ratePerSecond: 30 });
  checker.start();
  await eventually('writes acknowledged', () => checker.stats().acknowledged >= 100, { timeoutMs: 60_000 });
  await checker.stop();

  await env.client.create(EtcdBackups, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdBackup', metadata: { name: 'crashy-backup', namespace: ns }, spec: { clusterName: 'crashy', destination: s3.destination(ns) } });
  const finished = async (): Promise<boolean> => ['Succeeded', 'Failed'].includes((await env.client.get(EtcdBackups, { namespace: ns, name: 'crashy-backup' })).status?.phase ?? '');
  const backupLives = await runCrashingOperators(finished, writes);
  const backup = await env.client.get(EtcdBackups, { namespace: ns, name: 'crashy-backup' });
  const jobs = (await env.client.list(Jobs, { namespace: ns, labelSelector: `${BACKUP_LABEL}=crashy-backup` })).items;
  assert.ok(jobs.length <= 1, `one Job per backup, not ${jobs.map((j) => j.metadata.name).join(', ')}`);
  const stored = ((await s3.hostClient.send(new ListObjectsV2Command({ Bucket: s3.bucket, Prefix: `${ns}/` }))).Contents ?? []).map((o) => ({ key: o.Key, size: o.Size }));
  // Killed at any point, a backup either completes or is marked Failed with a reason; it never uploads twice.
  assert.equal(backup.status?.phase, 'Succeeded', `the backup completed after ${backupLives} operator lives: ${JSON.stringify(backup.status?.conditions)}`);
  assert.deepEqual(stored, [{ key: backup.status.key, size: backup.status.sizeBytes }], 'exactly one stored object, the one status names');

  await env.client.create(EtcdRestores, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdRestore', metadata: { name: 'crashy-restore', namespace: ns }, spec: { clusterName: 'crashy-restored', backupName: 'crashy-backup', clusterSpec: { ...PLAINTEXT, replicas: 3 } } });
  const restoreDone = async (): Promise<boolean> => ['Succeeded', 'Failed'].includes((await env.client.get(EtcdRestores, { namespace: ns, name: 'crashy-restore' })).status?.phase ?? '');
  const restoreLives = await runCrashingOperators(restoreDone, writes);
  const restore = await env.client.get(EtcdRestores, { namespace: ns, name: 'crashy-restore' });
  assert.equal(restore.status?.phase, 'Succeeded', `after ${restoreLives} operator lives: ${JSON.stringify(restore.status?.conditions)}`);
  // Succeeded means Available, which a quorum already is; the last member may still be catching up.
  await runCrashingOperators(() => converged(3, 'crashy-restored'), writes);
  await assertClean(3, 'crashy-restored');
  // Never half-restored: every member is in the new cluster (one cluster ID, not the source's), and the data
  // up to the backup's revision is all there.
  const restored = await env.client.get(EtcdClusters, { namespace: ns, name: 'crashy-restored' });
  const source = await env.client.get(EtcdClusters, { namespace: ns, name: 'crashy' });
  const podIPs = ((await env.client.list(Pods, { namespace: ns, labelSelector: 'app.kubernetes.io/instance=crashy-restored' })).items as unknown as { status: { podIP: string } }[]).map((p) => p.status.podIP);
  const clusterIDs = new Set<string>();
  for (const ip of podIPs) {
    const member = new EtcdClient({ endpoint: `http://${ip}:2379`, timeoutMs: 5000 });
    try {
      clusterIDs.add(BigInt((await member.status()).clusterId).toString(16));
    } finally {
      member.close();
    }
  }
  assert.deepEqual([...clusterIDs], [restored.status?.clusterID], 'every member answers for the restored cluster');
  assert.notEqual(restored.status?.clusterID, source.status?.clusterID, 'a new cluster ID');
  const report = await checker.verify({ upToRevision: backup.status.revision!, endpoints: [await clientServiceEndpoint(env.client, ns, 'crashy-restored')], timeoutMs: 60_000 });
  assert.ok(report.acknowledged >= 100, `checked ${report.acknowledged} writes`);
  assert.deepEqual(report.lost, [], 'every write acknowledged up to the backup revision is there');
  assert.deepEqual(report.corrupted, [], 'and unchanged');
  await checker.close();
  process.stderr.write(`backup and restore: operator died ${writes.length} times; after: ${writes.join(' | ')}\n`);
  // The writes of the backup and EtcdRestore controllers themselves. (Which member pod write a life dies
  // after is a race between controllers sharing one process; the first test covers those one by one.)
  for (const kind of ['status Running', 'create Job', 'status Succeeded', 'create EtcdCluster crashy-restored', 'restore status Restoring', 'restore status Succeeded']) {
    assert.ok(writes.some((w) => w.startsWith(kind)), `a crash right after "${kind}" was exercised`);
  }
});
