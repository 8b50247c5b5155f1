import assert from 'node:assert/strict';
import { applyMergePatch } from '@quorum/kit';
import { Writable } from 'node:stream';
import test from 'node:test';
import { createLogger, Store, type Client, type EventInput, type KubeObject } from '@quorum/runtime';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import type { EtcdRestore } from '../../src/api/etcdrestore.ts';
import { restoreSource, withCredentials } from '../../src/cluster/observe.ts';
import { credentialsRefusal } from '../../src/backup/credentials.ts';
import { planRestore, type RestoreObserved } from '../../src/restore/plan.ts';
import { etcdRestoreReconciler, restoredCluster, restoreStatus, RESTORE_LABEL, RESTORE_UID_ANNOTATION } from '../../src/restore/reconcile.ts';

const T0 = Date.parse('2026-01-01T10:00:00Z');
const MIN = 60_000;
const base = (over: Partial<RestoreObserved> = {}): RestoreObserved => ({ phase: undefined, usesBackupName: true, backup: { phase: 'Succeeded' }, createdAt: T0, now: T0 + 5000, backupWaitMs: 60 * MIN, ...over });
const ours = { uid: 'c-uid', createdByThisRestore: true, available: false };

test('the cluster is created only once the named backup has succeeded', () => {
  assert.deepEqual(planRestore(base()), { type: 'createCluster' });
  assert.deepEqual(planRestore(base({ usesBackupName: false, backup: undefined })), { type: 'createCluster' }, 'a destination and key need no EtcdBackup');
  const missing = planRestore(base({ backup: undefined }));
  assert.equal(missing.type === 'wait' && missing.reason, 'BackupNotFound');
  const running = planRestore(base({ backup: { phase: 'Running' } }));
  assert.equal(running.type === 'wait' && running.reason, 'BackupNotReady');
  const failed = planRestore(base({ backup: { phase: 'Failed', failure: 'NoQuorum: no quorum' } }));
  assert.equal(failed.type, 'fail');
  assert.ok(failed.type === 'fail' && failed.reason === 'BackupFailed' && /NoQuorum: no quorum/.test(failed.message));
});

test('a cluster of that name this restore did not create is refused and left alone', () => {
  const a = planRestore(base({ cluster: { ...ours, createdByThisRestore: false } }));
  assert.equal(a.type, 'wait');
  assert.equal(a.type === 'wait' && a.reason, 'ClusterExists');
  // The recorded UID also proves it ours (a label edited away later).
  assert.equal(planRestore(base({ recordedClusterUID: 'c-uid', cluster: { ...ours, createdByThisRestore: false } })).type, 'restoring');
});

test("its own cluster's progress: restoring, then Succeeded when Available, Failed when the snapshot is refused", () => {
  assert.deepEqual(planRestore(base({ cluster: { ...ours, progress: 'bootstrapping c-0' } })), { type: 'restoring', clusterUID: 'c-uid', message: 'bootstrapping c-0' });
  assert.deepEqual(planRestore(base({ cluster: { ...ours, available: true } })), { type: 'succeed', clusterUID: 'c-uid' });
  const refused = planRestore(base({ cluster: { ...ours, snapshotRefused: 'sha256 mismatch' } }));
  assert.deepEqual(refused, { type: 'fail', reason: 'SnapshotRefused', message: 'sha256 mismatch', clusterUID: 'c-uid' });
  // The backup's later fate does not matter once the cluster exists (it was Succeeded when it was made).
  assert.equal(planRestore(base({ backup: undefined, cluster: ours })).type, 'restoring');
});

test('a created cluster deleted before it was Available fails the restore; a finished restore does nothing', () => {
  const a = planRestore(base({ recordedClusterUID: 'c-uid' }));
  assert.equal(a.type === 'fail' && a.reason, 'ClusterDeleted');
  assert.deepEqual(planRestore(base({ phase: 'Succeeded', cluster: ours })), { type: 'done' });
  assert.deepEqual(planRestore(base({ phase: 'Failed' })), { type: 'done' });
});

test('the cluster made: bootstrap.fromBackup from the restore, its cluster spec, its label and UID, no owner', () => {
  const r: EtcdRestore = {
    metadata: { name: 'r1', namespace: 'ns', uid: 'r-uid' },
    spec: { clusterName: 'restored', destination: { s3: { bucket: 'quorum', credentialsSecret: 's' } }, key: 'p/x.db', sha256: 'a'.repeat(64), clusterSpec: { replicas: 5, version: '3.6.16' } },
  };
  const c = restoredCluster(r);
  assert.equal(c.metadata.name, 'restored');
  assert.equal(c.metadata.labels?.[RESTORE_LABEL], 'r1');
  assert.equal(c.metadata.annotations?.[RESTORE_UID_ANNOTATION], 'r-uid');
  assert.equal(c.metadata.ownerReferences, undefined);
  assert.deepEqual(c.spec, { replicas: 5, version: '3.6.16', bootstrap: { fromBackup: { destination: r.spec.destination, key: 'p/x.db', sha256: 'a'.repeat(64) } } });
  assert.deepEqual(restoredCluster({ ...r, spec: { clusterName: 'restored', backupName: 'b' } }).spec, { bootstrap: { fromBackup: { backupName: 'b' } } });
});

test('status: phases and conditions with reasons', () => {
  const now = new Date('2026-01-01T10:00:00Z');
  const ctx = { generation: 1, now, startedNow: false };
  const pending = restoreStatus({}, { type: 'wait', reason: 'BackupNotReady', message: 'm' }, ctx);
  assert.equal(pending.phase, 'Pending');
  assert.equal(pending.conditions?.[0]?.reason, 'BackupNotReady');
  const started = restoreStatus(pending, { type: 'createCluster' }, { ...ctx, startedNow: true });
  assert.equal(started.phase, 'Restoring');
  assert.equal(started.startedAt, '2026-01-01T10:00:00Z');
  const done = restoreStatus(started, { type: 'succeed', clusterUID: 'u' }, ctx);
  assert.equal(done.phase, 'Succeeded');
  assert.equal(done.clusterUID, 'u');
  assert.equal(done.conditions?.find((c) => c.type === 'Complete')?.status, 'True');
  const failed = restoreStatus(started, { type: 'fail', reason: 'SnapshotRefused', message: 'bad' }, ctx);
  assert.equal(failed.phase, 'Failed');
  assert.deepEqual(failed.conditions?.find((c) => c.type === 'Failed'), { type: 'Failed', status: 'True', reason: 'SnapshotRefused', message: 'bad', observedGeneration: 1, lastTransitionTime: '2026-01-01T10:00:00Z' });
});

test('the wait for the backup is bounded: it says for how long and how long it may, and fails past the bound', () => {
  const missing = planRestore(base({ backup: undefined, now: T0 + 59 * MIN }));
  assert.deepEqual(missing, {
    type: 'wait',
    reason: 'BackupNotFound',
    message: 'the EtcdBackup named by spec.backupName does not exist in this namespace (waited 59 min of the 3600 s spec.backupWaitSeconds allows); the cluster is created once it has Succeeded',
    backupWait: { waitedMs: 59 * MIN, boundMs: 60 * MIN },
  });
  assert.deepEqual(planRestore(base({ backup: undefined, now: T0 + 60 * MIN })), {
    type: 'fail',
    reason: 'BackupWaitExceeded',
    message: 'the EtcdBackup named by spec.backupName does not exist in this namespace: gave up after waiting 3600 s (spec.backupWaitSeconds: 3600); no cluster was created',
  });
  const running = planRestore(base({ backup: { phase: 'Running' }, now: T0 + 61 * MIN }));
  assert.ok(running.type === 'fail' && running.reason === 'BackupWaitExceeded' && running.message.startsWith('the EtcdBackup named by spec.backupName is Running: gave up after waiting 3660 s'), JSON.stringify(running));
  // What is not a wait for the backup is not cut short by the bound.
  assert.deepEqual(planRestore(base({ now: T0 + 600 * MIN })), { type: 'createCluster' }, 'a backup that has Succeeded is used');
  const failed = planRestore(base({ backup: { phase: 'Failed' }, now: T0 + 600 * MIN }));
  assert.equal(failed.type === 'fail' && failed.reason, 'BackupFailed', 'a failed backup says so, whenever it is seen');
  assert.equal(planRestore(base({ usesBackupName: false, backup: undefined, now: T0 + 600 * MIN })).type, 'createCluster');
  const refused = planRestore(base({ cluster: { ...ours, createdByThisRestore: false }, now: T0 + 600 * MIN }));
  assert.ok(refused.type === 'wait' && refused.reason === 'ClusterExists' && refused.backupWait === undefined, JSON.stringify(refused));
});

/** The restore reconciler with its caches, the API server's part of create and status, events, warn logs and metrics. */
function restoreReconciler(spec: Partial<EtcdRestore['spec']> = {}) {
  const restores = new Store<EtcdRestore>();
  const clusters = new Store<EtcdCluster>();
  const backups = new Store<EtcdBackup>();
  restores.upsert({
    apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdRestore',
    metadata: { name: 'r1', namespace: 'ns', uid: 'r-uid', generation: 1, creationTimestamp: new Date(T0).toISOString() },
    spec: { clusterName: 'restored', backupName: 'b1', ...spec },
  });
  const client = {
    create: (_t: unknown, obj: KubeObject): Promise<KubeObject> => Promise.resolve(obj),
    mergePatch(_t: unknown, _k: unknown, patch: { status: EtcdRestore['status'] }): Promise<KubeObject> {
      const current = restores.get('ns/r1')!;
      restores.upsert({ ...current, status: applyMergePatch(current.status, patch.status) as EtcdRestore['status'] });
      return Promise.resolve(current);
    },
  } as unknown as Client;
  const events: EventInput[] = [];
  const metrics: string[] = [];
  const warnings: Record<string, unknown>[] = [];
  let clock = T0;
  const reconcile = etcdRestoreReconciler({
    client, restores: { store: restores }, clusters: { store: clusters }, backups: { store: backups },
    events: { record: (_o: KubeObject, e: EventInput) => void events.push(e) },
    now: () => new Date(clock),
    metrics: {
      waiting: (l, w) => void metrics.push(`waiting ${l.namespace}/${l.restore} ${w.reason} ${w.seconds}/${w.boundSeconds}`),
      notWaiting: (l) => void metrics.push(`notWaiting ${l.namespace}/${l.restore}`),
      failed: (l) => void metrics.push(`failed ${l.namespace}/${l.cluster} ${l.reason}`),
    },
  });
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      const line = JSON.parse(chunk.toString('utf8')) as Record<string, unknown>;
      if (line['level'] === 'warn') warnings.push(line);
      done();
    },
  });
  const log = createLogger({ level: 'info', destination });
  const run = async () => reconcile({ namespace: 'ns', name: 'r1' }, { signal: new AbortController().signal, log, retries: 0 });
  return { restores, backups, events, metrics, warnings, run, at: (ms: number) => void (clock = ms), status: () => restores.get('ns/r1')?.status ?? {} };
}

test('a restore waiting for a backup that never appears: condition, Warning event and warn logs after 30 s, a gauge, then Failed at the bound', async () => {
  const t = restoreReconciler({ backupWaitSeconds: 600 });
  t.at(T0 + 5000);
  let result = await t.run();
  const complete = (): { reason: string; message: string } | undefined => t.status().conditions?.find((c) => c.type === 'Complete');
  assert.equal(t.status().phase, 'Pending');
  assert.equal(complete()?.reason, 'BackupNotFound');
  assert.match(complete()?.message ?? '', /waited 0 s of the 600 s spec\.backupWaitSeconds allows/);
  assert.deepEqual(t.metrics, ['waiting ns/r1 BackupNotFound 5/600']);
  assert.equal(t.events.length, 0, 'no Warning before 30 s');
  assert.equal(t.warnings.length, 0);
  assert.deepEqual(result, { requeueAfter: 30_000 });

  t.at(T0 + 40_000);
  await t.run();
  t.at(T0 + 50_000);
  await t.run();
  assert.deepEqual(t.events.map((e) => [e.type, e.reason]), [['Warning', 'RestoreWaiting']], 'one event per wait reason');
  assert.match(t.events[0]?.note ?? '', /does not exist in this namespace \(waited 40 s of the 600 s/);
  assert.equal(t.warnings.length, 1, 'a warn line at most every 30 s');
  assert.deepEqual([t.warnings[0]?.['reason'], t.warnings[0]?.['forSeconds'], t.warnings[0]?.['boundSeconds']], ['BackupNotFound', 40, 600]);

  // The backup appears and runs: another reason, so another event.
  t.backups.upsert({ metadata: { name: 'b1', namespace: 'ns' }, spec: { clusterName: 'c', destination: { pvc: { claimName: 'b' } } }, status: { phase: 'Running' } });
  t.at(T0 + 9 * MIN + 50_000);
  result = await t.run();
  assert.equal(complete()?.reason, 'BackupNotReady');
  assert.deepEqual(t.events.map((e) => e.reason), ['RestoreWaiting', 'RestoreWaiting']);
  assert.equal(t.metrics.at(-1), 'waiting ns/r1 BackupNotReady 590/600');
  assert.deepEqual(result, { requeueAfter: 10_000 }, 'looks again at the bound');

  t.at(T0 + 10 * MIN);
  result = await t.run();
  assert.deepEqual(result, {});
  const s = t.status();
  assert.equal(s.phase, 'Failed');
  const failed = s.conditions?.find((c) => c.type === 'Failed');
  assert.equal(failed?.status, 'True');
  assert.equal(failed?.reason, 'BackupWaitExceeded');
  assert.equal(failed?.message, 'the EtcdBackup named by spec.backupName is Running: gave up after waiting 600 s (spec.backupWaitSeconds: 600); no cluster was created');
  assert.equal(t.events.at(-1)?.reason, 'RestoreFailed');
  assert.match(t.events.at(-1)?.note ?? '', /^BackupWaitExceeded: /);
  assert.deepEqual(t.metrics.slice(-2), ['failed ns/restored BackupWaitExceeded', 'notWaiting ns/r1']);
  assert.equal(t.warnings.at(-1)?.['reason'], 'BackupWaitExceeded');
});

test('without spec.backupWaitSeconds (webhooks and CRD defaults skipped) the bound is an hour', async () => {
  const t = restoreReconciler();
  t.at(T0 + 59 * MIN);
  await t.run();
  assert.equal(t.status().phase, 'Pending');
  assert.equal(t.metrics.at(-1), 'waiting ns/r1 BackupNotFound 3540/3600');
  t.at(T0 + 60 * MIN);
  await t.run();
  assert.equal(t.status().phase, 'Failed');
});

test('no restore without a SHA-256: an inline source without spec.sha256, or a Succeeded backup that recorded none, fails the restore and creates no cluster', async () => {
  const message = (t: ReturnType<typeof restoreReconciler>): string | undefined => t.status().conditions?.find((c) => c.type === 'Failed' && c.status === 'True' && c.reason === 'SnapshotHashMissing')?.message;
  const inline = restoreReconciler({ backupName: undefined, destination: { pvc: { claimName: 'b' } }, key: 'c/snap.db' });
  await inline.run();
  assert.equal(inline.status().phase, 'Failed');
  assert.equal(message(inline), 'the snapshot of spec.destination and spec.key (spec.sha256 is unset) has no SHA-256 to check the snapshot against; no cluster was created');

  const unhashed = restoreReconciler();
  unhashed.backups.upsert({ metadata: { name: 'b1', namespace: 'ns' }, spec: { clusterName: 'c', destination: { pvc: { claimName: 'b' } } }, status: { phase: 'Succeeded', key: 'c/snap.db' } });
  await unhashed.run();
  assert.match(message(unhashed) ?? '', /^EtcdBackup b1 \(it recorded no status\.sha256\) has no SHA-256/);

  // With one, the same restores go ahead.
  const hashed = restoreReconciler({ backupName: undefined, destination: { pvc: { claimName: 'b' } }, key: 'c/snap.db', sha256: 'a'.repeat(64) });
  await hashed.run();
  assert.equal(hashed.status().phase, 'Restoring');
  assert.deepEqual(planRestore(base({ hashMissingFrom: 'X' })), { type: 'fail', reason: 'SnapshotHashMissing', message: 'X has no SHA-256 to check the snapshot against; no cluster was created' });
});

test("a cluster's spec.bootstrap.fromBackup without a SHA-256 is not restored from: SnapshotHashMissing, naming the source", () => {
  const backups = new Store<EtcdBackup>();
  const destination = { pvc: { claimName: 'b' } };
  const inline = restoreSource({ destination, key: 'k.db' }, 'ns', { store: backups });
  assert.ok(!inline.ready && inline.reason === 'SnapshotHashMissing' && /without sha256/.test(inline.why), JSON.stringify(inline));
  assert.deepEqual(restoreSource({ destination, key: 'k.db', sha256: 'a'.repeat(64) }, 'ns', { store: backups }), { ready: true, source: { destination, key: 'k.db', sha256: 'a'.repeat(64) } });
  backups.upsert({ metadata: { name: 'old', namespace: 'ns' }, spec: { clusterName: 'c', destination }, status: { phase: 'Succeeded', key: 'k.db' } });
  const unhashed = restoreSource({ backupName: 'old' }, 'ns', { store: backups });
  assert.ok(!unhashed.ready && unhashed.reason === 'SnapshotHashMissing' && /EtcdBackup old succeeded without recording a sha256/.test(unhashed.why), JSON.stringify(unhashed));
  backups.upsert({ metadata: { name: 'running', namespace: 'ns' }, spec: { clusterName: 'c', destination }, status: { phase: 'Running' } });
  const running = restoreSource({ backupName: 'running' }, 'ns', { store: backups });
  assert.ok(!running.ready && running.reason === 'BackupNotReady', JSON.stringify(running));
});

test("a cluster's restore source whose credentials Secret is not marked for backups is not mounted: the cluster waits with the kit's reason", async () => {
  const destination = { s3: { bucket: 'b', credentialsSecret: 'theirs' } };
  const ready = { ready: true as const, source: { destination, key: 'k.db', sha256: 'a'.repeat(64) } };
  const asked: unknown[] = [];
  const unlabelled = await withCredentials(ready, (d) => (asked.push(d), Promise.resolve(credentialsRefusal('theirs', { app: 'x' }))));
  assert.deepEqual(asked, [destination], 'the check is asked about the source\'s destination');
  assert.ok(!unlabelled.ready && unlabelled.reason === 'CredentialsNotLabelled' && /^spec\.bootstrap\.fromBackup: the credentials Secret theirs is not labelled etcd\.quorum\.dev\/backup-credentials=true/.test(unlabelled.why), JSON.stringify(unlabelled));
  const missing = await withCredentials(ready, () => Promise.resolve(credentialsRefusal('theirs', null)));
  assert.ok(!missing.ready && missing.reason === 'CredentialsSecretNotFound', JSON.stringify(missing));
  assert.deepEqual(await withCredentials(ready, () => Promise.resolve(credentialsRefusal('theirs', { 'etcd.quorum.dev/backup-credentials': 'true' }))), ready);
  const notReady = { ready: false as const, reason: 'BackupNotReady' as const, why: 'w' };
  assert.deepEqual(await withCredentials(notReady, () => assert.fail('not asked while the source is not ready')), notReady);
});
