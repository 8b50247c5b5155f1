// The record store on real temporary directories: the layout, atomic writes, reopening (the index read
// back), a crash's leftover temporary file, retention, and the record file format.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parse } from 'yaml';
import type { KubeObject } from '@quorum/runtime';
import { lastSeenOf, recordOfDeletion, recordOfUpdate, type CleaningContext } from '../../src/record/changes.ts';
import { formatRecord, isRecordFileName, parseRecord, recordFileName, recordTime, type RecordMeta } from '../../src/record/record-file.ts';
import { recordsToRemove } from '../../src/record/retention.ts';
import { TEMP_PREFIX } from '../../src/store/durable-fs.ts';
import { LAST_SEEN_FILE, parseStoreMarker, REDACTION_KEY_FILE, STORE_MARKER_FILE, type ObjectRef } from '../../src/store/layout.ts';
import { FileRecordStore, type RecordStore } from '../../src/store/record-store.ts';
import { MemoryRedactionKeys } from './fake-api.ts';

const keys = new MemoryRedactionKeys();

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'recorder-store-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  return dir;
}

const cm: ObjectRef = { group: '', kind: 'ConfigMap', namespace: 'default', name: 'app' };
const role: ObjectRef = { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', namespace: '', name: 'system:reader' };

function configMap(rv: string, color: string): KubeObject {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default', resourceVersion: rv }, data: { color } } as KubeObject;
}

function contextOf(store: RecordStore): CleaningContext {
  return { settings: { status: false, secrets: 'redact' }, redactionKey: store.redactionKey };
}

test('record file names sort by time and carry the resourceVersion', () => {
  const name = recordFileName('2026-03-01T12:00:05.123Z', '4711');
  assert.equal(name, '20260301T120005.123Z-4711.yaml');
  assert.ok(isRecordFileName(name));
  assert.equal(recordTime(name), Date.parse('2026-03-01T12:00:05.123Z'));
  assert.ok(recordFileName('2026-03-01T12:00:05.123Z', '9') < recordFileName('2026-03-01T12:00:05.124Z', '1'));
  assert.equal(recordFileName('2026-03-01T12:00:05.123Z', 'a/b:c'), '20260301T120005.123Z-abc.yaml', 'an unusual resourceVersion stays file-name safe');
  assert.ok(!isRecordFileName(LAST_SEEN_FILE) && !isRecordFileName(`${TEMP_PREFIX}x.yaml.abc`));
});

test('a record file is the object as YAML under a commented header, and reads back whole', () => {
  const meta: RecordMeta = {
    reason: 'Updated',
    seenLate: false,
    recordedAt: '2026-03-01T12:00:00.000Z',
    resourceVersion: '1',
    replacedBy: '2',
    changedBy: { manager: 'kubectl-edit', operation: 'Update' },
    changedAt: '2026-03-01T11:59:59Z',
    cleaning: { status: false, secrets: 'redact' },
    // Lines a YAML comment block must carry through: an empty context line, trailing spaces, a '#'.
    diff: '--- a\n+++ b\n@@ -1,3 +1,3 @@\n \n-x: "1 "  \n+x: 2 # two\n',
  };
  const object = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app' }, data: { x: '1 ' } };
  const text = formatRecord(meta, object);
  assert.deepEqual(parse(text), object, 'a YAML reader (kubectl apply -f) sees only the object');
  assert.deepEqual(parseRecord(text, 'f'), { meta, object });
  assert.throws(() => parseRecord('apiVersion: v1\n', 'f.yaml'), /f\.yaml: not a record/);
});

test('records and last-seen copies land in ns/group.kind/name, cluster-scoped ones under _cluster, and survive a reopen', async (t) => {
  const root = await tempDir(t);
  const store = await FileRecordStore.open(join(root, 'recorder-a'), keys);
  const context = contextOf(store);
  const t0 = new Date('2026-03-01T12:00:00.000Z');
  await store.writeLastSeen(cm, lastSeenOf(configMap('1', 'red'), context, t0));
  const update = recordOfUpdate(configMap('1', 'red'), configMap('2', 'blue'), context, t0);
  assert.ok(update);
  const name = await store.writeRecord(cm, update);
  await store.writeLastSeen(cm, lastSeenOf(configMap('2', 'blue'), context, t0));
  const roleObj = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: { name: 'system:reader', resourceVersion: '5' }, rules: [] } as KubeObject;
  await store.writeRecord(role, recordOfDeletion(roleObj, context, t0));

  const dir = join(root, 'recorder-a', 'default', 'core.ConfigMap', 'app');
  assert.deepEqual((await readdir(dir)).sort(), [LAST_SEEN_FILE, name].sort());
  assert.equal(name, '20260301T120000.000Z-1.yaml');
  assert.deepEqual(await readdir(join(root, 'recorder-a', '_cluster', 'rbac.authorization.k8s.io.ClusterRole')), ['system:reader']);
  assert.deepEqual(parse(await readFile(join(dir, name), 'utf8')), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default' }, data: { color: 'red' } });

  const before = store.stats();
  assert.equal(before.records, 2);
  assert.equal(before.lastRecordMs, t0.getTime());
  const reopened = await FileRecordStore.open(join(root, 'recorder-a'), keys);
  assert.deepEqual(reopened.stats(), before, 'counts, bytes and last record time are read back from the files');
  assert.deepEqual(reopened.records(cm), [name]);
  assert.deepEqual(Buffer.from(reopened.redactionKey), Buffer.from(store.redactionKey), 'the redaction key is kept');
  assert.deepEqual(reopened.lastSeenRefs('', 'ConfigMap'), [cm]);
  assert.deepEqual(reopened.lastSeenRefs('', 'ConfigMap', 'other'), []);
  assert.deepEqual(reopened.lastSeenRefs('rbac.authorization.k8s.io', 'ClusterRole'), [], 'a deleted object has records but no last-seen copy');
  const seen = await reopened.readLastSeen(cm);
  assert.equal(seen?.meta.resourceVersion, '2');
  assert.deepEqual((seen?.object as { data: unknown }).data, { color: 'blue' });
  const record = await reopened.readRecord(cm, name);
  assert.equal(record.meta.replacedBy, '2');

  let bytes = 0;
  for (const file of [join(dir, name), join(dir, LAST_SEEN_FILE), join(root, 'recorder-a', '_cluster', 'rbac.authorization.k8s.io.ClusterRole', 'system:reader', reopened.records(role)[0]!)]) {
    bytes += (await stat(file)).size;
  }
  assert.equal(before.bytes, bytes, 'storage used is the size of the records and last-seen copies');
});

test('a crash mid-write leaves only a temporary file, which opening the store removes; nothing torn is read', async (t) => {
  const root = await tempDir(t);
  const store = await FileRecordStore.open(root, keys);
  const context = contextOf(store);
  await store.writeLastSeen(cm, lastSeenOf(configMap('1', 'red'), context, new Date()));
  const dir = join(root, 'default', 'core.ConfigMap', 'app');
  // What a process killed between write and rename leaves: a half-written temporary file beside the real ones.
  const torn = `${TEMP_PREFIX}20260301T120000.000Z-2.yaml.0a1b2c`;
  await writeFile(join(dir, torn), '# history.quorum.dev record: the version below');
  await writeFile(join(dir, `${TEMP_PREFIX}${LAST_SEEN_FILE}.ffffff`), 'apiVersion: v1\nkind: Conf');

  const reopened = await FileRecordStore.open(root, keys);
  assert.deepEqual(await readdir(dir), [LAST_SEEN_FILE], 'leftover temporary files are gone');
  assert.deepEqual(reopened.records(cm), [], 'a torn write is never taken for a record');
  assert.equal((await reopened.readLastSeen(cm))?.meta.resourceVersion, '1', 'the last-seen copy is the last complete one');
  assert.ok((await readdir(root)).includes(STORE_MARKER_FILE));
});

test('the redaction key is kept apart from the store; a store that held its own key has it adopted, then removed', async (t) => {
  const root = await tempDir(t);
  const kept = new MemoryRedactionKeys();
  const fresh = await FileRecordStore.open(join(root, 'new'), kept);
  assert.deepEqual((await readdir(join(root, 'new'))).sort(), [STORE_MARKER_FILE], 'the store holds a marker, no key');
  const id = parseStoreMarker(await readFile(join(root, 'new', STORE_MARKER_FILE), 'utf8'), 'marker');
  assert.deepEqual(Buffer.from(kept.kept.get(id)!), Buffer.from(fresh.redactionKey));
  assert.doesNotMatch(await readFile(join(root, 'new', STORE_MARKER_FILE), 'utf8'), new RegExp(Buffer.from(fresh.redactionKey).toString('hex')));

  // A store written before the keys moved: its records' hashes were made with the key in its file.
  const legacyKey = Buffer.alloc(32, 7);
  await writeFile(join(root, REDACTION_KEY_FILE), `${legacyKey.toString('hex')}\n`);
  const context = (key: Uint8Array): CleaningContext => ({ settings: { status: false, secrets: 'redact' }, redactionKey: key });
  const secret = { apiVersion: 'v1', kind: 'Secret', metadata: { name: 's', namespace: 'default', resourceVersion: '1' }, data: { password: Buffer.from('hunter2').toString('base64') } } as KubeObject;
  const hashedBefore = lastSeenOf(secret, context(legacyKey), new Date()).object;
  const migrated = await FileRecordStore.open(root, kept);
  assert.deepEqual(Buffer.from(migrated.redactionKey), legacyKey, 'the old key is adopted');
  assert.deepEqual(lastSeenOf(secret, context(migrated.redactionKey), new Date()).object, hashedBefore, 'old and new hashes of a value compare equal');
  assert.ok(!(await readdir(root)).includes(REDACTION_KEY_FILE), 'the key file is gone from the store');
  const migratedId = parseStoreMarker(await readFile(join(root, STORE_MARKER_FILE), 'utf8'), 'marker');
  assert.deepEqual(Buffer.from(kept.kept.get(migratedId)!), legacyKey, 'kept apart, under the store id');
  assert.deepEqual(Buffer.from((await FileRecordStore.open(root, kept)).redactionKey), legacyKey, 'and found there on the next open');

  // A key file that disagrees with the kept key is refused, not silently replaced.
  await writeFile(join(root, REDACTION_KEY_FILE), `${Buffer.alloc(32, 9).toString('hex')}\n`);
  await assert.rejects(FileRecordStore.open(root, kept), /differs from the key/);
});

test('retention keeps exactly maxVersionsPerObject and drops records past maxAge', async (t) => {
  const root = await tempDir(t);
  const store = await FileRecordStore.open(root, keys);
  const context = contextOf(store);
  const start = Date.parse('2026-03-01T00:00:00.000Z');
  const names: string[] = [];
  for (let i = 0; i < 6; i++) {
    const record = recordOfUpdate(configMap(String(i), `c${i}`), configMap(String(i + 1), `c${i + 1}`), context, new Date(start + i * 3_600_000));
    assert.ok(record);
    names.push(await store.writeRecord(cm, record));
  }
  assert.equal(await store.retain(cm, { maxVersionsPerObject: 4 }, start + 6 * 3_600_000), 2);
  assert.deepEqual(store.records(cm), names.slice(2), 'the two oldest went');
  assert.deepEqual((await readdir(join(root, 'default', 'core.ConfigMap', 'app'))).sort(), names.slice(2));

  const policy = { maxVersionsPerObject: 10, maxAgeMs: 2.5 * 3_600_000 };
  const now = start + 6 * 3_600_000;
  assert.deepEqual(store.expired(policy, now), [cm]);
  assert.equal(store.nextExpiry(policy), start + 2 * 3_600_000 + 2.5 * 3_600_000);
  assert.equal(await store.retain(cm, policy, now), 2, 'records older than 2.5 h go (hours 2 and 3)');
  assert.deepEqual(store.records(cm), names.slice(4));
  assert.equal(store.stats().records, 2);

  assert.equal(await store.retain(cm, { maxVersionsPerObject: 1, maxAgeMs: 1 }, now + 10 * 3_600_000), 2);
  assert.deepEqual(await readdir(join(root, 'default', 'core.ConfigMap')), [], "an object with no record and no last-seen copy leaves no folder");
  assert.equal(store.stats().bytes, 0);
});

test('recordsToRemove: count first, then age', () => {
  const at = (h: number): string => recordFileName(new Date(Date.UTC(2026, 0, 1, h)).toISOString(), String(h));
  const names = [at(1), at(2), at(3)];
  assert.deepEqual(recordsToRemove(names, { maxVersionsPerObject: 3 }, 0), []);
  assert.deepEqual(recordsToRemove(names, { maxVersionsPerObject: 1 }, 0), [at(1), at(2)]);
  assert.deepEqual(recordsToRemove(names, { maxVersionsPerObject: 5, maxAgeMs: 90 * 60_000 }, Date.UTC(2026, 0, 1, 3)), [at(1)]);
});

test('two records of one version in the same millisecond do not overwrite each other', async (t) => {
  const store = await FileRecordStore.open(await tempDir(t), keys);
  const record = recordOfDeletion(configMap('7', 'x'), contextOf(store), new Date('2026-03-01T00:00:00.000Z'));
  const first = await store.writeRecord(cm, record);
  const second = await store.writeRecord(cm, record);
  assert.notEqual(first, second);
  assert.deepEqual(store.records(cm), [first, second]);
});
