// Whose a Secret at an operator-managed TLS name is (tls/ownership.ts): the cluster's by a controlling owner
// reference to its uid, or handed over with its labels and no controller; anything else is foreign.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { KubeObject } from '@quorum/runtime';
import { foreignSecretProblem, secretOwner } from '../../src/tls/ownership.ts';

const cluster = { metadata: { name: 'main', uid: 'uid-main' } };
const secret = (metadata: Partial<KubeObject['metadata']>): KubeObject => ({ apiVersion: 'v1', kind: 'Secret', metadata: { name: 'main-peer-ca', ...metadata } });
const controller = (kind: string, uid: string, name = 'x') => ({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind, name, uid, controller: true });
const labels = { 'app.kubernetes.io/managed-by': 'quorum', 'app.kubernetes.io/instance': 'main' };

test("a controlling owner reference to this cluster's uid is ours; to another object or another uid, foreign", () => {
  assert.equal(secretOwner(secret({ ownerReferences: [controller('EtcdCluster', 'uid-main')] }), cluster), 'ours');
  assert.equal(secretOwner(secret({ ownerReferences: [controller('EtcdCluster', 'uid-old')], labels }), cluster), 'foreign', 'a former cluster of the same name');
  assert.equal(secretOwner(secret({ ownerReferences: [controller('Certificate', 'uid-main')], labels }), cluster), 'foreign');
});

test("without a controller, only the operator's labels for this cluster hand a Secret over", () => {
  assert.equal(secretOwner(secret({ labels }), cluster), 'ours');
  assert.equal(secretOwner(secret({}), cluster), 'foreign');
  assert.equal(secretOwner(secret({ labels: { ...labels, 'app.kubernetes.io/instance': 'other' } }), cluster), 'foreign');
  assert.equal(secretOwner(secret({ labels: { 'app.kubernetes.io/instance': 'main' } }), cluster), 'foreign');
});

test('the problem names the Secret, whose it is, and what to do', () => {
  assert.match(foreignSecretProblem(secret({}), cluster), /^Secret main-peer-ca is in the way .* EtcdCluster main \(it has no owner and lacks the labels app\.kubernetes\.io\/managed-by=quorum, app\.kubernetes\.io\/instance=main\): it is never used, overwritten or deleted/);
  assert.match(foreignSecretProblem(secret({ ownerReferences: [controller('Certificate', 'u', 'web')] }), cluster), /controlled by Certificate web/);
});
