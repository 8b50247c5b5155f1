import { test } from 'node:test';
import assert from 'node:assert/strict';
import { EventRecorder, microTime, type EventRecorderOptions, type KubeEvent } from '../../src/helpers/events.ts';
import type { Client, JsonPatchOp } from '../../src/client/client.ts';
import { ApiError, NotFoundError } from '../../src/client/errors.ts';
import type { ResourceType } from '../../src/client/resources.ts';
import type { KubeObject, ObjectKey } from '../../src/object.ts';

/** An events endpoint: stores created Events, merges series patches into them, 404s for unknown names. */
class FakeEvents implements Pick<Client, 'create' | 'mergePatch' | 'jsonPatch'> {
  readonly creates: { type: ResourceType; obj: KubeEvent }[] = [];
  readonly patches: { type: ResourceType; key: ObjectKey; patch: unknown }[] = [];
  readonly jsonPatches: JsonPatchOp[][] = [];
  readonly stored = new Map<string, KubeEvent>();
  /** Errors for the next create / merge patch calls to fail with, in order. */
  readonly createFailures: Error[] = [];
  readonly patchFailures: Error[] = [];

  create<T extends KubeObject>(type: ResourceType<T>, obj: T): Promise<T> {
    const event = structuredClone(obj) as unknown as KubeEvent;
    this.creates.push({ type, obj: event });
    const failure = this.createFailures.shift();
    if (failure) return Promise.reject(failure);
    this.stored.set(`${event.metadata.namespace}/${event.metadata.name}`, event);
    return Promise.resolve(structuredClone(obj));
  }

  mergePatch<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, patch: unknown): Promise<T> {
    this.patches.push({ type, key, patch: structuredClone(patch) });
    const failure = this.patchFailures.shift();
    if (failure) return Promise.reject(failure);
    const event = this.stored.get(`${key.namespace}/${key.name}`);
    if (!event) return Promise.reject(new NotFoundError('PATCH', `/events/${key.name}`, 404, { reason: 'NotFound' }));
    Object.assign(event, patch);
    return Promise.resolve(structuredClone(event) as unknown as T);
  }

  jsonPatch<T extends KubeObject>(_type: ResourceType<T>, _key: ObjectKey, ops: JsonPatchOp[]): Promise<T> {
    this.jsonPatches.push(ops);
    return Promise.reject(new Error('the recorder should not use JSON patches'));
  }

  /** The one stored Event, failing unless there is exactly one. */
  only(): KubeEvent {
    assert.equal(this.stored.size, 1);
    return [...this.stored.values()][0]!;
  }
}

const T0 = Date.parse('2026-01-01T00:00:00Z');

function setup(options: Partial<EventRecorderOptions> = {}) {
  const client = new FakeEvents();
  const errors: unknown[] = [];
  const clock = { ms: T0 };
  const recorder = new EventRecorder(client, {
    controller: 'quorum.dev/etcd-operator',
    instance: 'etcd-operator-7d9f-abcde',
    now: () => new Date(clock.ms),
    onError: (error) => errors.push(error),
    ...options,
  });
  return { client, errors, clock, recorder };
}

const settle = () => new Promise<void>((resolve) => setImmediate(resolve));

const cluster: KubeObject = { apiVersion: 'quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'main', namespace: 'db', uid: 'uid-1', resourceVersion: '17' } };
const scaled = { type: 'Normal', reason: 'ScaledUp', action: 'Scale', note: 'scaled from 3 to 5 members' } as const;

test('microTime has microsecond precision', () => {
  assert.equal(microTime(new Date('2026-01-01T00:00:00.123Z')), '2026-01-01T00:00:00.123000Z');
});

test('record creates an events.k8s.io/v1 Event about the object in its namespace', async () => {
  const { client, clock, recorder, errors } = setup();
  clock.ms = T0 + 42;
  const pod: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'main-3', namespace: 'db', uid: 'pod-uid' } };
  recorder.record(cluster, { ...scaled, related: pod });
  await recorder.flush();
  assert.equal(client.creates.length, 1);
  const { type, obj } = client.creates[0]!;
  assert.deepEqual([type.apiVersion, type.kind, type.plural, type.namespaced], ['events.k8s.io/v1', 'Event', 'events', true]);
  assert.match(obj.metadata.name ?? '', /^main\.[0-9a-f]{16}$/);
  assert.deepEqual(obj, {
    apiVersion: 'events.k8s.io/v1',
    kind: 'Event',
    metadata: { name: obj.metadata.name, namespace: 'db' },
    eventTime: '2026-01-01T00:00:00.042000Z',
    reportingController: 'quorum.dev/etcd-operator',
    reportingInstance: 'etcd-operator-7d9f-abcde',
    type: 'Normal',
    reason: 'ScaledUp',
    action: 'Scale',
    note: 'scaled from 3 to 5 members',
    regarding: { apiVersion: 'quorum.dev/v1alpha1', kind: 'EtcdCluster', name: 'main', namespace: 'db', uid: 'uid-1', resourceVersion: '17' },
    related: { apiVersion: 'v1', kind: 'Pod', name: 'main-3', namespace: 'db', uid: 'pod-uid' },
  });
  assert.deepEqual(client.patches, []);
  assert.deepEqual(errors, []);
});

test('events about cluster-scoped objects go to the default namespace', async () => {
  const { client, recorder } = setup();
  recorder.record({ apiVersion: 'v1', kind: 'Node', metadata: { name: 'node-1', uid: 'n1' } }, { type: 'Warning', reason: 'Unreachable', action: 'Probe', note: '' });
  await recorder.flush();
  const event = client.creates[0]!.obj;
  assert.equal(event.metadata.namespace, 'default');
  assert.deepEqual(event.regarding, { apiVersion: 'v1', kind: 'Node', name: 'node-1', uid: 'n1' });
});

test('20 identical records within a second make one create, and flush writes a series of 20', async () => {
  const { client, clock, recorder, errors } = setup();
  for (let i = 0; i < 20; i++) {
    clock.ms = T0 + i * 50;
    recorder.record(cluster, scaled);
    await settle();
  }
  assert.equal(client.creates.length, 1);
  assert.ok(client.patches.length <= 1, `${client.patches.length} patches`);
  await recorder.flush();
  assert.equal(client.creates.length, 1);
  const name = client.creates[0]!.obj.metadata.name!;
  const last = client.patches.at(-1)!;
  assert.deepEqual(last.key, { namespace: 'db', name });
  assert.equal(last.type.plural, 'events');
  assert.deepEqual(last.patch, { series: { count: 20, lastObservedTime: '2026-01-01T00:00:00.950000Z' } });
  assert.deepEqual(client.only().series, { count: 20, lastObservedTime: '2026-01-01T00:00:00.950000Z' });
  assert.deepEqual(client.jsonPatches, []);
  assert.deepEqual(errors, []);
});

test('records made before the create lands are still counted', async () => {
  const { client, recorder } = setup();
  for (let i = 0; i < 20; i++) recorder.record(cluster, scaled);
  assert.equal(client.creates.length, 1);
  await recorder.flush();
  assert.deepEqual(client.patches.map((p) => p.patch), [{ series: { count: 20, lastObservedTime: '2026-01-01T00:00:00.000000Z' } }]);
});

test('series updates are spaced at least 5 s apart, written lazily by the next record', async () => {
  const { client, clock, recorder } = setup();
  const at = async (ms: number) => {
    clock.ms = T0 + ms;
    recorder.record(cluster, scaled);
    await settle();
  };
  await at(0); // create
  await at(1_000);
  await at(2_000);
  assert.equal(client.patches.length, 0);
  await at(6_000); // 5 s since the create: writes the three repeats so far
  assert.deepEqual(client.patches.map((p) => p.patch), [{ series: { count: 4, lastObservedTime: '2026-01-01T00:00:06.000000Z' } }]);
  await at(7_000);
  await at(10_999);
  assert.equal(client.patches.length, 1);
  await at(11_000);
  assert.deepEqual(client.patches.at(-1)?.patch, { series: { count: 7, lastObservedTime: '2026-01-01T00:00:11.000000Z' } });
  assert.equal(client.creates.length, 1);
});

test('a record of another event also writes series that are due', async () => {
  const { client, clock, recorder } = setup();
  recorder.record(cluster, scaled);
  await settle();
  clock.ms = T0 + 1_000;
  recorder.record(cluster, scaled);
  clock.ms = T0 + 5_000;
  recorder.record(cluster, { ...scaled, reason: 'Other' });
  await settle();
  assert.equal(client.creates.length, 2);
  assert.deepEqual(client.patches.map((p) => p.patch), [{ series: { count: 2, lastObservedTime: '2026-01-01T00:00:01.000000Z' } }]);
});

test('events differing in object, type, reason, action or note are kept apart', async () => {
  const { client, recorder } = setup();
  recorder.record(cluster, scaled);
  recorder.record({ ...cluster, metadata: { ...cluster.metadata, uid: 'uid-2' } }, scaled);
  recorder.record(cluster, { ...scaled, type: 'Warning' });
  recorder.record(cluster, { ...scaled, reason: 'ScaledDown' });
  recorder.record(cluster, { ...scaled, action: 'Resize' });
  recorder.record(cluster, { ...scaled, note: 'scaled from 5 to 7 members' });
  await recorder.flush();
  assert.equal(client.creates.length, 6);
  assert.equal(client.patches.length, 0);
  assert.equal(new Set(client.creates.map((c) => c.obj.metadata.name)).size, 6);
});

test('a series continues while repeats come within 10 minutes, and a later repeat starts a new Event', async () => {
  const { client, clock, recorder } = setup();
  for (let minute = 0; minute <= 30; minute += 5) {
    clock.ms = T0 + minute * 60_000;
    recorder.record(cluster, scaled);
    await settle();
  }
  assert.equal(client.creates.length, 1);
  assert.deepEqual(client.only().series?.count, 7);
  clock.ms = T0 + 40 * 60_000 + 1;
  recorder.record(cluster, scaled);
  await recorder.flush();
  assert.equal(client.creates.length, 2);
  assert.equal(client.creates[1]!.obj.eventTime, '2026-01-01T00:40:00.001000Z');
});

test('notes over 1 KiB are cut to fit, on a character boundary', async () => {
  const { client, recorder } = setup();
  recorder.record(cluster, { ...scaled, note: 'x'.repeat(2000) });
  recorder.record(cluster, { ...scaled, reason: 'Accents', note: 'é'.repeat(1000) });
  recorder.record(cluster, { ...scaled, reason: 'Exact', note: 'y'.repeat(1024) });
  await recorder.flush();
  const [ascii, accents, exact] = client.creates.map((c) => c.obj.note);
  assert.ok(ascii && accents && exact);
  assert.ok(Buffer.byteLength(ascii) <= 1024 && ascii.startsWith('xxxx') && ascii.endsWith('...'));
  assert.ok(Buffer.byteLength(accents) <= 1024 && !accents.includes('\uFFFD') && accents.startsWith('éé'));
  assert.equal(Buffer.byteLength(accents), 510 * 2 + 3); // as many whole two-byte characters as fit, then '...'
  assert.equal(exact, 'y'.repeat(1024));
});

test('event names stay valid DNS subdomains for long object names', async () => {
  const { client, recorder } = setup();
  const longName = `${'a'.repeat(235)}-${'b'.repeat(17)}`;
  recorder.record({ ...cluster, metadata: { ...cluster.metadata, name: longName } }, scaled);
  await recorder.flush();
  const name = client.creates[0]!.obj.metadata.name!;
  assert.ok(name.length <= 253, `${name.length}`);
  assert.match(name, /^a{235}\.[0-9a-f]{16}$/);
});

test('a failed create is reported, and the next repeat creates the Event again', async () => {
  const { client, recorder, errors } = setup();
  const forbidden = new ApiError('POST', '/events', 403, { reason: 'Forbidden', message: 'no' });
  client.createFailures.push(forbidden);
  recorder.record(cluster, scaled);
  recorder.record(cluster, scaled);
  await recorder.flush();
  assert.deepEqual(errors, [forbidden]);
  assert.equal(client.patches.length, 0);
  recorder.record(cluster, scaled);
  await recorder.flush();
  assert.equal(client.creates.length, 2);
  assert.equal(client.stored.size, 1);
});

test('a series patch that finds no Event starts a new one on the next repeat', async () => {
  const { client, recorder, errors } = setup();
  recorder.record(cluster, scaled);
  await settle();
  client.stored.clear(); // expired by the API server's event TTL
  recorder.record(cluster, scaled);
  await recorder.flush();
  assert.equal(errors.length, 1);
  assert.ok(errors[0] instanceof NotFoundError);
  recorder.record(cluster, scaled);
  await recorder.flush();
  assert.equal(client.creates.length, 2);
  assert.equal(client.only().series, undefined);
});

test('counts from a failed series patch are written by the next one', async () => {
  const { client, recorder, errors } = setup();
  recorder.record(cluster, scaled);
  recorder.record(cluster, scaled);
  recorder.record(cluster, scaled);
  client.patchFailures.push(new ApiError('PATCH', '/events', 500, { message: 'etcd timeout' }));
  await recorder.flush();
  assert.equal(errors.length, 1);
  assert.equal(client.only().series, undefined);
  recorder.record(cluster, scaled);
  await recorder.flush();
  assert.equal(client.only().series?.count, 4);
});

test('record never throws, even when the client, the input or onError does', async () => {
  const errors: unknown[] = [];
  const throwing: Pick<Client, 'create' | 'mergePatch'> = {
    create: () => {
      throw new Error('sync failure');
    },
    mergePatch: () => Promise.reject(new Error('unused')),
  };
  const recorder = new EventRecorder(throwing, { controller: 'c', instance: 'i', onError: (error) => errors.push(error) });
  assert.doesNotThrow(() => recorder.record(cluster, scaled));
  assert.doesNotThrow(() => recorder.record({} as KubeObject, scaled));
  await recorder.flush();
  assert.equal(errors.length, 2);

  const angry = new EventRecorder(throwing, {
    controller: 'c',
    instance: 'i',
    onError: () => {
      throw new Error('handler failure');
    },
  });
  assert.doesNotThrow(() => angry.record(cluster, scaled));
  await angry.flush();
});

test('without onError the first failure becomes a process warning', async () => {
  const client = new FakeEvents();
  client.createFailures.push(new Error('denied'), new Error('denied again'));
  const warnings: Error[] = [];
  const onWarning = (warning: Error) => warnings.push(warning);
  process.on('warning', onWarning);
  try {
    const recorder = new EventRecorder(client, { controller: 'c', instance: 'i' });
    recorder.record(cluster, scaled);
    await recorder.flush();
    recorder.record(cluster, scaled);
    await recorder.flush();
    await settle();
  } finally {
    process.off('warning', onWarning);
  }
  assert.equal(warnings.length, 1);
  assert.match(warnings[0]!.message, /denied/);
});

test('the recorder requires its reporting controller and instance', () => {
  const client = new FakeEvents();
  assert.throws(() => new EventRecorder(client, { controller: '', instance: 'i' }), /controller/);
  assert.throws(() => new EventRecorder(client, { controller: 'c', instance: '' }), /instance/);
});
