// The informer's transform, initial-list hook and stop(), against a scripted HTTPS API server: the hook gets the
// whole first list exactly once, after its adds and before any change that follows it; every object is
// transformed before it is cached or handed on; stop() ends the run and releases whoever waits for the sync.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, test } from 'node:test';
import { Informer } from '../../src/cache/informer.ts';
import { ConfigMaps } from '../../src/client/resources.ts';
import type { KubeObject } from '../../src/object.ts';
import { json, scriptedServer, status } from './retry-support.ts';

const cm = (name: string, rv: string, labels: Record<string, string> = {}): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion: rv, labels } });
const line = (type: string, object: KubeObject): string => `${JSON.stringify({ type, object })}\n`;

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup();
});

/** A server that lists a and b, then, on the watch, sends c added, a modified and b deleted, and keeps it open. */
async function api(): Promise<Awaited<ReturnType<typeof scriptedServer>>> {
  const watches: ServerResponse[] = [];
  const server = await scriptedServer((_req, res, url) => {
    if (url.searchParams.get('watch') !== 'true') return json(res, 200, { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [cm('a', '1', { noise: 'x' }), cm('b', '2')] });
    watches.push(res);
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(line('ADDED', cm('c', '11', { noise: 'y' })) + line('MODIFIED', cm('a', '12', { noise: 'z', kept: 'yes' })) + line('DELETED', cm('b', '13')));
  });
  cleanups.push(async () => {
    for (const res of watches) res.end();
    await server.close();
  });
  return server;
}

/** Drops the `noise` label: a transform a consumer might apply to keep less in memory. */
function quiet(obj: KubeObject): KubeObject {
  const { noise: _drop, ...labels } = obj.metadata.labels ?? {};
  return { ...obj, metadata: { ...obj.metadata, labels } };
}

test('the initial-list hook gets the whole first list once, after its adds and before the changes after it; every object is transformed', async () => {
  const { client } = await api();
  const seen: string[] = [];
  const informer = new Informer(client, ConfigMaps, {
    namespace: 'ns',
    transform: quiet,
    onInitialList: (objects) => seen.push(`list ${objects.map((o) => o.metadata.name).sort().join(',')}`),
  });
  const labelsOf = (o: KubeObject): string => JSON.stringify(o.metadata.labels);
  informer.addHandler({
    onAdd: (o) => seen.push(`add ${o.metadata.name} ${labelsOf(o)}`),
    onUpdate: (_before, o) => seen.push(`update ${o.metadata.name} ${labelsOf(o)}`),
    onDelete: (o) => seen.push(`delete ${o.metadata.name}`),
  });
  const running = informer.run();
  const deadline = Date.now() + 5000;
  while (seen.length < 6 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(seen, ['add a {}', 'add b {}', 'list a,b', 'add c {}', 'update a {"kept":"yes"}', 'delete b']);
  assert.deepEqual(informer.store.list().map(labelsOf).sort(), ['{"kept":"yes"}', '{}']);
  await informer.stop();
  await running;
});

test('stop() ends the run, releases waitForSync with a rejection, and is harmless before run() and when repeated', async () => {
  const never = new Informer((await api()).client, ConfigMaps, { namespace: 'ns' });
  await never.stop();
  await assert.rejects(never.waitForSync(), /informer\/configmaps\(namespace=ns\) stopped/);

  let lists = 0;
  const stuck = await scriptedServer((_req, res, url) => {
    if (url.searchParams.get('watch') !== 'true') lists++;
    // Never answers: the first list does not complete.
    void res;
  });
  cleanups.push(stuck.close);
  const informer = new Informer(stuck.client, ConfigMaps, { namespace: 'ns' });
  const running = informer.run();
  const synced = informer.waitForSync();
  while (lists === 0) await new Promise((r) => setTimeout(r, 10));
  await informer.stop();
  await running;
  await assert.rejects(synced, /stopped/);
  await informer.stop();
  assert.equal(informer.hasSynced(), false);
});

const inNs = (namespace: string, name: string, rv: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace, resourceVersion: rv } });
/** The namespace of a namespaced ConfigMap request: /api/v1/namespaces/NS/configmaps. */
const namespaceOf = (url: URL): string => /^\/api\/v1\/namespaces\/([^/]+)\/configmaps$/.exec(url.pathname)?.[1] ?? '(every namespace)';

test('several namespaces: one list and watch per namespace into one store; the initial list waits for every namespace, and a change in a listed namespace waits for it', async () => {
  const watches: ServerResponse[] = [];
  let answerB: (() => void) | undefined;
  const server = await scriptedServer((_req, res, url) => {
    const ns = namespaceOf(url);
    if (url.searchParams.get('watch') === 'true') {
      watches.push(res);
      res.writeHead(200, { 'content-type': 'application/json' });
      // Namespace a changes at once, while b's first list is still under way.
      if (ns === 'a') res.write(line('ADDED', inNs('a', 'late', '11')));
      return;
    }
    const list = (): void => json(res, 200, { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [inNs(ns, `first-${ns}`, '1')] });
    if (ns === 'b') answerB = list;
    else list();
  });
  cleanups.push(async () => {
    for (const res of watches) res.end();
    await server.close();
  });
  const seen: string[] = [];
  const informer = new Informer(server.client, ConfigMaps, { namespaces: ['a', 'b', 'a'], onInitialList: (objects) => seen.push(`list ${objects.map((o) => `${o.metadata.namespace}/${o.metadata.name}`).sort().join(',')}`) });
  informer.addHandler({ onAdd: (o) => seen.push(`add ${o.metadata.namespace}/${o.metadata.name}`) });
  assert.equal(informer.component, 'informer/configmaps(namespaces=a,b)');
  const running = informer.run();
  // a is listed and its watch has sent a change; b has not answered its list.
  while (!answerB || !watches.length) await new Promise((r) => setTimeout(r, 10));
  await new Promise((r) => setTimeout(r, 50));
  assert.equal(informer.hasSynced(), false);
  assert.deepEqual(seen, ['add a/first-a'], 'the change in a waits for b\'s list');
  answerB();
  await informer.waitForSync();
  const deadline = Date.now() + 5000;
  while (seen.length < 4 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.deepEqual(seen, ['add a/first-a', 'add b/first-b', 'list a/first-a,b/first-b', 'add a/late']);
  assert.deepEqual(informer.store.keys().sort(), ['a/first-a', 'a/late', 'b/first-b']);
  assert.deepEqual(informer.store.byIndex('namespace', 'b').map((o) => o.metadata.name), ['first-b']);
  // Each namespace its own request; none of every namespace (which a Role per namespace does not allow).
  assert.deepEqual([...new Set(server.requests.map(namespaceOf))].sort(), ['a', 'b']);
  await informer.stop();
  await running;
});

test('several namespaces: a namespace whose list is forbidden keeps the informer unsynced, and failing() names it', async () => {
  const server = await scriptedServer((_req, res, url) => {
    const ns = namespaceOf(url);
    if (ns === 'locked') return status(res, 403, 'Forbidden', 'configmaps is forbidden: User "operator" cannot list resource "configmaps" in the namespace "locked"');
    if (url.searchParams.get('watch') === 'true') return void res.writeHead(200, { 'content-type': 'application/json' });
    json(res, 200, { kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: '10' }, items: [inNs(ns, 'x', '1')] });
  });
  cleanups.push(server.close);
  const informer = new Informer(server.client, ConfigMaps, { namespaces: ['open', 'locked'], backoff: { initialMs: 1, maxMs: 5, jitter: 0 } });
  const running = informer.run();
  const deadline = Date.now() + 5000;
  while (!informer.failing() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 10));
  assert.match(informer.failing()?.message ?? '', /^namespace locked: .*403 Forbidden: configmaps is forbidden/);
  assert.equal(informer.hasSynced(), false);
  assert.deepEqual(informer.store.keys(), ['open/x'], 'the open namespace is cached, but its list alone is not the whole list');
  await informer.stop();
  await running;
});

test('namespaces must name at least one namespace, and not beside namespace', () => {
  assert.throws(() => new Informer({} as never, ConfigMaps, { namespaces: [] }), /namespaces must name at least one namespace/);
  assert.throws(() => new Informer({} as never, ConfigMaps, { namespace: 'a', namespaces: ['b'] }), /namespace or namespaces, not both/);
});
