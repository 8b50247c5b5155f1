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

test('cluster-scoped and namespaced objects side by side: keys, list, size and the namespace index follow upserts and removals', () => {
  const store = new Store<KubeObject>();
  store.upsert(obj('', 'node-1'));
  store.upsert(obj('a', 'node-1'));
  store.upsert(obj('a', 'two'));
  assert.deepEqual(store.keys().sort(), ['a/node-1', 'a/two', 'node-1']);
  assert.equal(store.get('node-1')?.metadata.namespace, '');
  assert.equal(store.get('a/node-1')?.metadata.namespace, 'a');
  assert.equal(store.get('b/node-1'), undefined);
  assert.deepEqual(names(store.byIndex(NAMESPACE_INDEX, '')), ['node-1']);
  assert.deepEqual(store.byIndex(NAMESPACE_INDEX, 'nowhere'), []);
  // An update replaces in place: same size, the new object returned by every read.
  const updated = { ...obj('a', 'two'), data: { v: '2' } };
  assert.equal(store.upsert(updated)?.metadata.name, 'two');
  assert.equal(store.size, 3);
  assert.equal(store.get('a/two'), updated);
  assert.ok(store.list().includes(updated));
  assert.ok(store.byIndex(NAMESPACE_INDEX, 'a').includes(updated));
  assert.equal(store.remove('a/node-1')?.metadata.namespace, 'a');
  assert.equal(store.remove('a/two'), updated);
  assert.deepEqual(store.byIndex(NAMESPACE_INDEX, 'a'), []);
  assert.deepEqual(store.keys(), ['node-1']);
  assert.equal(store.size, 1);
});

test('an index answer is a copy: changing it changes nothing in the store', () => {
  const store = new Store<KubeObject>();
  store.upsert(obj('a', 'x', ['u1']));
  store.byIndex(NAMESPACE_INDEX, 'a').pop();
  store.byIndex(OWNER_UID_INDEX, 'u1').pop();
  assert.equal(store.byIndex(NAMESPACE_INDEX, 'a').length, 1);
  assert.equal(store.byIndex(OWNER_UID_INDEX, 'u1').length, 1);
});

test('a namespace indexer of its own is indexed like any other', () => {
  const store = new Store<KubeObject>({ [NAMESPACE_INDEX]: (o) => [(o.metadata.namespace ?? '').toUpperCase()] });
  store.upsert(obj('a', 'x'));
  assert.deepEqual(names(store.byIndex(NAMESPACE_INDEX, 'A')), ['x']);
  assert.deepEqual(store.byIndex(NAMESPACE_INDEX, 'a'), []);
});

test('repeated strings are shared while an object holds them and dropped with the last; objects read back equal, frozen ones untouched', () => {
  const store = new Store<KubeObject>();
  const parsed = (name: string): KubeObject =>
    JSON.parse(JSON.stringify({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { namespace: 'team-a', name, creationTimestamp: '2026-11-27T20:00:00Z', labels: { app: 'etcd' }, ownerReferences: [{ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', name: 'db', uid: 'u1' }] } })) as KubeObject;
  const one = parsed('one');
  store.upsert(one);
  store.upsert(parsed('two'));
  // v1, ConfigMap, team-a, the timestamp, etcd, the owner's apiVersion, kind and name (db).
  assert.equal(store.sharedStrings, 8);
  assert.deepEqual(store.get('team-a/one'), parsed('one'));
  assert.deepEqual(names(store.byIndex(OWNER_UID_INDEX, 'u1')), ['one', 'two']);
  store.upsert(parsed('one'));
  assert.equal(store.sharedStrings, 8);
  const frozen = Object.freeze({ metadata: Object.freeze({ namespace: 'team-b', name: 'f', labels: Object.freeze({ app: 'web' }) }) }) as KubeObject;
  store.upsert(frozen);
  assert.equal(store.get('team-b/f'), frozen);
  for (const key of store.keys()) store.remove(key);
  assert.equal(store.sharedStrings, 0);
  assert.equal(store.size, 0);
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
