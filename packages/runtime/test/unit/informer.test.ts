// The informer's transform, initial-list hook and stop(), against a scripted HTTPS API server: the hook gets the
// whole first list exactly once, after its adds and before any change that follows it; every object is
// transformed before it is cached or handed on; stop() ends the run and releases whoever waits for the sync.
import assert from 'node:assert/strict';
import type { ServerResponse } from 'node:http';
import { after, test } from 'node:test';
import { Informer } from '../../src/cache/informer.ts';
import { ConfigMaps } from '../../src/client/resources.ts';
import type { KubeObject } from '../../src/object.ts';
import { json, scriptedServer } from './retry-support.ts';

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
