// The ChangeRecorder reconciler on fakes (the fake API for watches, a store for the recorders, captured
// status patches): what it watches, and what its status says while starting, recording, missing kinds,
// invalid, or yielding a storage path to an older recorder. Plus the pure planning and status pieces.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { ConfigMaps, Namespaces, Store, createLogger, type Condition } from '@quorum/runtime';
import type { ChangeRecorder, ChangeRecorderSpec, ChangeRecorderStatus, GroupKind } from '../../src/api/changerecorder.ts';
import { SessionRegistry } from '../../src/operator/recorder.ts';
import type { ResolvedKind, Resolution } from '../../src/recorder/discovery.ts';
import { pathsOverlap, planTargets, storageRival } from '../../src/recorder/plan.ts';
import { changeRecorderReconciler, MISSING_KINDS_RETRY_MS, UNSETTLED_REFRESH_MS } from '../../src/recorder/reconcile.ts';
import { RecorderSession } from '../../src/recorder/session.ts';
import { FakeApi, until } from './fake-api.ts';

const CM: ResolvedKind = { group: '', kind: 'ConfigMap', version: 'v1', resource: 'configmaps', namespaced: true, type: ConfigMaps };
const ROLE: ResolvedKind = { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', version: 'v1', resource: 'clusterroles', namespaced: false, type: ConfigMaps };
const silent = createLogger({ level: 'silent' });

interface Harness {
  reconcile: (name: string) => Promise<{ requeueAfter?: number } | void>;
  recorders: Store<ChangeRecorder>;
  sessions: SessionRegistry;
  api: FakeApi;
  root: string;
  status: (name: string) => ChangeRecorderStatus | undefined;
  condition: (name: string, type: string) => Condition | undefined;
  add: (name: string, spec: ChangeRecorderSpec, created?: string) => void;
}

async function harness(t: { after: (fn: () => Promise<void>) => void }, resolution: (kinds: readonly GroupKind[]) => Resolution): Promise<Harness> {
  const root = await mkdtemp(join(tmpdir(), 'recorder-reconcile-'));
  const api = new FakeApi();
  const recorders = new Store<ChangeRecorder>();
  const sessions = new SessionRegistry((name, directory) =>
    RecorderSession.open({ name, directory, client: api.asClient(), onActivity: () => undefined, onNamespacesChanged: () => undefined }),
  );
  t.after(async () => {
    await sessions.closeAll();
    await rm(root, { recursive: true, force: true });
  });
  const client = {
    // A status patch lands in the store, as the recorder's informer would deliver it.
    mergePatch: <T>(_type: unknown, key: { name: string }, patch: { status: ChangeRecorderStatus }): Promise<T> => {
      const current = recorders.get(key.name)!;
      recorders.upsert({ ...current, status: patch.status });
      return Promise.resolve(current as T);
    },
    request: <T>(): Promise<T> => Promise.reject(new Error('discovery is faked')),
  };
  const reconciler = changeRecorderReconciler({ client, recorders: { store: recorders }, sessions, storageRoot: root, resolve: (kinds) => Promise.resolve(resolution(kinds)) });
  const status = (name: string): ChangeRecorderStatus | undefined => recorders.get(name)?.status;
  return {
    reconcile: (name) => reconciler({ namespace: '', name }, { signal: new AbortController().signal, log: silent, retries: 0 }),
    recorders,
    sessions,
    api,
    root,
    status,
    condition: (name, type) => status(name)?.conditions?.find((c) => c.type === type),
    add: (name, spec, created = '2026-01-01T00:00:00Z') => {
      recorders.upsert({ apiVersion: 'history.quorum.dev/v1alpha1', kind: 'ChangeRecorder', metadata: { name, generation: 1, creationTimestamp: created }, spec });
    },
  };
}

const onlyConfigMaps = (kinds: readonly GroupKind[]): Resolution => ({
  found: kinds.some((k) => k.kind === 'ConfigMap') ? [CM] : [],
  missing: kinds.filter((k) => k.kind !== 'ConfigMap'),
});

test('a recorder starts its watches, reports Starting, then Recording with its kinds and objects; missing kinds are named', async (t) => {
  const h = await harness(t, onlyConfigMaps);
  h.api.create(ConfigMaps, { metadata: { name: 'a', namespace: 'default' }, data: {} });
  h.api.create(ConfigMaps, { metadata: { name: 'b', namespace: 'default' }, data: {} });
  h.add('main', { namespaces: { names: ['default'] }, resources: [{ group: '', kind: 'ConfigMap' }, { group: 'etcd.quorum.dev', kind: 'EtcdCluster' }] });

  const first = await h.reconcile('main');
  assert.equal(first?.requeueAfter, UNSETTLED_REFRESH_MS, 'status is refreshed while watches start');
  assert.equal(h.condition('main', 'Ready')?.reason, 'Starting');
  assert.match(h.condition('main', 'Ready')?.message ?? '', /listing and comparing ConfigMap in default/);
  assert.equal(h.condition('main', 'KindsResolved')?.status, 'False');
  assert.equal(h.condition('main', 'KindsResolved')?.reason, 'KindsNotFound');
  assert.match(h.condition('main', 'KindsResolved')?.message ?? '', /EtcdCluster\.etcd\.quorum\.dev/);

  await until('watch live', () => h.sessions.get('main')?.report().watches.every((w) => w.ready));
  const second = await h.reconcile('main');
  assert.equal(second?.requeueAfter, MISSING_KINDS_RETRY_MS, 'only the missing kind is looked for again');
  const ready = h.condition('main', 'Ready');
  assert.equal(ready?.status, 'True');
  assert.equal(ready?.reason, 'Recording');
  assert.equal(ready?.observedGeneration, 1);
  const status = h.status('main')!;
  assert.deepEqual(status.kinds, [{ group: '', kind: 'ConfigMap', version: 'v1', resource: 'configmaps', namespaced: true, objects: 2 }]);
  assert.equal(status.objects, 2);
  assert.equal(status.recordsWritten, 0);
  assert.ok(status.watchingSince);
  assert.ok((status.storageBytes ?? 0) > 0, 'the last-seen copies take space');
  assert.equal(h.sessions.get('main')?.directory, join(h.root, 'main'), 'storage defaults to the recorder name');
});

test('nothing changed: no status write and no requeue once every kind is found and recording', async (t) => {
  const h = await harness(t, onlyConfigMaps);
  h.add('main', { namespaces: { all: true }, resources: [{ group: '', kind: 'ConfigMap' }] });
  await h.reconcile('main');
  await until('watch live', () => h.sessions.get('main')?.report().watches.every((w) => w.ready));
  assert.deepEqual(await h.reconcile('main'), {});
  const written = h.status('main');
  assert.deepEqual(await h.reconcile('main'), {});
  assert.equal(h.status('main'), written, 'the same status object: nothing was patched');
});

test('an invalid spec records nothing and says why', async (t) => {
  const h = await harness(t, onlyConfigMaps);
  h.add('bad', { namespaces: { names: ['a'], all: true } });
  assert.deepEqual(await h.reconcile('bad'), {});
  assert.equal(h.condition('bad', 'Ready')?.reason, 'InvalidSpec');
  assert.match(h.condition('bad', 'Ready')?.message ?? '', /exactly one of names, selector or all/);
  assert.equal(h.sessions.get('bad'), undefined);
});

test('two recorders on overlapping storage paths: the older keeps it, the younger waits and takes over when it goes', async (t) => {
  const h = await harness(t, onlyConfigMaps);
  h.add('old', { namespaces: { all: true }, storage: { path: 'shared' } }, '2026-01-01T00:00:00Z');
  h.add('new', { namespaces: { all: true }, storage: { path: 'shared/inner' } }, '2026-02-01T00:00:00Z');
  await h.reconcile('old');
  await h.reconcile('new');
  assert.notEqual(h.condition('old', 'Ready')?.reason, 'StoragePathInUse');
  assert.equal(h.condition('new', 'Ready')?.reason, 'StoragePathInUse');
  assert.match(h.condition('new', 'Ready')?.message ?? '', /ChangeRecorder old/);
  assert.equal(h.sessions.get('new'), undefined);

  h.recorders.remove('old');
  await h.reconcile('old');
  assert.equal(h.sessions.get('old'), undefined, 'a deleted recorder stops');
  await h.reconcile('new');
  assert.equal(h.sessions.get('new')?.directory, join(h.root, 'shared/inner'));
});

test('a selector watches the namespaces it picks; cluster-scoped kinds are watched whole', async (t) => {
  const h = await harness(t, () => ({ found: [CM], missing: [] }));
  h.api.create(Namespaces, { metadata: { name: 'team-a', labels: { team: 'a' } } });
  h.api.create(Namespaces, { metadata: { name: 'team-b', labels: { team: 'b' } } });
  h.add('teams', { namespaces: { selector: { matchLabels: { team: 'a' } } }, resources: [{ group: '', kind: 'ConfigMap' }] });
  await h.reconcile('teams');
  await until('namespaces listed', async () => {
    await h.reconcile('teams');
    return (h.sessions.get('teams')?.report().watches.length ?? 0) > 0;
  });
  assert.deepEqual(h.sessions.get('teams')?.report().watches.map((w) => w.target.namespace), ['team-a']);

  assert.deepEqual(planTargets([CM, ROLE], { names: ['x', 'y'] }, undefined).map((t) => [t.kind.kind, t.namespace]), [['ConfigMap', 'x'], ['ConfigMap', 'y'], ['ClusterRole', undefined]]);
  assert.deepEqual(planTargets([CM], { all: true }, undefined).map((t) => t.namespace), [undefined]);
  assert.deepEqual(planTargets([CM, ROLE], { selector: {} }, undefined).map((t) => t.kind.kind), ['ClusterRole'], 'namespaced kinds wait for the selector');
});

test('storage paths overlap when equal or nested, not when they share a prefix', () => {
  assert.ok(pathsOverlap('a', 'a'));
  assert.ok(pathsOverlap('a', 'a/b'));
  assert.ok(pathsOverlap('a/b', 'a'));
  assert.ok(!pathsOverlap('a', 'ab'));
  const recorder = (name: string, created: string): ChangeRecorder => ({ metadata: { name, creationTimestamp: created }, spec: { namespaces: { all: true } } });
  const a = recorder('a', '2026-01-01T00:00:00Z');
  const b = recorder('b', '2026-01-01T00:00:00Z');
  assert.equal(storageRival(b, 'x', [{ recorder: a, path: 'x' }]), a, 'same age: the name decides');
  assert.equal(storageRival(a, 'x', [{ recorder: b, path: 'x' }]), undefined);
});
