// A recorder session end to end on a fake API server (list and watch only) and a real temporary directory:
// the runtime's informers feed it, and the records on disk are checked. The same scenarios run on localkube
// in test/integration/recorder.test.ts.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { applyPatch } from 'diff';
import { ConfigMaps, Deployments, Secrets, ClusterRoles, type OpenObject, type ResourceType } from '@quorum/runtime';
import { cleanObject } from '../../src/record/clean.ts';
import { objectYAML, parseRecord, type RecordMeta } from '../../src/record/record-file.ts';
import type { ResolvedKind } from '../../src/recorder/discovery.ts';
import { RecorderSession, type SessionSettings } from '../../src/recorder/session.ts';
import { LAST_SEEN_FILE } from '../../src/store/layout.ts';
import { FakeApi, MemoryRedactionKeys, until } from './fake-api.ts';

const kindOf = (type: ResourceType<OpenObject>, group: string): ResolvedKind => ({
  group,
  kind: type.kind,
  version: type.apiVersion.split('/').at(-1)!,
  resource: type.plural,
  namespaced: type.namespaced,
  type,
});
const CM = kindOf(ConfigMaps, '');
const SECRET = kindOf(Secrets, '');
const DEPLOY = kindOf(Deployments, 'apps');
const ROLE = kindOf(ClusterRoles, 'rbac.authorization.k8s.io');

const SETTINGS: SessionSettings = { cleaning: { status: false, secrets: 'redact' }, retention: { maxVersionsPerObject: 10 }, exclude: [] };

async function tempDir(t: { after: (fn: () => Promise<void>) => void }): Promise<string> {
  const dir = await mkdtemp(join(tmpdir(), 'recorder-session-'));
  // After-hooks run in the order they were added, so this one runs before the sessions' own close: a session
  // still writing can make the removal fail (ENOTEMPTY). It retries, and never throws, so the closes after it run.
  t.after(() => rm(dir, { recursive: true, force: true, maxRetries: 5, retryDelay: 50 }).catch(() => undefined));
  return dir;
}

async function start(api: FakeApi, dir: string, kinds: ResolvedKind[], settings: SessionSettings = SETTINGS, namespace = 'default'): Promise<RecorderSession> {
  const session = await RecorderSession.open({ name: 'test', location: { directory: dir }, client: api.asClient(), redactionKeys: new MemoryRedactionKeys(), onActivity: () => undefined, onNamespacesChanged: () => undefined });
  await session.configure(settings);
  await session.watch(kinds.map((kind) => (kind.namespaced ? { kind, namespace } : { kind })));
  await until('every watch live', () => session.report().watches.every((w) => w.ready));
  await session.idle();
  return session;
}

interface OnDisk {
  name: string;
  meta: RecordMeta;
  object: Record<string, unknown>;
}

async function recordsOf(dir: string, folder: string): Promise<OnDisk[]> {
  const names = (await readdir(join(dir, folder)).catch(() => [] as string[])).filter((n) => n.endsWith('.yaml') && !n.startsWith('.')).sort();
  return Promise.all(names.map(async (name) => ({ name, ...parseRecord(await readFile(join(dir, folder, name), 'utf8'), name) })));
}

async function recordsUntil(dir: string, folder: string, count: number): Promise<OnDisk[]> {
  return until(`${count} records in ${folder}`, async () => {
    const records = await recordsOf(dir, folder);
    return records.length >= count ? records : undefined;
  });
}

const configMap = (name: string, data: Record<string, string>, manager = 'kubectl-edit'): OpenObject => ({
  metadata: { name, namespace: 'default', managedFields: [{ manager, operation: 'Update', time: new Date().toISOString().slice(0, 19) + 'Z', fieldsV1: {} }] },
  data,
});

test('three edits give three records whose diffs turn each version into the next; a deletion keeps the last state', async (t) => {
  const api = new FakeApi();
  const dir = await tempDir(t);
  api.create(ConfigMaps, configMap('app', { color: 'red' }));
  const session = await start(api, dir, [CM]);
  t.after(() => session.close());
  const folder = 'default/core.ConfigMap/app';
  assert.deepEqual(await recordsOf(dir, folder), [], 'an object seen for the first time is not a change');
  assert.ok((await readdir(join(dir, folder))).includes(LAST_SEEN_FILE), 'but its last-seen copy is kept');

  const colors = ['red', 'blue', 'green', 'yellow'];
  for (const color of colors.slice(1)) api.update(ConfigMaps, configMap('app', { color }));
  const records = await recordsUntil(dir, folder, 3);
  assert.deepEqual(records.map((r) => (r.object.data as { color: string }).color), ['red', 'blue', 'green'], 'each record is the version before an edit');
  const live = objectYAML(cleanObject(api.get(ConfigMaps, 'default', 'app')!, SETTINGS.cleaning, new Uint8Array()));
  const versions = [...records.map((r) => objectYAML(r.object)), live];
  records.forEach((r, i) => {
    assert.equal(r.meta.reason, 'Updated');
    assert.equal(r.meta.changedBy?.manager, 'kubectl-edit');
    assert.equal(applyPatch(versions[i]!, r.meta.diff ?? ''), versions[i + 1], `record ${i + 1}'s diff gives the next version`);
  });

  api.remove(ConfigMaps, 'default', 'app');
  const all = await recordsUntil(dir, folder, 4);
  const deletion = all.at(-1)!;
  assert.equal(deletion.meta.reason, 'Deleted');
  assert.equal((deletion.object.data as { color: string }).color, 'yellow', 'the last state');
  await until('the last-seen copy removed', async () => !(await readdir(join(dir, folder))).includes(LAST_SEEN_FILE));
  assert.equal(session.report().written, 4);
});

test('a status-only change gives no record, a label change does', async (t) => {
  const api = new FakeApi();
  const dir = await tempDir(t);
  const deployment = (labels: Record<string, string>, ready: number): OpenObject => ({ metadata: { name: 'web', namespace: 'default', labels }, spec: { replicas: 3 }, status: { readyReplicas: ready } });
  api.create(Deployments, deployment({ app: 'web' }, 0));
  const session = await start(api, dir, [DEPLOY]);
  t.after(() => session.close());
  api.update(Deployments, deployment({ app: 'web' }, 1));
  api.update(Deployments, deployment({ app: 'web' }, 3));
  api.update(Deployments, deployment({ app: 'web', tier: 'front' }, 3));
  const records = await recordsUntil(dir, 'default/apps.Deployment/web', 1);
  await session.idle();
  assert.equal((await recordsOf(dir, 'default/apps.Deployment/web')).length, 1, 'only the label change (writes are in order, so the status changes came first)');
  assert.deepEqual((records[0]!.object.metadata as { labels: unknown }).labels, { app: 'web' });
  assert.equal(records[0]!.object.status, undefined, 'status is not kept');
});

test('Secrets are redacted: no value reaches the disk, the diff still shows which key changed', async (t) => {
  const api = new FakeApi();
  const dir = await tempDir(t);
  api.create(Secrets, { metadata: { name: 'db', namespace: 'default' }, type: 'Opaque', data: { password: 'czNjcjN0LW9uZQ==', user: 'YWRtaW4=' } });
  const session = await start(api, dir, [SECRET]);
  t.after(() => session.close());
  api.update(Secrets, { metadata: { name: 'db', namespace: 'default' }, type: 'Opaque', data: { password: 'czNjcjN0LXR3bw==', user: 'YWRtaW4=' } });
  const [record] = await recordsUntil(dir, 'default/core.Secret/db', 1);
  assert.deepEqual(Object.keys(record!.object.data as object), ['password', 'user']);
  assert.match(record!.meta.diff ?? '', /^-\s+password: hmac-sha256:/m);
  // The last-seen copy is written after the record: wait for it, or a temporary file may vanish under readdir.
  await session.idle();
  for (const file of await readdir(join(dir, 'default/core.Secret/db'))) {
    const text = await readFile(join(dir, 'default/core.Secret/db', file), 'utf8');
    for (const secret of ['czNjcjN0LW9uZQ==', 'czNjcjN0LXR3bw==', 'YWRtaW4=']) assert.ok(!text.includes(secret), `${file} holds no value`);
  }
});

test('stopped, then changes and deletions: at restart they are recorded as seen late, from the last-seen copies', async (t) => {
  const api = new FakeApi();
  const dir = await tempDir(t);
  for (const name of ['a', 'b', 'c']) api.create(ConfigMaps, configMap(name, { v: '1' }));
  const first = await start(api, dir, [CM]);
  await first.close();

  api.update(ConfigMaps, configMap('a', { v: '2' }, 'argocd'));
  api.update(ConfigMaps, configMap('a', { v: '3' }, 'argocd'));
  api.remove(ConfigMaps, 'default', 'b');
  api.update(ConfigMaps, configMap('c', { v: '1' }, 'someone')); // rewritten with the same content: not a change
  api.create(ConfigMaps, configMap('d', { v: '1' }));

  const second = await start(api, dir, [CM]);
  t.after(() => second.close());
  const [changed] = await recordsUntil(dir, 'default/core.ConfigMap/a', 1);
  assert.equal(changed!.meta.reason, 'ChangedWhileNotWatching');
  assert.equal(changed!.meta.seenLate, true);
  assert.deepEqual(changed!.object.data, { v: '1' }, 'the last version seen, with the diff to the one found');
  assert.equal(changed!.meta.changedBy?.manager, 'argocd');
  assert.match(changed!.meta.diff ?? '', /^-\s+v: "1"\n\+\s+v: "3"$/m);
  const [deleted] = await recordsUntil(dir, 'default/core.ConfigMap/b', 1);
  assert.equal(deleted!.meta.reason, 'DeletedWhileNotWatching');
  assert.equal(deleted!.meta.seenLate, true);
  assert.deepEqual(deleted!.object.data, { v: '1' });
  assert.deepEqual(await recordsOf(dir, 'default/core.ConfigMap/c'), []);
  assert.deepEqual(await readdir(join(dir, 'default/core.ConfigMap/d')), [LAST_SEEN_FILE], 'created while down: known from now on, nothing to record');
  assert.equal(second.report().written, 2);

  // Once seen, they are not found again at the next start.
  await second.close();
  const third = await start(api, dir, [CM]);
  t.after(() => third.close());
  assert.equal(third.report().written, 0);
});

test('retention through the session keeps exactly maxVersionsPerObject, the newest', async (t) => {
  const api = new FakeApi();
  const dir = await tempDir(t);
  api.create(ConfigMaps, configMap('app', { v: '0' }));
  const session = await start(api, dir, [CM], { ...SETTINGS, retention: { maxVersionsPerObject: 2 } });
  t.after(() => session.close());
  for (let v = 1; v <= 5; v++) api.update(ConfigMaps, configMap('app', { v: String(v) }));
  await until('five records written', () => session.report().written === 5);
  await session.idle();
  const records = await recordsOf(dir, 'default/core.ConfigMap/app');
  assert.deepEqual(records.map((r) => (r.object.data as { v: string }).v), ['3', '4']);
  assert.equal(session.report().store.records, 2);

  await session.configure({ ...SETTINGS, retention: { maxVersionsPerObject: 1 } });
  await session.idle();
  assert.deepEqual((await recordsOf(dir, 'default/core.ConfigMap/app')).map((r) => (r.object.data as { v: string }).v), ['4'], 'lowering the number applies at once');
});

test('excluded objects are not recorded; dropping the exclusion brings them in at the next comparison', async (t) => {
  const api = new FakeApi();
  const dir = await tempDir(t);
  api.create(ConfigMaps, configMap('skip-me', { v: '1' }));
  api.create(ConfigMaps, configMap('keep', { v: '1' }));
  const settings: SessionSettings = { ...SETTINGS, exclude: [{ name: 'skip-*' }] };
  const session = await start(api, dir, [CM], settings);
  t.after(() => session.close());
  api.update(ConfigMaps, configMap('skip-me', { v: '2' }));
  api.update(ConfigMaps, configMap('keep', { v: '2' }));
  await recordsUntil(dir, 'default/core.ConfigMap/keep', 1);
  await session.idle();
  assert.deepEqual(await readdir(join(dir, 'default/core.ConfigMap')), ['keep']);

  await session.configure(SETTINGS);
  await until('skip-me known', async () => (await readdir(join(dir, 'default/core.ConfigMap'))).includes('skip-me'));
  await until('watches live again', () => session.report().watches.every((w) => w.ready));
  api.update(ConfigMaps, configMap('skip-me', { v: '3' }));
  const [record] = await recordsUntil(dir, 'default/core.ConfigMap/skip-me', 1);
  assert.deepEqual(record!.object.data, { v: '2' });
});

test('cluster-scoped objects are recorded under _cluster', async (t) => {
  const api = new FakeApi();
  const dir = await tempDir(t);
  api.create(ClusterRoles, { metadata: { name: 'system:reader' }, rules: [{ verbs: ['get'] }] });
  const session = await start(api, dir, [ROLE]);
  t.after(() => session.close());
  api.update(ClusterRoles, { metadata: { name: 'system:reader' }, rules: [{ verbs: ['get', 'list'] }] });
  const [record] = await recordsUntil(dir, '_cluster/rbac.authorization.k8s.io.ClusterRole/system:reader', 1);
  assert.deepEqual(record!.object.rules, [{ verbs: ['get'] }]);
  assert.deepEqual(session.report().watches.map((w) => [w.target.namespace, w.objects]), [[undefined, 1]]);
});
