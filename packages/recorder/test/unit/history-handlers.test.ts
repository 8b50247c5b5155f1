// The history endpoint's handlers on real record stores in a temporary directory (written by the
// recorder's own RecordStore): listing, one object's records, one record, diffs; what a caller who may not
// read a kind or namespace sees (nothing about those objects, and why); names that would leave the store;
// and the HTTPS server's refusals that come before any question to the API server.
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { test } from 'node:test';
import { applyPatch } from 'diff';
import { parse } from 'yaml';
import type { Client } from '@quorum/runtime';
import { allowAll, type Access, type AccessCheck } from '../../src/history/access.ts';
import { HistoryHandlers } from '../../src/history/handlers.ts';
import type { DiffResponse, ErrorResponse, ObjectsResponse, RecordResponse, RecordsResponse } from '../../src/history/protocol.ts';
import { bearerToken, HistoryServer } from '../../src/history/server.ts';
import { StoreReader } from '../../src/history/store-reader.ts';
import { CM, DEPLOY, ROLE, SECRET, writeFixture } from './history-fixture.ts';

/** An access policy: what the caller may do, as (verb, kind, namespace) rules; namespace '' covers every one. */
function policy(user: string, rules: Omit<AccessCheck, 'name'>[]): Access & { asked: AccessCheck[] } {
  const asked: AccessCheck[] = [];
  return {
    user,
    asked,
    check: (req) => {
      asked.push(req);
      const ok = rules.some((r) => r.verb === req.verb && r.group === req.group && r.kind === req.kind && (r.namespace === '' || r.namespace === req.namespace));
      return Promise.resolve({ allowed: ok, reason: ok ? '' : `${user} may not ${req.verb} ${req.kind} in ${req.namespace || 'the cluster'}` });
    },
  };
}

const url = (path: string, query: Record<string, string> = {}): URL => new URL(`${path}?${new URLSearchParams(query).toString()}`, 'http://x.invalid');
const q = (ref: { group: string; kind: string; namespace: string; name: string }): Record<string, string> => ({ ...ref });

test('stores are found below the root, nested ones too; kinds say whether they are namespaced', async (t) => {
  const { root } = await writeFixture(t);
  const reader = new StoreReader(root);
  assert.deepEqual((await reader.stores()).map((s) => s.name), ['rec-a', 'team/b']);
  assert.deepEqual(await reader.kinds(), [
    { group: 'rbac.authorization.k8s.io', kind: 'ClusterRole', namespaced: false },
    { group: '', kind: 'ConfigMap', namespaced: true },
    { group: 'apps', kind: 'Deployment', namespaced: true },
    { group: '', kind: 'Secret', namespaced: true },
  ]);
  // A root that is itself a store (a copy of one) is read as that store.
  assert.deepEqual((await new StoreReader(`${root}/rec-a`).stores()).map((s) => s.name), ['rec-a']);
});

test('objects: every object with records, newest record and state, sorted; filters by namespace, kind and name', async (t) => {
  const { root, ids } = await writeFixture(t);
  const handlers = new HistoryHandlers(new StoreReader(root));
  const all = (await handlers.handle(url('/v1/objects'), allowAll())).body as ObjectsResponse;
  assert.deepEqual(
    all.objects.map((o) => [o.store, o.namespace, o.kind, o.name, o.records, o.live, o.newest?.reason]),
    [
      ['rec-a', '', 'ClusterRole', 'reader', 1, false, 'Deleted'],
      ['rec-a', 'default', 'ConfigMap', 'app', 3, true, 'Updated'],
      ['team/b', 'default', 'ConfigMap', 'app', 1, true, 'Updated'],
      ['rec-a', 'default', 'Deployment', 'web', 2, false, 'Deleted'],
      ['rec-a', 'prod', 'Secret', 'db', 1, true, 'Updated'],
    ],
  );
  assert.equal(all.objects[1]!.newest?.id, ids.cm[2]);
  assert.equal(all.objects[1]!.newest?.changedBy?.manager, 'kubectl-edit');
  assert.deepEqual(all.denied, []);

  const inDefault = (await handlers.objects({ namespace: 'default' }, allowAll())).objects;
  assert.deepEqual(inDefault.map((o) => o.kind), ['ConfigMap', 'ConfigMap', 'Deployment']);
  const clusterScoped = (await handlers.objects({ namespace: '' }, allowAll())).objects;
  assert.deepEqual(clusterScoped.map((o) => o.name), ['reader']);
  const deployments = (await handlers.objects({ group: 'apps', kind: 'Deployment' }, allowAll())).objects;
  assert.deepEqual(deployments.map((o) => o.name), ['web']);
  const byName = (await handlers.objects({ name: 'app' }, allowAll(), 'team/b')).objects;
  assert.deepEqual(byName.map((o) => [o.store, o.name]), [['team/b', 'app']]);
});

test('objects: scopes the caller may not list are left out and named, with the reason; one cluster-wide review per kind when it suffices', async (t) => {
  const { root } = await writeFixture(t);
  const handlers = new HistoryHandlers(new StoreReader(root));
  const dev = policy('dev', [
    { verb: 'list', group: '', kind: 'ConfigMap', namespace: '' },
    { verb: 'list', group: 'apps', kind: 'Deployment', namespace: 'default' },
  ]);
  const response = await handlers.objects({}, dev);
  assert.deepEqual(response.objects.map((o) => `${o.kind}/${o.name}@${o.store}`), ['ConfigMap/app@rec-a', 'ConfigMap/app@team/b', 'Deployment/web@rec-a']);
  assert.deepEqual(
    response.denied.map((d) => [d.kind, d.namespace, d.reason]),
    [
      ['ClusterRole', '', 'dev may not list ClusterRole in the cluster'],
      ['Secret', 'prod', 'dev may not list Secret in prod'],
    ],
  );
  const configMapChecks = dev.asked.filter((a) => a.kind === 'ConfigMap');
  assert.deepEqual(configMapChecks, [{ verb: 'list', group: '', kind: 'ConfigMap', namespace: '' }], 'allowed cluster-wide: asked once for two objects');
  assert.deepEqual(
    dev.asked.filter((a) => a.kind === 'Deployment').map((a) => a.namespace),
    ['', 'default'],
    'not allowed cluster-wide: then asked for the namespace',
  );

  // Asked for one namespace, the caller is asked about that namespace only.
  const ops = policy('ops', [{ verb: 'list', group: '', kind: 'Secret', namespace: 'prod' }]);
  const secrets = await handlers.objects({ namespace: 'prod' }, ops);
  assert.deepEqual(secrets.objects.map((o) => o.name), ['db']);
  assert.deepEqual(ops.asked, [{ verb: 'list', group: '', kind: 'Secret', namespace: 'prod' }]);
});

test("records: an object's records oldest first across stores, with where it was last seen; get is asked for the object by name", async (t) => {
  const { root, ids } = await writeFixture(t);
  const handlers = new HistoryHandlers(new StoreReader(root));
  const reader = policy('r', [{ verb: 'get', group: '', kind: 'ConfigMap', namespace: 'default' }]);
  const response = (await handlers.handle(url('/v1/records', q(CM)), reader)).body as RecordsResponse;
  assert.deepEqual(response.object, CM);
  assert.deepEqual(response.records.map((r) => [r.store, r.id]), [...ids.cm.map((id) => ['rec-a', id]), ['team/b', ids.cmInB[0]]]);
  assert.deepEqual(response.records.map((r) => r.resourceVersion), ['1', '2', '3', '3']);
  assert.deepEqual(response.records.map((r) => r.replacedBy), ['2', '3', '4', '4']);
  assert.deepEqual(response.lastSeen.map((s) => [s.store, s.resourceVersion]), [['rec-a', '4'], ['team/b', '4']]);
  assert.deepEqual(reader.asked, [{ verb: 'get', group: '', kind: 'ConfigMap', namespace: 'default', name: 'app' }]);

  const deleted = await handlers.records(DEPLOY, allowAll());
  assert.deepEqual(deleted.records.map((r) => r.reason), ['Updated', 'Deleted']);
  assert.deepEqual(deleted.lastSeen, [], 'deleted: no last-seen copy');
  const role = await handlers.records(ROLE, allowAll());
  assert.deepEqual(role.records.map((r) => r.id), ids.role);
});

test('a caller who may not get the object learns nothing of it, not even whether it has records', async (t) => {
  const { root } = await writeFixture(t);
  const handlers = new HistoryHandlers(new StoreReader(root));
  const dev = policy('dev', [{ verb: 'get', group: '', kind: 'ConfigMap', namespace: '' }]);
  for (const ref of [SECRET, { ...SECRET, name: 'no-such-secret' }]) {
    const reply = await handlers.handle(url('/v1/records', q(ref)), dev);
    assert.equal(reply.status, 403);
    assert.match((reply.body as ErrorResponse).error, new RegExp(`^the records of Secret prod/${ref.name} are not shown: dev may not get Secret in prod$`));
  }
  const missing = await handlers.handle(url('/v1/records', q({ ...CM, name: 'nope' })), dev);
  assert.equal(missing.status, 404);
  assert.equal((missing.body as ErrorResponse).error, 'no records of ConfigMap default/nope');
  const record = await handlers.handle(url('/v1/record', { ...q(SECRET), id: '20260301T120700.000Z-20' }), dev);
  assert.equal(record.status, 403, 'nor its records');
  const diff = await handlers.handle(url('/v1/diff', { ...q(SECRET), id: '20260301T120700.000Z-20' }), dev);
  assert.equal(diff.status, 403, 'nor diffs');
});

test("record: the recorded object as YAML and what the record says; a missing record is named with the object's records", async (t) => {
  const { root, ids, cmData } = await writeFixture(t);
  const handlers = new HistoryHandlers(new StoreReader(root));
  const reply = await handlers.handle(url('/v1/record', { ...q(CM), id: ids.cm[1]!, store: 'rec-a' }), allowAll());
  assert.equal(reply.status, 200);
  const { record, yaml, object } = reply.body as RecordResponse;
  assert.deepEqual(object, CM);
  assert.deepEqual(parse(yaml), { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'app', namespace: 'default' }, data: cmData[1] });
  assert.equal(record.id, ids.cm[1]);
  assert.equal(record.reason, 'Updated');
  assert.deepEqual(record.cleaning, { status: false, secrets: 'redact' });
  assert.match(record.diff ?? '', /^\+\s+extra: x$/m);

  const secret = (await handlers.record(SECRET, ids.secret[0]!, allowAll())).yaml;
  assert.match(secret, /password: hmac-sha256:[0-9a-f]{64}/, 'a redacted record stays redacted');

  const gone = await handlers.handle(url('/v1/record', { ...q(CM), id: '20260301T000000.000Z-99' }), allowAll());
  assert.equal(gone.status, 404);
  assert.equal((gone.body as ErrorResponse).error, `ConfigMap default/app has no record 20260301T000000.000Z-99 (its records: ${[...ids.cm, ...ids.cmInB].join(', ')})`);
  const malformed = await handlers.handle(url('/v1/record', { ...q(CM), id: '../../etc/passwd' }), allowAll());
  assert.equal(malformed.status, 400);
  assert.match((malformed.body as ErrorResponse).error, /invalid record ID/);
});

test('diff: the recorded change by default, a deletion as the object going away, to the current version, and between records', async (t) => {
  const { root, ids } = await writeFixture(t);
  const handlers = new HistoryHandlers(new StoreReader(root));
  const yamlOf = async (id: string): Promise<string> => (await handlers.record(CM, id, allowAll(), 'rec-a')).yaml;
  const [first, second, third] = [await yamlOf(ids.cm[0]!), await yamlOf(ids.cm[1]!), await yamlOf(ids.cm[2]!)];

  const recorded = (await handlers.handle(url('/v1/diff', { ...q(CM), id: ids.cm[0]!, store: 'rec-a' }), allowAll())).body as DiffResponse;
  assert.equal(recorded.to, 'resourceVersion 2');
  assert.equal(applyPatch(first, recorded.diff), second, 'the recorded diff turns the record into the version that replaced it');

  const between = await handlers.diff(CM, ids.cm[0]!, allowAll(), ids.cm[2], 'rec-a');
  assert.equal(between.to, `record ${ids.cm[2]}`);
  assert.equal(applyPatch(first, between.diff), third);

  const current = await handlers.diff(CM, ids.cm[1]!, allowAll(), 'current', 'rec-a');
  assert.equal(current.to, 'current (resourceVersion 4)');
  assert.match(current.diff, /^-\s+color: blue$/m);
  assert.match(current.diff, /^\+\s+color: yellow$/m);
  assert.match(current.diff, /^\+\s+extra: x$/m);

  const deletion = await handlers.diff(DEPLOY, ids.deploy[1]!, allowAll());
  assert.equal(deletion.to, '(deleted)');
  assert.equal(applyPatch((await handlers.record(DEPLOY, ids.deploy[1]!, allowAll())).yaml, deletion.diff), '', 'every line goes');

  const noCurrent = await handlers.handle(url('/v1/diff', { ...q(DEPLOY), id: ids.deploy[0]!, to: 'current' }), allowAll());
  assert.equal(noCurrent.status, 404);
  assert.match((noCurrent.body as ErrorResponse).error, /Deployment\.apps default\/web has no current version in store rec-a: the recorder last saw it deleted/);
  const same = await handlers.diff(CM, ids.cm[1]!, allowAll(), ids.cm[1], 'rec-a');
  assert.equal(same.diff, '', 'a record against itself');
});

test('names that would lead out of a store, unknown stores and endpoints, and missing parameters are refused', async (t) => {
  const { root } = await writeFixture(t);
  const handlers = new HistoryHandlers(new StoreReader(root));
  const cases: [URL, number, RegExp][] = [
    [url('/v1/records', { ...q(CM), name: '..' }), 400, /invalid object name/],
    [url('/v1/records', { ...q(CM), name: 'a/../../b' }), 400, /invalid object name/],
    [url('/v1/records', { ...q(CM), namespace: '../rec-a' }), 400, /invalid namespace/],
    [url('/v1/objects', { namespace: '..' }), 400, /invalid namespace/],
    [url('/v1/objects', { kind: '../x', group: '' }), 400, /invalid kind/],
    [url('/v1/records', { ...q(CM), group: 'a/b' }), 400, /invalid API group/],
    [url('/v1/records', { ...q(CM), store: '..' }), 400, /no record store named/],
    [url('/v1/records', { kind: 'ConfigMap' }), 400, /needs the query parameters kind and name/],
    [url('/v1/record', q(CM)), 400, /needs the query parameter id/],
    [url('/v1/delete', q(CM)), 404, /no such endpoint: \/v1\/delete/],
  ];
  for (const [u, status, message] of cases) {
    const reply = await handlers.handle(u, allowAll());
    assert.equal(reply.status, status, u.search);
    assert.match((reply.body as ErrorResponse).error, message);
  }
});

test('the HTTPS server refuses writes and callers without a bearer token before asking the API server anything', async (t) => {
  const { root } = await writeFixture(t);
  // No API server here: a review request would fail the test with a connection error, so none may be made.
  const unreachable = { create: () => Promise.reject(new Error('no API server in this test')), request: () => Promise.reject(new Error('no API server in this test')) } as unknown as Pick<Client, 'create' | 'request'>;
  const server = await HistoryServer.start({ storageRoot: root, client: unreachable, port: 0, host: '127.0.0.1' });
  t.after(() => server.close());
  const call = (method: string, path: string, headers: Record<string, string> = {}): Promise<{ status: number; body: ErrorResponse; allow?: string }> =>
    new Promise((resolve, reject) => {
      const req = request({ host: '127.0.0.1', port: server.port, method, path, headers, rejectUnauthorized: false }, (res) => {
        let text = '';
        res.on('data', (c: Buffer) => (text += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode ?? 0, body: JSON.parse(text) as ErrorResponse, allow: res.headers.allow }));
      });
      req.on('error', reject);
      req.end();
    });
  const post = await call('POST', '/v1/objects');
  assert.equal(post.status, 405);
  assert.equal(post.allow, 'GET, HEAD');
  assert.match(post.body.error, /read-only/);
  const anonymous = await call('GET', '/v1/objects');
  assert.equal(anonymous.status, 401);
  assert.match(anonymous.body.error, /needs the caller's bearer token in the x-quorum-authorization header/);
  const basic = await call('GET', '/v1/objects', { 'x-quorum-authorization': 'Basic dTpw' });
  assert.equal(basic.status, 401, 'only a bearer token');
  const failing = await call('GET', '/v1/objects', { 'x-quorum-authorization': 'Bearer abc' });
  assert.equal(failing.status, 503, 'a token that cannot be checked is not taken as valid');
  assert.match(failing.body.error, /cannot check tokens with the API server: no API server in this test/);
  assert.equal((await call('GET', '/other')).status, 404);
});

test('bearerToken reads only a Bearer header', () => {
  assert.equal(bearerToken('Bearer abc.def'), 'abc.def');
  assert.equal(bearerToken('bearer  xyz '), 'xyz');
  assert.equal(bearerToken(['Bearer one', 'Bearer two']), 'one');
  assert.equal(bearerToken('Basic abc'), undefined);
  assert.equal(bearerToken('Bearer a b'), undefined);
  assert.equal(bearerToken(undefined), undefined);
});
