// Quorum lost for good, on localkube: two of three members' volumes are wiped and their etcd killed, so they
// come back on empty data directories etcd refuses. With policy Manual the operator says so (QuorumLost) and
// changes nothing; with Restore it rebuilds from the newest data: the newest backup, or a survivor that is
// newer than it, and records the data-loss window. The data checker proves what came back.
// The suite's operator, with its settings (a 15 s crash-loop grace): with quorum lost, a crash-looping member is
// never replaced (no quorum survives its removal), so a short grace must change nothing either.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator addons/s3
// @timeout 20m: recovers quorum from a backup after losing it
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Pods } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import { EtcdBackups, EtcdClusters } from '../../src/resources.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { applyCluster, clientServiceEndpoint, type ClusterState, eventually, getCluster, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';
import { enableStorage } from '../support/s3-addon.ts';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';

let env: TestEnv;
let ns: string;
let s3: { endpoint: string; bucket: string; secretName: string };

before(async () => {
  env = await setUpOperator();
  // Restricted, enforced by the API server: every member pod (and restore init container) must pass it.
  ns = await env.namespace('dr', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  s3 = await enableStorage(env, 's3', [ns]);
});
after(async () => {
  await env.stop();
});

interface PodObj {
  metadata: { name: string; uid: string };
}
const podsOf = async (name: string): Promise<PodObj[]> => (await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items as unknown as PodObj[];

/** Wipes the volumes of two followers and kills their etcd: they restart on empty data directories. */
async function loseTwoMembers(state: ClusterState): Promise<string[]> {
  const victims = state.members.filter((m) => !m.leader).map((m) => m.name).slice(0, 2);
  for (const m of victims) await env.kube.wipeVolume(ns, `data-${m}`);
  for (const m of victims) await env.kube.killContainer(ns, m, 'etcd');
  return victims;
}

async function backup(name: string, cluster: string): Promise<EtcdBackup> {
  await env.client.create(EtcdBackups, {
    apiVersion: 'etcd.quorum.dev/v1alpha1',
    kind: 'EtcdBackup',
    metadata: { name, namespace: ns },
    spec: { clusterName: cluster, destination: { s3: { bucket: s3.bucket, prefix: 'dr', endpoint: s3.endpoint, forcePathStyle: true, credentialsSecret: s3.secretName } } },
  });
  const done = await eventually(`EtcdBackup ${name} finished`, async () => {
    const b = await env.client.get(EtcdBackups, { namespace: ns, name });
    return b.status?.phase === 'Succeeded' || b.status?.phase === 'Failed' ? b : undefined;
  }, { timeoutMs: 180_000, intervalMs: 1000 });
  assert.equal(done.status?.phase, 'Succeeded', JSON.stringify(done.status?.conditions));
  return done;
}

async function writeSome(cluster: string, count: number): Promise<DataChecker> {
  const checker = new DataChecker({ endpoints: [await clientServiceEndpoint(env.client, ns, cluster)], ratePerSecond: 40 });
  checker.start();
  await eventually(`${count} writes acknowledged`, () => checker.stats().acknowledged >= count, { timeoutMs: 60_000 });
  await checker.stop();
  return checker;
}

const events = async (name: string): Promise<string> => env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'jsonpath={range .items[*]}{.reason}: {.message}{"\\n"}{end}']);

test('Manual: QuorumLost is set, a Warning says why, and nothing is changed', async () => {
  const name = 'manual';
  await applyCluster(env.client, ns, name, { ...PLAINTEXT, replicas: 3 });
  const state = await waitAvailable(env.client, ns, name, 3);
  const before = new Map((await podsOf(name)).map((p) => [p.metadata.name, p.metadata.uid]));
  const victims = await loseTwoMembers(state);
  const lost = await eventually('QuorumLost', async () => (await getCluster(env.client, ns, name)).cluster.status?.conditions?.find((c) => c.type === 'QuorumLost' && c.status === 'True'), { timeoutMs: 120_000, intervalMs: 1000 });
  assert.equal(lost.reason, 'MajorityDataLost');
  for (const v of victims) assert.match(lost.message, new RegExp(v));
  assert.match(lost.message, /Manual/);
  assert.match(await events(name), /QuorumLost: .*lost their data for good/);
  // The condition is the operator's answer to this very situation: after it, the same pods, no recovery.
  const after = await getCluster(env.client, ns, name);
  assert.equal(after.cluster.status?.recovery, undefined);
  assert.deepEqual(new Map((await podsOf(name)).map((p) => [p.metadata.name, p.metadata.uid])), before, 'no pod was deleted or replaced');
  await env.client.delete(EtcdClusters, { namespace: ns, name });
});

test('Restore with a recent backup: the cluster comes back from it, with the data-loss window in status', async () => {
  const name = 'from-backup';
  await applyCluster(env.client, ns, name, { ...PLAINTEXT, replicas: 3, disasterRecovery: { policy: 'Restore' } });
  const state = await waitAvailable(env.client, ns, name, 3);
  // Writes stop before the backup, so no survivor is newer than it.
  const checker = await writeSome(name, 100);
  const taken = await backup('before-loss', name);
  await loseTwoMembers(state);
  const restored = await eventually('recovered from the backup', async () => {
    const s = await waitAvailable(env.client, ns, name, 3, 300_000);
    return s.cluster.status?.recovery?.completedAt ? s : undefined;
  }, { timeoutMs: 300_000, intervalMs: 2000 });
  const recovery = restored.cluster.status!.recovery!;
  assert.equal(recovery.method, 'Backup');
  assert.equal(recovery.from, 'before-loss');
  assert.equal(recovery.revision, String(taken.status!.revision));
  assert.equal(recovery.dataTime, taken.status!.completedAt);
  assert.equal(recovery.lostMembers.length, 2);
  assert.notEqual(restored.cluster.status?.clusterID, state.cluster.status?.clusterID, 'a new cluster ID');
  const report = await checker.verify({ upToRevision: taken.status!.revision!, timeoutMs: 60_000 });
  assert.ok(report.acknowledged >= 100);
  assert.deepEqual(report.lost, []);
  assert.deepEqual(report.corrupted, []);
  const noted = await events(name);
  assert.match(noted, /RecoveryStarted: .*EtcdBackup before-loss/);
  assert.match(noted, new RegExp(`RecoveryCompleted: .*revision ${taken.status!.revision}`));
  await checker.close();
});

test('Restore with a survivor newer than the backup: the survivor\'s data is kept', async () => {
  const name = 'from-survivor';
  await applyCluster(env.client, ns, name, { ...PLAINTEXT, replicas: 3, disasterRecovery: { policy: 'Restore' } });
  const state = await waitAvailable(env.client, ns, name, 3);
  await backup('older', name);
  // Written after the backup: only the survivor has them.
  const checker = await writeSome(name, 100);
  const survivor = state.members.find((m) => m.leader)!.name;
  await loseTwoMembers(state);
  const recovered = await eventually('recovered from the survivor', async () => {
    const s = await waitAvailable(env.client, ns, name, 3, 300_000);
    return s.cluster.status?.recovery?.completedAt ? s : undefined;
  }, { timeoutMs: 300_000, intervalMs: 2000 });
  const recovery = recovered.cluster.status!.recovery!;
  assert.equal(recovery.method, 'ForceNewCluster', `${JSON.stringify(recovery)}\n${await events(name)}`);
  assert.equal(recovery.from, survivor);
  assert.ok(recovered.members.some((m) => m.name === survivor), 'the survivor is still a member');
  const report = await checker.verify({ timeoutMs: 60_000 });
  assert.ok(report.acknowledged >= 100);
  assert.deepEqual(report.lost, [], 'every acknowledged write, including those after the backup, is there');
  assert.deepEqual(report.corrupted, []);
  const pod = (await env.client.get(Pods, { namespace: ns, name: survivor })) as unknown as { spec: { containers: { name: string; args: string[] }[] } };
  assert.ok(!pod.spec.containers.find((c) => c.name === 'etcd')!.args.includes('--force-new-cluster'), 'restarted without --force-new-cluster once it served');
  await checker.close();
});
