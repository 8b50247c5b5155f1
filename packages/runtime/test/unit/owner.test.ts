import { test } from 'node:test';
import assert from 'node:assert/strict';
import { AlreadyOwnedError, getControllerOf, isControlledBy, isOwnedBy, setControllerReference } from '../../src/helpers/owner.ts';
import type { KubeObject } from '../../src/object.ts';

const cluster: KubeObject = { apiVersion: 'quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'main', namespace: 'db', uid: 'uid-1' } };
const pod = (extra: Partial<KubeObject['metadata']> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'Pod', metadata: { name: 'main-0', namespace: 'db', ...extra } });

test('setControllerReference adds a controller reference to a copy', () => {
  const original = pod();
  const owned = setControllerReference(cluster, original);
  assert.deepEqual(owned.metadata.ownerReferences, [
    { apiVersion: 'quorum.dev/v1alpha1', kind: 'EtcdCluster', name: 'main', uid: 'uid-1', controller: true, blockOwnerDeletion: true },
  ]);
  assert.equal(original.metadata.ownerReferences, undefined);
  assert.equal(owned.metadata.name, 'main-0');
});

test('setControllerReference is idempotent and keeps other owners', () => {
  const other = { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', uid: 'uid-9' };
  const once = setControllerReference(cluster, pod({ ownerReferences: [other] }));
  const twice = setControllerReference(cluster, once);
  assert.deepEqual(twice.metadata.ownerReferences, once.metadata.ownerReferences);
  assert.equal(twice.metadata.ownerReferences?.length, 2);
  assert.deepEqual(twice.metadata.ownerReferences?.[0], other);
});

test('setControllerReference refuses an object controlled by someone else', () => {
  const controller = { apiVersion: 'apps/v1', kind: 'StatefulSet', name: 'main', uid: 'uid-2', controller: true };
  assert.throws(
    () => setControllerReference(cluster, pod({ ownerReferences: [controller] })),
    (err: unknown) => err instanceof AlreadyOwnedError && err.controller === controller && /already controlled by StatefulSet main/.test(err.message),
  );
});

test('setControllerReference takes the new uid of a re-created owner, and any version of its group', () => {
  const stale = { apiVersion: 'quorum.dev/v1beta1', kind: 'EtcdCluster', name: 'main', uid: 'old-uid', controller: true, blockOwnerDeletion: true };
  const owned = setControllerReference(cluster, pod({ ownerReferences: [stale] }));
  assert.deepEqual(owned.metadata.ownerReferences, [
    { apiVersion: 'quorum.dev/v1alpha1', kind: 'EtcdCluster', name: 'main', uid: 'uid-1', controller: true, blockOwnerDeletion: true },
  ]);
});

test('setControllerReference requires an owner read from the server', () => {
  assert.throws(() => setControllerReference({ ...cluster, metadata: { name: 'main', namespace: 'db' } }, pod()), /metadata\.uid/);
  assert.throws(() => setControllerReference({ metadata: cluster.metadata }, pod()), /apiVersion, kind/);
});

test('setControllerReference refuses owners from another namespace', () => {
  assert.throws(() => setControllerReference(cluster, pod({ namespace: 'other' })), /namespace db cannot own an object in namespace other/);
  const clusterScoped: KubeObject = { apiVersion: 'v1', kind: 'PersistentVolume', metadata: { name: 'pv-1' } };
  assert.throws(() => setControllerReference(cluster, clusterScoped), /cluster-scoped object cannot have a namespaced owner/);
});

test('a cluster-scoped owner may own namespaced and cluster-scoped objects', () => {
  const node: KubeObject = { apiVersion: 'v1', kind: 'Node', metadata: { name: 'n1', uid: 'node-uid' } };
  assert.equal(getControllerOf(setControllerReference(node, pod()))?.uid, 'node-uid');
  assert.equal(getControllerOf(setControllerReference(node, { kind: 'PersistentVolume', metadata: { name: 'pv' } }))?.uid, 'node-uid');
});

test('getControllerOf and isOwnedBy', () => {
  const plain = { apiVersion: 'v1', kind: 'ConfigMap', name: 'cfg', uid: 'uid-9' };
  const obj = pod({ ownerReferences: [plain, { apiVersion: 'quorum.dev/v1alpha1', kind: 'EtcdCluster', name: 'main', uid: 'uid-1', controller: true }] });
  assert.equal(getControllerOf(obj)?.name, 'main');
  assert.equal(getControllerOf(pod({ ownerReferences: [plain] })), undefined);
  assert.equal(isOwnedBy(obj, cluster), true);
  assert.equal(isOwnedBy(obj, { metadata: { name: 'cfg', uid: 'uid-9' } }), true);
  assert.equal(isOwnedBy(obj, { metadata: { name: 'main', uid: 'someone-else' } }), false);
  assert.equal(isOwnedBy(obj, { metadata: { name: 'main' } }), false);
  assert.equal(isOwnedBy(pod(), cluster), false);
});

test('isControlledBy: only a controlling reference with the owner\'s uid (and kind) counts', () => {
  const ref = { apiVersion: 'quorum.dev/v1alpha1', kind: 'EtcdCluster', name: 'main', uid: 'uid-1' };
  assert.equal(isControlledBy(setControllerReference(cluster, pod()), cluster), true);
  assert.equal(isControlledBy(pod({ ownerReferences: [ref] }), cluster), false, 'an owner, not the controller');
  assert.equal(isControlledBy(pod({ ownerReferences: [{ ...ref, uid: 'uid-old', controller: true }] }), cluster), false, 'a former object of the same name');
  assert.equal(isControlledBy(pod({ ownerReferences: [{ ...ref, kind: 'Other', controller: true }] }), cluster), false, 'the uid under another kind');
  assert.equal(isControlledBy(pod({ labels: { app: 'main' } }), cluster), false, 'labels and name prove nothing');
  assert.equal(isControlledBy(pod({ ownerReferences: [{ ...ref, uid: '', controller: true }] }), { metadata: { name: 'main' } }), false, 'an owner without a uid controls nothing');
});
