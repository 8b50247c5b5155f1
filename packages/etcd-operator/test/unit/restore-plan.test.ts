import assert from 'node:assert/strict';
import test from 'node:test';
import type { EtcdRestore } from '../../src/api/etcdrestore.ts';
import { planRestore, type RestoreObserved } from '../../src/restore/plan.ts';
import { restoredCluster, restoreStatus, RESTORE_LABEL, RESTORE_UID_ANNOTATION } from '../../src/restore/reconcile.ts';

const base = (over: Partial<RestoreObserved> = {}): RestoreObserved => ({ phase: undefined, usesBackupName: true, backup: { phase: 'Succeeded' }, ...over });
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
