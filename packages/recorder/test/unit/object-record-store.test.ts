// The record store in object stores, against real servers started from @quorum/storage's testing servers:
// MinIO (S3), fake-gcs-server (GCS) and Azurite (Azure Blob). The layout under the prefix, the index read
// back at open (records, last-seen copies, the redaction key, bytes used), retention deleting objects, an
// upload that fails leaving no record, and a session that was down finding what changed meanwhile from
// the last-seen copies in the bucket; and the history endpoint's reader serving the store beside those on
// the volume.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { PassThrough, type Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import { after, before, describe, test } from 'node:test';
import { parse } from 'yaml';
import { ConfigMaps, type KubeObject, type OpenObject, type ResourceType } from '@quorum/runtime';
import { openStore, type Location, type ObjectStore } from '@quorum/storage';
import {
  azuriteConnectionString,
  createAzuriteContainer,
  createGcsBucket,
  createMinioBucket,
  credentialsDir,
  MINIO_PASSWORD,
  MINIO_USER,
  startAzurite,
  startFakeGcs,
  startMinio,
  type StorageServer,
} from '@quorum/localkube/testing/storage';
import type { ChangeRecorder } from '../../src/api/changerecorder.ts';
import { allowAll } from '../../src/history/access.ts';
import { HistoryHandlers } from '../../src/history/handlers.ts';
import type { DiffResponse, ErrorResponse, ObjectsResponse, RecordResponse, RecordsResponse } from '../../src/history/protocol.ts';
import { StoreReader } from '../../src/history/store-reader.ts';
import { lastSeenOf, recordOfDeletion, recordOfUpdate, type CleaningContext } from '../../src/record/changes.ts';
import { parseRecord } from '../../src/record/record-file.ts';
import type { ResolvedKind } from '../../src/recorder/discovery.ts';
import { RecorderSession, type SessionSettings } from '../../src/recorder/session.ts';
import { LAST_SEEN_FILE, STORE_MARKER_FILE, type ObjectRef } from '../../src/store/layout.ts';
import { ObjectRecordStore } from '../../src/store/object-record-store.ts';
import { FileRecordStore, type RecordStore } from '../../src/store/record-store.ts';
import { objectStoreName, objectStoreSources } from '../../src/store/target.ts';
import { FakeApi, MemoryRedactionKeys, until } from './fake-api.ts';

/** The recorder's Secret of redaction keys, as the stores of this file see it. */
const redactionKeys = new MemoryRedactionKeys();

const BUCKET = 'quorum-records';
const SECRET = 'recorder-credentials';

const cm: ObjectRef = { group: '', kind: 'ConfigMap', namespace: 'default', name: 'app' };
const role: ObjectRef = { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', namespace: '', name: 'system:reader' };

function configMap(rv: string, color: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default', resourceVersion: rv }, data: { color } } as KubeObject;
}

function contextOf(store: RecordStore): CleaningContext {
  return { settings: { status: false, secrets: 'redact' }, redactionKey: store.redactionKey };
}

interface Backend {
  name: string;
  /** Starts the server and creates the bucket; returns the location of the bucket (without a prefix). */
  start(scratch: string): Promise<{ location: (prefix: string) => Location; credentials: string }>;
  stop(): Promise<void>;
}

function backend(name: string, start: (scratch: string) => Promise<{ server: StorageServer; location: (prefix: string) => Location; credentials: string }>): Backend {
  let server: StorageServer | undefined;
  return {
    name,
    async start(scratch) {
      const started = await start(scratch);
      server = started.server;
      return started;
    },
    stop: async () => server?.stop(),
  };
}

const BACKENDS: Backend[] = [
  backend('s3 (MinIO)', async (scratch) => {
    const server = await startMinio();
    await createMinioBucket(server.endpoint, BUCKET);
    return {
      server,
      location: (prefix) => ({ s3: { bucket: BUCKET, prefix, endpoint: server.endpoint, forcePathStyle: true, credentialsSecret: SECRET } }),
      credentials: await credentialsDir(scratch, SECRET, { accessKeyId: MINIO_USER, secretAccessKey: MINIO_PASSWORD }),
    };
  }),
  backend('gcs (fake-gcs-server)', async (scratch) => {
    const server = await startFakeGcs();
    await createGcsBucket(server.endpoint, BUCKET);
    return {
      server,
      location: (prefix) => ({ gcs: { bucket: BUCKET, prefix, endpoint: server.endpoint, credentialsSecret: SECRET } }),
      // An emulator needs no service account: the Secret may be empty.
      credentials: await credentialsDir(scratch, SECRET, {}),
    };
  }),
  backend('azure (Azurite)', async (scratch) => {
    const server = await startAzurite();
    await createAzuriteContainer(server.endpoint, BUCKET);
    return {
      server,
      location: (prefix) => ({ azure: { container: BUCKET, prefix, credentialsSecret: SECRET } }),
      credentials: await credentialsDir(scratch, SECRET, { connectionString: azuriteConnectionString(server.endpoint) }),
    };
  }),
];

/** `body`'s first bytes, then an error: a connection that dropped in the middle of an upload, as a driver sees it. */
function brokenOff(body: Readable): Readable {
  const out = new PassThrough();
  body.once('data', (chunk: Buffer) => {
    out.write(chunk.subarray(0, Math.ceil(chunk.length / 2)));
    setImmediate(() => out.destroy(new Error('the connection dropped mid-upload')));
  });
  return out;
}

/** `store`, whose uploads break off while `failing()` says so. */
function failingUploads(store: ObjectStore, failing: () => boolean): ObjectStore {
  return {
    description: store.description,
    chunksDieYoung: store.chunksDieYoung,
    upload: (key, body, opts) => store.upload(key, failing() ? brokenOff(body) : body, opts),
    download: (key, opts) => store.download(key, opts),
    delete: (key, opts) => store.delete(key, opts),
    list: (prefix, opts) => store.list(prefix, opts),
    close: () => store.close(),
  };
}

const kindOf = (type: ResourceType<OpenObject>, group: string): ResolvedKind => ({ group, kind: type.kind, version: 'v1', resource: type.plural, namespaced: type.namespaced, type });
const SETTINGS: SessionSettings = { cleaning: { status: false, secrets: 'redact' }, retention: { maxVersionsPerObject: 10 }, exclude: [] };

for (const b of BACKENDS) {
  describe(`record store on ${b.name}`, () => {
    let scratch: string;
    let location: (prefix: string) => Location;
    let credentials: string;
    /** The bucket as the driver sees it, to look past the record store. */
    let raw: ObjectStore;
    const open = async (prefix: string, wrap: (s: ObjectStore) => ObjectStore = (s) => s): Promise<ObjectRecordStore> =>
      ObjectRecordStore.open(wrap(await openStore(location(prefix), credentials, undefined, { maxAttempts: 2 })), prefix, redactionKeys);
    const keysUnder = async (prefix: string): Promise<string[]> => (await raw.list(prefix)).map((o) => o.key).sort();

    before(async () => {
      scratch = await mkdtemp(join(tmpdir(), 'recorder-object-store-'));
      ({ location, credentials } = await b.start(scratch));
      raw = await openStore(location(''), credentials, undefined, { maxAttempts: 2 });
    });
    after(async () => {
      raw?.close();
      await b.stop();
      await rm(scratch, { recursive: true, force: true });
    });

    test('records and last-seen copies land under prefix/ns/group.kind/name, cluster-scoped ones under _cluster; reopening reads back the index, the key and the bytes used', async (t) => {
      const store = await open('team-a/recorder');
      t.after(() => store.close());
      const context = contextOf(store);
      const t0 = new Date('2026-03-01T12:00:00.000Z');
      await store.writeLastSeen(cm, lastSeenOf(configMap('1', 'red'), context, t0));
      const name = await store.writeRecord(cm, recordOfUpdate(configMap('1', 'red'), configMap('2', 'blue'), context, t0)!);
      await store.writeLastSeen(cm, lastSeenOf(configMap('2', 'blue'), context, t0));
      const roleObject = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'system:reader', resourceVersion: '5' }, rules: [] } as KubeObject;
      const roleRecord = await store.writeRecord(role, recordOfDeletion(roleObject, context, t0));

      assert.equal(name, '20260301T120000.000Z-1.yaml');
      assert.deepEqual(await keysUnder('team-a/'), [
        `team-a/recorder/${STORE_MARKER_FILE}`,
        `team-a/recorder/_cluster/rbac.authorization.k8s.io.ClusterRole/system:reader/${roleRecord}`,
        `team-a/recorder/default/core.ConfigMap/app/${LAST_SEEN_FILE}`,
        `team-a/recorder/default/core.ConfigMap/app/${name}`,
      ]);
      const stored = await text(await raw.download(`team-a/recorder/default/core.ConfigMap/app/${name}`));
      assert.deepEqual(parse(stored), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default' }, data: { color: 'red' } }, 'kubectl apply -f takes the object as it is');
      assert.equal(parseRecord(stored, name).meta.replacedBy, '2');

      const before = store.stats();
      assert.equal(before.records, 2);
      assert.equal(before.lastRecordMs, t0.getTime());
      const listedBytes = (await raw.list('team-a/recorder/')).filter((o) => !o.key.endsWith(STORE_MARKER_FILE)).reduce((sum, o) => sum + o.sizeBytes, 0);
      assert.equal(before.bytes, listedBytes, 'storage used is the size of the records and last-seen copies');

      const reopened = await open('team-a/recorder');
      t.after(() => reopened.close());
      assert.deepEqual(reopened.stats(), before, 'counts, bytes and the last record time are read back from the listing');
      assert.deepEqual(Buffer.from(reopened.redactionKey), Buffer.from(store.redactionKey), 'the redaction key is kept');
      assert.deepEqual(reopened.records(cm), [name]);
      assert.deepEqual(reopened.lastSeenRefs('', 'ConfigMap'), [cm]);
      assert.deepEqual(reopened.lastSeenRefs('rbac.authorization.k8s.io', 'ClusterRole'), [], 'a deleted object has records but no last-seen copy');
      assert.equal((await reopened.readLastSeen(cm))?.meta.resourceVersion, '2', 'the newest version seen comes back at start');
      assert.deepEqual((await reopened.readRecord(cm, reopened.records(cm).at(-1)!)).object['data'], { color: 'red' }, 'and the newest record');

      // A store under another prefix of the same bucket is another store: nothing of team-a's is in it.
      const other = await open('team-b');
      t.after(() => other.close());
      assert.deepEqual(other.stats(), { records: 0, bytes: 0, lastRecordMs: undefined });
      assert.notDeepEqual(Buffer.from(other.redactionKey), Buffer.from(store.redactionKey));
    });

    test('retention deletes the objects past maxVersionsPerObject and maxAge, and the bytes used follow', async (t) => {
      const store = await open('retention');
      t.after(() => store.close());
      const context = contextOf(store);
      const start = Date.parse('2026-03-01T00:00:00.000Z');
      const names: string[] = [];
      for (let i = 0; i < 6; i++) names.push(await store.writeRecord(cm, recordOfUpdate(configMap(String(i), `c${i}`), configMap(String(i + 1), `c${i + 1}`), context, new Date(start + i * 3_600_000))!));
      const folder = 'retention/default/core.ConfigMap/app/';

      assert.equal(await store.retain(cm, { maxVersionsPerObject: 4 }, start + 6 * 3_600_000), 2);
      assert.deepEqual(store.records(cm), names.slice(2), 'the two oldest went');
      assert.deepEqual(await keysUnder(folder), names.slice(2).map((n) => folder + n));

      const policy = { maxVersionsPerObject: 10, maxAgeMs: 2.5 * 3_600_000 };
      const now = start + 6 * 3_600_000;
      assert.deepEqual(store.expired(policy, now), [cm]);
      assert.equal(store.nextExpiry(policy), start + 2 * 3_600_000 + 2.5 * 3_600_000);
      assert.equal(await store.retain(cm, policy, now), 2, 'records older than 2.5 h go (hours 2 and 3)');
      assert.deepEqual(await keysUnder(folder), names.slice(4).map((n) => folder + n));
      const listedBytes = (await raw.list(folder)).reduce((sum, o) => sum + o.sizeBytes, 0);
      assert.deepEqual(store.stats(), { records: 2, bytes: listedBytes, lastRecordMs: start + 5 * 3_600_000 });

      assert.equal(await store.retain(cm, { maxVersionsPerObject: 1, maxAgeMs: 1 }, now + 10 * 3_600_000), 2);
      assert.deepEqual(await keysUnder(folder), []);
      assert.equal(store.stats().bytes, 0);
      const reopened = await open('retention');
      t.after(() => reopened.close());
      assert.deepEqual(reopened.stats(), { records: 0, bytes: 0, lastRecordMs: undefined });
      assert.deepEqual(reopened.expired(policy, now), []);
    });

    test('an upload that fails leaves no record: none in the bucket, none in the index, none after reopening; a failed last-seen copy leaves the previous one', async (t) => {
      let failing = false;
      const store = await open('failures', (s) => failingUploads(s, () => failing));
      t.after(() => store.close());
      const context = contextOf(store);
      const t0 = new Date('2026-03-01T12:00:00.000Z');
      const kept = await store.writeRecord(cm, recordOfUpdate(configMap('1', 'red'), configMap('2', 'blue'), context, t0)!);
      await store.writeLastSeen(cm, lastSeenOf(configMap('2', 'blue'), context, t0));
      const before = store.stats();
      const keys = await keysUnder('failures/');

      failing = true;
      const t1 = new Date('2026-03-01T12:01:00.000Z');
      await assert.rejects(store.writeRecord(cm, recordOfUpdate(configMap('2', 'blue'), configMap('3', 'green'), context, t1)!), /the connection dropped mid-upload/);
      await assert.rejects(store.writeLastSeen(cm, lastSeenOf(configMap('3', 'green'), context, t1)), /the connection dropped mid-upload/);
      assert.deepEqual(await keysUnder('failures/'), keys, 'no object appeared, and none was replaced');
      assert.deepEqual(store.records(cm), [kept]);
      assert.deepEqual(store.stats(), before);
      assert.equal((await store.readLastSeen(cm))?.meta.resourceVersion, '2', 'the last-seen copy is the last complete one');

      const reopened = await open('failures');
      t.after(() => reopened.close());
      assert.deepEqual(reopened.records(cm), [kept]);
      assert.deepEqual(reopened.stats(), before);
      assert.equal((await reopened.readLastSeen(cm))?.meta.resourceVersion, '2');

      // The retry (the session retries a failed write in order) writes the record once, whole.
      failing = false;
      const retried = await store.writeRecord(cm, recordOfUpdate(configMap('2', 'blue'), configMap('3', 'green'), context, t1)!);
      assert.deepEqual(store.records(cm), [kept, retried]);
      assert.equal(parseRecord(await text(await raw.download(`failures/default/core.ConfigMap/app/${retried}`)), retried).meta.replacedBy, '3');
    });

    test('the history endpoint reads the store in the bucket beside those on the volume; a store it cannot open fails only the requests that read it', async (t) => {
      const store = await open('history');
      t.after(() => store.close());
      const context = contextOf(store);
      const at = (minute: number): Date => new Date(Date.UTC(2026, 2, 1, 12, minute));
      const versions = ['red', 'blue', 'green'].map((color, i) => configMap(String(i + 1), color));
      const ids: string[] = [];
      for (let i = 0; i < 2; i++) ids.push((await store.writeRecord(cm, recordOfUpdate(versions[i]!, versions[i + 1]!, context, at(i))!)).slice(0, -'.yaml'.length));
      await store.writeLastSeen(cm, lastSeenOf(versions[2]!, context, at(2)));
      const volume = join(scratch, 'volume');
      const onVolume = await FileRecordStore.open(join(volume, 'team-b'), redactionKeys);
      await onVolume.writeRecord(cm, recordOfUpdate(versions[0]!, versions[1]!, contextOf(onVolume), at(3))!);

      const recorder = (name: string, storage: Location): ChangeRecorder => ({ metadata: { name }, spec: { namespaces: { all: true }, storage } });
      const unmounted = ((l: Location): Location => JSON.parse(JSON.stringify(l).replaceAll(SECRET, 'not-mounted')) as Location)(location('broken'));
      const recorders = [recorder('history', location('history')), recorder('broken', unmounted)];
      const reader = new StoreReader(volume, { objectStores: () => Promise.resolve(objectStoreSources(recorders, scratch)) });
      t.after(() => reader.close());
      const handlers = new HistoryHandlers(reader);
      const url = (path: string, query: Record<string, string> = {}): URL => new URL(`${path}?${new URLSearchParams(query).toString()}`, 'http://x.invalid');
      const name = objectStoreName(location('history'));
      assert.match(name, /^(s3|gs|azure):\/\/quorum-records\/history$/);
      assert.deepEqual((await reader.stores()).map((s) => s.name).sort(), [objectStoreName(unmounted), name, 'team-b'].sort());

      const everything = await handlers.handle(url('/v1/objects'), allowAll());
      assert.equal(everything.status, 503, 'a store that cannot be read is not skipped in silence');
      assert.match((everything.body as ErrorResponse).error, /the credentials Secret not-mounted is not mounted into the recorder's pod/);

      const objects = (await handlers.handle(url('/v1/objects', { store: name }), allowAll())).body as ObjectsResponse;
      assert.deepEqual(objects.objects.map((o) => [o.store, o.namespace, o.kind, o.name, o.records, o.live]), [[name, 'default', 'ConfigMap', 'app', 2, true]]);
      const id = { group: '', kind: 'ConfigMap', namespace: 'default', name: 'app' };
      const records = (await handlers.handle(url('/v1/records', { ...id, store: name }), allowAll())).body as RecordsResponse;
      assert.deepEqual(records.records.map((r) => r.id), ids);
      assert.deepEqual(records.lastSeen, [{ store: name, resourceVersion: '3', seenAt: at(2).toISOString() }]);
      const record = (await handlers.handle(url('/v1/record', { ...id, id: ids[0]!, store: name }), allowAll())).body as RecordResponse;
      assert.deepEqual((parse(record.yaml) as { data: unknown }).data, { color: 'red' });
      const diff = (await handlers.handle(url('/v1/diff', { ...id, id: ids[1]!, to: 'current', store: name }), allowAll())).body as DiffResponse;
      assert.match(diff.diff, /^-\s+color: blue\n\+\s+color: green$/m);
      const missing = await handlers.handle(url('/v1/record', { ...id, id: '20260301T130000.000Z-9', store: name }), allowAll());
      assert.equal(missing.status, 404);
      assert.match((missing.body as ErrorResponse).error, new RegExp(`ConfigMap default/app has no record 20260301T130000.000Z-9 \\(its records: ${ids.join(', ')}`));

      // Once no ChangeRecorder names the broken store, every store is read together.
      recorders.pop();
      const together = (await new HistoryHandlers(new StoreReader(volume, { objectStores: () => Promise.resolve(objectStoreSources(recorders, scratch)) })).handle(url('/v1/records', id), allowAll())).body as RecordsResponse;
      assert.deepEqual(together.records.map((r) => r.store).sort(), [name, name, 'team-b'].sort());
    });

    test('a session that was down finds the changes and deletions made meanwhile from the last-seen copies in the bucket', async (t) => {
      const api = new FakeApi();
      const CM = kindOf(ConfigMaps, '');
      const configMapObject = (name: string, v: string, manager = 'kubectl-edit'): OpenObject => ({
        metadata: { name, namespace: 'default', managedFields: [{ manager, operation: 'Update', time: new Date().toISOString().slice(0, 19) + 'Z', fieldsV1: {} }] },
        data: { v },
      });
      const session = async (): Promise<RecorderSession> => {
        const s = await RecorderSession.open({ name: 'test', location: { objectStore: location('sessions'), credentialsDir: credentials }, client: api.asClient(), redactionKeys, onActivity: () => undefined, onNamespacesChanged: () => undefined });
        await s.configure(SETTINGS);
        await s.watch([{ kind: CM, namespace: 'default' }]);
        await until('the watch is live', () => s.report().watches.every((w) => w.ready));
        await s.idle();
        return s;
      };
      for (const name of ['a', 'b']) api.create(ConfigMaps, configMapObject(name, '1'));
      const first = await session();
      assert.deepEqual(await keysUnder('sessions/default/'), ['a', 'b'].map((n) => `sessions/default/core.ConfigMap/${n}/${LAST_SEEN_FILE}`));
      await first.close();

      api.update(ConfigMaps, configMapObject('a', '2', 'argocd'));
      api.remove(ConfigMaps, 'default', 'b');
      const second = await session();
      t.after(() => second.close());
      assert.equal(second.report().written, 2);
      const recordOf = async (name: string): Promise<ReturnType<typeof parseRecord>> => {
        const [key, ...more] = (await keysUnder(`sessions/default/core.ConfigMap/${name}/`)).filter((k) => !k.endsWith(LAST_SEEN_FILE));
        assert.ok(key !== undefined && more.length === 0, `one record of ${name}`);
        return parseRecord(await text(await raw.download(key)), key);
      };
      const changed = await recordOf('a');
      assert.equal(changed.meta.reason, 'ChangedWhileNotWatching');
      assert.equal(changed.meta.seenLate, true);
      assert.deepEqual(changed.object['data'], { v: '1' });
      const deleted = await recordOf('b');
      assert.equal(deleted.meta.reason, 'DeletedWhileNotWatching');
      const keysOfB = await keysUnder('sessions/default/core.ConfigMap/b/');
      assert.ok(keysOfB.length === 1 && !keysOfB[0]!.endsWith(LAST_SEEN_FILE), 'the deleted object keeps its record and loses its last-seen copy');
      assert.equal(second.report().store.records, 2);
    });
  });
}
