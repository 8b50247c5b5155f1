// The ChangeRecorder reconciler on fakes (the fake API for watches, a store for the recorders, captured
// status patches): what it watches, and what its status says while starting, recording, missing kinds,
// invalid, or yielding a storage path to an older recorder. Plus the pure planning and status pieces.
import { test } from 'node:test';
import { applyMergePatch } from '@quorum/kit';
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { ConfigMaps, Namespaces, Store, createLogger, type Condition, type EventInput, type KubeObject } from '@quorum/runtime';
import { DEFAULT_RESOURCES, type ChangeRecorder, type ChangeRecorderSpec, type ChangeRecorderStatus, type GroupKind } from '../../src/api/changerecorder.ts';
import { applyDefaults } from '../../src/api/defaults.ts';
import { SessionRegistry } from '../../src/operator/recorder.ts';
import type { ResolvedKind, Resolution } from '../../src/recorder/discovery.ts';
import { kindVerdict, planTargets, requestedKinds, resolutionDue, storageRival } from '../../src/recorder/plan.ts';
import { ABSENT_DEFAULTS_RETRY_MS, changeRecorderReconciler, MISSING_KINDS_RETRY_MS, UNSETTLED_REFRESH_MS } from '../../src/recorder/reconcile.ts';
import { RecorderSession } from '../../src/recorder/session.ts';
import { pathsOverlap, targetsOverlap, type StorageTarget } from '../../src/store/target.ts';
import { FakeApi, MemoryRedactionKeys, until } from './fake-api.ts';

const CM: ResolvedKind = { group: '', kind: 'ConfigMap', version: 'v1', resource: 'configmaps', namespaced: true, type: ConfigMaps };
const ROLE: ResolvedKind = { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', version: 'v1', resource: 'clusterroles', namespaced: false, type: ConfigMaps };

/** A logger that keeps its lines (level and message), for what the reconcile says. */
function capturingLogger(): { log: ReturnType<typeof createLogger>; lines: { level: string; msg: string }[] } {
  const lines: { level: string; msg: string }[] = [];
  const destination = new Writable({
    write: (chunk: Buffer, _encoding, callback) => {
      const line = JSON.parse(chunk.toString()) as { level: string; msg: string };
      lines.push({ level: line.level, msg: line.msg });
      callback();
    },
  });
  return { log: createLogger({ level: 'debug', destination }), lines };
}

interface Harness {
  reconcile: (name: string) => Promise<{ requeueAfter?: number } | void>;
  recorders: Store<ChangeRecorder>;
  sessions: SessionRegistry;
  api: FakeApi;
  root: string;
  status: (name: string) => ChangeRecorderStatus | undefined;
  condition: (name: string, type: string) => Condition | undefined;
  add: (name: string, spec: ChangeRecorderSpec, created?: string) => void;
  /** The events recorded, with the name of the object they are about. */
  events: (EventInput & { regarding: string })[];
  /** What the reconciles logged. */
  lines: { level: string; msg: string }[];
  /** The kinds each resolution asked for. */
  asked: GroupKind[][];
  /** The clock the reconciler reads; tests move it. */
  clock: { now: Date };
}

async function harness(t: { after: (fn: () => Promise<void>) => void }, resolution: (kinds: readonly GroupKind[]) => Resolution): Promise<Harness> {
  const root = await mkdtemp(join(tmpdir(), 'recorder-reconcile-'));
  const api = new FakeApi();
  const recorders = new Store<ChangeRecorder>();
  const sessions = new SessionRegistry((name, location) =>
    RecorderSession.open({ name, location, client: api.asClient(), redactionKeys: new MemoryRedactionKeys(), onActivity: () => undefined, onNamespacesChanged: () => undefined }),
  );
  t.after(async () => {
    await sessions.closeAll();
    await rm(root, { recursive: true, force: true });
  });
  const client = {
    // A status patch lands in the store, as the recorder's informer would deliver it.
    mergePatch: <T>(_type: unknown, key: { name: string }, patch: { status: ChangeRecorderStatus }): Promise<T> => {
      const current = recorders.get(key.name)!;
      recorders.upsert({ ...current, status: applyMergePatch(current.status, patch.status) as ChangeRecorderStatus });
      return Promise.resolve(current as T);
    },
    request: <T>(): Promise<T> => Promise.reject(new Error('discovery is faked')),
  };
  const events: (EventInput & { regarding: string })[] = [];
  const asked: GroupKind[][] = [];
  const clock = { now: new Date('2026-03-01T00:00:00Z') };
  const { log, lines } = capturingLogger();
  const reconciler = changeRecorderReconciler({
    client,
    recorders: { store: recorders },
    sessions,
    storageRoot: root,
    credentialsRoot: join(root, '.credentials'),
    resolve: (kinds) => {
      asked.push([...kinds]);
      return Promise.resolve(resolution(kinds));
    },
    events: { record: (regarding: KubeObject, input: EventInput) => void events.push({ ...input, regarding: regarding.metadata.name ?? '' }) },
    now: () => clock.now,
  });
  const status = (name: string): ChangeRecorderStatus | undefined => recorders.get(name)?.status;
  return {
    events,
    lines,
    asked,
    clock,
    reconcile: (name) => reconciler({ namespace: '', name }, { signal: new AbortController().signal, log, retries: 0 }),
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

/** An API server that serves ConfigMaps and nothing else. */
const onlyConfigMaps = (kinds: readonly GroupKind[]): Resolution => ({
  found: kinds.some((k) => k.kind === 'ConfigMap') ? [CM] : [],
  missing: kinds.filter((k) => k.kind !== 'ConfigMap').map((k) => ({ ...k, why: k.group ? `the API server serves no group ${k.group}` : `no served version of the core group (v1) has kind ${k.kind}` })),
  unavailable: [],
});

test('an unknown kind in spec.resources is rejected by name (Ready False, UnknownKind, an event, a warn log); the served kinds are recorded', async (t) => {
  const h = await harness(t, onlyConfigMaps);
  h.api.create(ConfigMaps, { metadata: { name: 'a', namespace: 'default' }, data: {} });
  h.api.create(ConfigMaps, { metadata: { name: 'b', namespace: 'default' }, data: {} });
  h.add('main', { namespaces: { names: ['default'] }, resources: [{ group: '', kind: 'ConfigMap' }, { group: 'etcd.quorum.dev', kind: 'EtcdCluster' }] });

  const first = await h.reconcile('main');
  assert.equal(first?.requeueAfter, UNSETTLED_REFRESH_MS, 'status is refreshed while watches start');
  const ready = h.condition('main', 'Ready');
  assert.equal(ready?.status, 'False');
  assert.equal(ready?.reason, 'UnknownKind');
  assert.equal(ready?.message, 'spec.resources names a kind the API server does not serve: EtcdCluster.etcd.quorum.dev (the API server serves no group etcd.quorum.dev). Recording the 1 kind it serves meanwhile');
  assert.equal(h.condition('main', 'KindsResolved')?.status, 'False');
  assert.equal(h.condition('main', 'KindsResolved')?.reason, 'KindsNotFound');
  assert.match(h.condition('main', 'KindsResolved')?.message ?? '', /^not served: EtcdCluster\.etcd\.quorum\.dev \(the API server serves no group etcd\.quorum\.dev\)$/);
  assert.deepEqual(h.events, [
    {
      regarding: 'main',
      type: 'Warning',
      reason: 'UnknownKind',
      action: 'ResolveKinds',
      note: 'spec.resources names kinds the API server does not serve: EtcdCluster.etcd.quorum.dev (the API server serves no group etcd.quorum.dev)',
    },
  ]);
  assert.equal(h.lines.filter((l) => l.level === 'warn' && l.msg.includes('EtcdCluster.etcd.quorum.dev')).length, 1, 'a warn log names it');

  await until('watch live', () => h.sessions.get('main')?.report().watches.every((w) => w.ready));
  const second = await h.reconcile('main');
  assert.equal(second?.requeueAfter, MISSING_KINDS_RETRY_MS, 'only the unknown kind is looked for again');
  assert.equal(h.condition('main', 'Ready')?.reason, 'UnknownKind', 'still rejected while recording the rest');
  assert.equal(h.condition('main', 'Ready')?.observedGeneration, 1);
  const status = h.status('main')!;
  assert.deepEqual(status.kinds, [{ group: '', kind: 'ConfigMap', version: 'v1', resource: 'configmaps', namespaced: true, objects: 2 }], 'the kind it serves is watched');
  assert.equal(status.objects, 2);
  assert.equal(status.recordsWritten, 0);
  assert.ok(status.watchingSince);
  assert.ok((status.storageBytes ?? 0) > 0, 'the last-seen copies take space');
  assert.deepEqual(h.sessions.get('main')?.location, { directory: join(h.root, 'main') }, 'storage defaults to the recorder name');
  assert.equal(h.asked.length, 1, 'status refreshes do not ask discovery again');
  assert.equal(h.events.length, 1);

  // A minute later it is looked up again: still unknown, one more event occurrence, the log line at debug.
  h.clock.now = new Date(h.clock.now.getTime() + MISSING_KINDS_RETRY_MS);
  await h.reconcile('main');
  assert.equal(h.asked.length, 2);
  assert.equal(h.events.length, 2);
  assert.equal(h.lines.filter((l) => l.level === 'warn' && l.msg.includes('EtcdCluster')).length, 1, 'the same verdict is not warned twice');

  // The kind is dropped from the spec: Recording.
  h.recorders.upsert({ ...h.recorders.get('main')!, metadata: { ...h.recorders.get('main')!.metadata, generation: 2 }, spec: { namespaces: { names: ['default'] }, resources: [{ group: '', kind: 'ConfigMap' }] } });
  await h.reconcile('main');
  assert.equal(h.condition('main', 'Ready')?.reason, 'Recording');
  assert.equal(h.condition('main', 'Ready')?.status, 'True');
  assert.equal(h.condition('main', 'KindsResolved')?.reason, 'AllKindsFound');
});

test("default kinds: Quorum's own kinds only where discovery finds them, and their absence is no error", async (t) => {
  const h = await harness(t, onlyConfigMaps);
  h.add('defaults', { namespaces: { names: ['default'] } });
  await h.reconcile('defaults');
  const asked = h.asked[0]!.map((k) => `${k.group}/${k.kind}`);
  assert.ok(asked.includes('apps/Deployment') && asked.includes('etcd.quorum.dev/EtcdCluster') && asked.includes('etcd.quorum.dev/EtcdBackupSchedule'), asked.join(' '));
  // The core default kinds other than ConfigMap are "unknown" on this fake server; a real one serves them.
  assert.equal(h.condition('defaults', 'Ready')?.reason, 'UnknownKind');
  assert.doesNotMatch(h.condition('defaults', 'Ready')?.message ?? '', /EtcdCluster/, "Quorum's kinds are not rejected");

  const served = (kinds: readonly GroupKind[]): Resolution => {
    const resolution = onlyConfigMaps(kinds);
    const builtin = (k: GroupKind): boolean => DEFAULT_RESOURCES.some((d) => d.group === k.group && d.kind === k.kind);
    const found = kinds.filter(builtin).map((k): ResolvedKind => ({ ...k, version: 'v1', resource: `${k.kind.toLowerCase()}s`, namespaced: true, type: ConfigMaps }));
    return { ...resolution, found, missing: resolution.missing.filter((k) => !builtin(k)) };
  };
  const h2 = await harness(t, served);
  h2.add('defaults', { namespaces: { names: ['default'] } });
  await h2.reconcile('defaults');
  await until('watches live', () => h2.sessions.get('defaults')?.report().watches.every((w) => w.ready));
  const result = await h2.reconcile('defaults');
  assert.equal(h2.condition('defaults', 'Ready')?.reason, 'Recording');
  const resolved = h2.condition('defaults', 'KindsResolved');
  assert.equal(resolved?.status, 'True');
  assert.equal(resolved?.reason, 'AllKindsFound');
  assert.equal(resolved?.message, 'found 7 kinds; not served here, so not recorded: EtcdCluster.etcd.quorum.dev, EtcdBackupSchedule.etcd.quorum.dev (default kinds, recorded where served)');
  assert.equal(result?.requeueAfter, ABSENT_DEFAULTS_RETRY_MS, 'looked for again, rarely');
  assert.deepEqual(h2.events, [], 'no event');
  assert.equal(h2.lines.filter((l) => l.level === 'warn').length, 0, 'no warning');
});

test('kinds whose discovery fails are neither watched nor rejected: DiscoveryFailing, KindsResolved Unknown', async (t) => {
  const h = await harness(t, (kinds) => ({
    found: [CM],
    missing: [],
    unavailable: kinds.filter((k) => k.group === 'metrics.k8s.io').map((k) => ({ ...k, errors: ['GET /apis/metrics.k8s.io/v1beta1: 503 ServiceUnavailable: the server is currently unable to handle the request'] })),
  }));
  h.add('m', { namespaces: { all: true }, resources: [{ group: '', kind: 'ConfigMap' }, { group: 'metrics.k8s.io', kind: 'PodMetrics' }] });
  await h.reconcile('m');
  await until('watch live', () => h.sessions.get('m')?.report().watches.every((w) => w.ready));
  const result = await h.reconcile('m');
  assert.equal(result?.requeueAfter, MISSING_KINDS_RETRY_MS);
  assert.equal(h.condition('m', 'Ready')?.reason, 'DiscoveryFailing');
  assert.match(h.condition('m', 'Ready')?.message ?? '', /PodMetrics\.metrics\.k8s\.io \(GET .*503 ServiceUnavailable/);
  assert.equal(h.condition('m', 'KindsResolved')?.status, 'Unknown');
  assert.equal(h.condition('m', 'KindsResolved')?.reason, 'DiscoveryFailed');
  assert.deepEqual(h.events.map((e) => e.reason), ['DiscoveryFailing']);
});

test('the kinds a spec asks for, what discovery means for them, and when to ask again', () => {
  const explicit = requestedKinds(applyDefaults({ namespaces: { all: true }, resources: [{ kind: 'ConfigMap' }, { group: 'etcd.quorum.dev', kind: 'EtcdCluster' }] }));
  assert.deepEqual(explicit, { required: [{ group: '', kind: 'ConfigMap' }, { group: 'etcd.quorum.dev', kind: 'EtcdCluster' }], optional: [] }, 'a listed kind is required, even one of Quorum');
  const defaults = requestedKinds(applyDefaults({ namespaces: { all: true } }));
  assert.equal(defaults.required.length, DEFAULT_RESOURCES.length);
  assert.deepEqual(defaults.optional.map((k) => k.kind), ['EtcdCluster', 'EtcdBackupSchedule']);

  const missing = (group: string, kind: string) => ({ group, kind, why: 'not served' });
  const verdict = kindVerdict(defaults, { found: [CM], missing: [missing('etcd.quorum.dev', 'EtcdCluster'), missing('apps', 'Deployment')], unavailable: [] });
  assert.deepEqual(verdict.unknown.map((k) => k.kind), ['Deployment']);
  assert.deepEqual(verdict.absent.map((k) => k.kind), ['EtcdCluster']);
  assert.deepEqual(verdict.watch, [CM]);

  const at = { generation: 1, atMs: 0, resolution: { found: [CM], missing: [], unavailable: [] } };
  const settled = { ...at, verdict: kindVerdict(defaults, at.resolution) };
  assert.equal(resolutionDue(settled, 1, 10 * ABSENT_DEFAULTS_RETRY_MS), false, 'everything found: only a spec change asks again');
  assert.equal(resolutionDue(settled, 2, 0), true);
  const absent = { ...at, verdict: { ...settled.verdict, absent: [missing('etcd.quorum.dev', 'EtcdCluster')] } };
  assert.equal(resolutionDue(absent, 1, MISSING_KINDS_RETRY_MS), false);
  assert.equal(resolutionDue(absent, 1, ABSENT_DEFAULTS_RETRY_MS), true);
  const unknown = { ...at, verdict: { ...settled.verdict, unknown: [missing('apps', 'Deploymnet')] } };
  assert.equal(resolutionDue(unknown, 1, MISSING_KINDS_RETRY_MS - 1), false);
  assert.equal(resolutionDue(unknown, 1, MISSING_KINDS_RETRY_MS), true);
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
  assert.deepEqual(h.sessions.get('new')?.location, { directory: join(h.root, 'shared/inner') });
});

test('object stores: overlapping folders of one bucket are refused to the younger recorder; a credentials Secret the pod does not mount is named, with how to mount it', async (t) => {
  const h = await harness(t, onlyConfigMaps);
  const s3 = (prefix: string): ChangeRecorderSpec['storage'] => ({ s3: { bucket: 'records', prefix, endpoint: 'http://127.0.0.1:1', forcePathStyle: true, credentialsSecret: 'recorder-s3' } });
  h.add('old', { namespaces: { all: true }, storage: s3('history') }, '2026-01-01T00:00:00Z');
  h.add('new', { namespaces: { all: true }, storage: s3('history/team-a') }, '2026-02-01T00:00:00Z');
  assert.deepEqual(await h.reconcile('old'), { requeueAfter: UNSETTLED_REFRESH_MS }, 'tried again');
  const ready = h.condition('old', 'Ready');
  assert.equal(ready?.reason, 'StorageUnavailable');
  assert.equal(
    ready?.message,
    `s3://records/history at http://127.0.0.1:1: the credentials Secret recorder-s3 is not mounted into the recorder's pod (no ${join(h.root, '.credentials', 'recorder-s3')}): install the recorder with it (recorderManifests({ storageSecrets: ['recorder-s3'] }))`,
  );
  await h.reconcile('new');
  assert.equal(h.condition('new', 'Ready')?.reason, 'StoragePathInUse');
  assert.match(h.condition('new', 'Ready')?.message ?? '', /^ChangeRecorder old \(older\) records into s3:\/\/records\/history at http:\/\/127\.0\.0\.1:1, which overlaps s3:\/\/records\/history\/team-a at http:\/\/127\.0\.0\.1:1$/);
  assert.equal(h.sessions.get('new'), undefined);
});

test('a selector watches the namespaces it picks; cluster-scoped kinds are watched whole', async (t) => {
  const h = await harness(t, () => ({ found: [CM], missing: [], unavailable: [] }));
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
  const x: StorageTarget = { path: 'x' };
  assert.equal(storageRival(b, x, [{ recorder: a, target: x }])?.recorder, a, 'same age: the name decides');
  assert.equal(storageRival(a, x, [{ recorder: b, target: x }]), undefined);
});

test('object store folders overlap when nested in one bucket of one server; a directory never overlaps a bucket', () => {
  const s3 = (prefix: string, bucket = 'records', endpoint = 'http://minio:9000'): StorageTarget => ({ objectStore: { s3: { bucket, prefix, endpoint, credentialsSecret: 's' } } });
  assert.ok(targetsOverlap(s3('team-a'), s3('team-a/inner')));
  assert.ok(targetsOverlap(s3('team-a'), s3('team-a', 'records', 'http://minio:9000/')), 'a trailing slash names the same server');
  assert.ok(!targetsOverlap(s3('team-a'), s3('team-ab')));
  assert.ok(!targetsOverlap(s3('team-a'), s3('team-a', 'other-bucket')));
  assert.ok(!targetsOverlap(s3('team-a'), s3('team-a', 'records', 'http://other:9000')));
  assert.ok(!targetsOverlap(s3('team-a'), { objectStore: { gcs: { bucket: 'records', prefix: 'team-a', endpoint: 'http://minio:9000', credentialsSecret: 's' } } }), 'another kind of store');
  assert.ok(!targetsOverlap(s3('team-a'), { path: 'team-a' }));
});
