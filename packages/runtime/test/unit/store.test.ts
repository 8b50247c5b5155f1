// The store's indexes follow every insert, update and removal.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { Store, NAMESPACE_INDEX, OWNER_UID_INDEX, type KubeObject } from '../../src/index.ts';
import { Backoff } from '../../src/watch/backoff.ts';

const obj = (namespace: string, name: string, owners: string[] = [], labels: Record<string, string> = {}): KubeObject => ({
  metadata: { namespace, name, labels, ownerReferences: owners.map((uid) => ({ apiVersion: 'v1', kind: 'X', name: uid, uid })) },
});
const names = (objs: KubeObject[]): string[] => objs.map((o) => o.metadata.name!).sort();

test('objects are found by key, namespace and owner', () => {
  const store = new Store<KubeObject>();
  store.upsert(obj('a', 'one', ['u1']));
  store.upsert(obj('a', 'two', ['u1', 'u2']));
  store.upsert(obj('b', 'one', ['u2']));
  assert.equal(store.size, 3);
  assert.equal(store.get('a/one')?.metadata.namespace, 'a');
  assert.deepEqual(names(store.byIndex(NAMESPACE_INDEX, 'a')), ['one', 'two']);
  assert.deepEqual(names(store.byIndex(OWNER_UID_INDEX, 'u2')), ['one', 'two']);
  assert.deepEqual(store.byIndex(OWNER_UID_INDEX, 'nobody'), []);
});

test('an update refiles the object; a removal unfiles it', () => {
  const store = new Store<KubeObject>();
  store.upsert(obj('a', 'x', ['u1']));
  const previous = store.upsert(obj('a', 'x', ['u2']));
  assert.deepEqual(previous?.metadata.ownerReferences?.map((o) => o.uid), ['u1']);
  assert.deepEqual(store.byIndex(OWNER_UID_INDEX, 'u1'), []);
  assert.deepEqual(names(store.byIndex(OWNER_UID_INDEX, 'u2')), ['x']);
  assert.equal(store.remove('a/x')?.metadata.name, 'x');
  assert.deepEqual(store.byIndex(OWNER_UID_INDEX, 'u2'), []);
  assert.equal(store.remove('a/x'), undefined);
  assert.equal(store.size, 0);
});

test('custom indexers, and a clear error for an unknown index', () => {
  const store = new Store<KubeObject>({ app: (o) => (o.metadata.labels?.['app'] ? [o.metadata.labels['app']] : []) });
  store.upsert(obj('a', 'p', [], { app: 'etcd' }));
  store.upsert(obj('a', 'q', [], { app: 'web' }));
  store.upsert(obj('', 'cluster-scoped', [], { app: 'etcd' }));
  assert.deepEqual(names(store.byIndex('app', 'etcd')), ['cluster-scoped', 'p']);
  assert.ok(store.get('cluster-scoped'));
  assert.throws(() => store.byIndex('nope', 'x'), /no index nope \(have: app\)/);
});

test('reconnect backoff doubles with jitter up to its cap and resets after a healthy period', () => {
  let now = 0;
  const backoff = new Backoff({ initialMs: 800, maxMs: 30_000, jitter: 1, resetAfterMs: 120_000, now: () => now, random: () => 0.5 });
  const delays = Array.from({ length: 8 }, () => backoff.next());
  assert.deepEqual(delays, [1200, 2400, 4800, 9600, 19200, 38400, 45000, 45000]);
  now += 120_001;
  assert.equal(backoff.next(), 1200);
});

test('request paths map to the resource they address (the metrics label)', async () => {
  const { resourceOf } = await import('../../src/manager/metrics.ts');
  assert.equal(resourceOf('/api/v1/namespaces/default/pods/x'), 'pods');
  assert.equal(resourceOf('/api/v1/pods'), 'pods');
  assert.equal(resourceOf('/apis/coordination.k8s.io/v1/namespaces/q/leases/op'), 'leases');
  assert.equal(resourceOf('/apis/etcd.quorum.dev/v1alpha1/namespaces/d/etcdclusters/b/status?fieldManager=x'), 'etcdclusters/status');
  assert.equal(resourceOf('/api/v1/namespaces/kube-system'), 'namespaces');
});
