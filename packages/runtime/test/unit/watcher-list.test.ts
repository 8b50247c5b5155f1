// The watcher's list, against a scripted HTTPS API server: each page's objects are told before the next page
// is asked for (a big list is never held whole), and a relist tells only what changed: new objects as added,
// a new resourceVersion as modified, an unchanged one not at all, and what vanished as deleted; alike when the
// watcher keeps its own record of what it told and when it reads the consumer's (watchInto's `told`).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigMaps } from '../../src/client/resources.ts';
import type { KubeObject } from '../../src/object.ts';
import { watchInto, watcher, type ToldObjects, type WatcherEvent } from '../../src/watch/watcher.ts';
import { json, scriptedServer, status } from './retry-support.ts';

const cm = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
const list = (items: KubeObject[], rv: string, cont?: string) => ({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: rv, continue: cont }, items });
const describe = (e: WatcherEvent<KubeObject>): string => (e.type === 'synced' ? `synced ${e.resourceVersion}` : `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`);

/** A consumer's record of what it was told, as an informer's store is: applied as each event is taken. */
class Consumer implements ToldObjects {
  readonly objects = new Map<string, KubeObject>();
  take(event: WatcherEvent<KubeObject>): void {
    if (event.type === 'synced') return;
    if (event.type === 'deleted') this.objects.delete(event.object.metadata.name!);
    else this.objects.set(event.object.metadata.name!, event.object);
  }
  resourceVersion(obj: KubeObject): string | undefined {
    const held = this.objects.get(obj.metadata.name!);
    return held === undefined ? undefined : (held.metadata.resourceVersion ?? '');
  }
  list(): Iterable<KubeObject> {
    return this.objects.values();
  }
}

for (const record of ['its own record', "the consumer's record"] as const) {
  test(`a paged list is told page by page, and a relist tells only what changed since (${record})`, () => pagedList(record === "the consumer's record"));
}

async function pagedList(consumerRecord: boolean): Promise<void> {
  const consumer = new Consumer();
  const lists = [
    [list([cm('a', '1'), cm('b', '2')], '10', 'page2'), list([cm('c', '3')], '10')],
    [list([cm('a', '1'), cm('c', '4')], '20', 'page2'), list([cm('d', '5')], '20')],
  ];
  let listing = 0;
  const asked: string[] = [];
  const { client, close } = await scriptedServer((_req, res, url) => {
    if (url.searchParams.get('watch') === 'true') {
      asked.push('watch');
      return status(res, 410, 'Expired', 'too old resource version');
    }
    const page = url.searchParams.get('continue') ? 1 : 0;
    asked.push(`list ${listing} page ${page}`);
    json(res, 200, lists[listing]![page]);
    if (page === 1) listing++;
  });
  const stop = new AbortController();
  const seen: string[] = [];
  try {
    const options = { namespace: 'ns', signal: stop.signal, pageSize: 2, backoff: { initialMs: 1, maxMs: 5, jitter: 0 } };
    for await (const event of consumerRecord ? watchInto(client, ConfigMaps, options, consumer) : watcher(client, ConfigMaps, options)) {
      consumer.take(event);
      seen.push(`${describe(event)} (after ${asked.at(-1)})`);
      if (event.type !== 'synced' && event.object.metadata.name === 'a') assert.equal(event.object.kind, 'ConfigMap', 'list items are given their kind');
      if (event.type === 'synced' && event.resourceVersion === '20') break;
    }
  } finally {
    stop.abort();
    await close();
  }
  assert.deepEqual(seen, [
    'added a@1 (after list 0 page 0)',
    'added b@2 (after list 0 page 0)',
    'added c@3 (after list 0 page 1)',
    'synced 10 (after list 0 page 1)',
    'modified c@4 (after list 1 page 0)',
    'added d@5 (after list 1 page 1)',
    'deleted b@2 (after list 1 page 1)',
    'synced 20 (after list 1 page 1)',
  ]);
  assert.deepEqual([...consumer.objects.keys()].sort(), ['a', 'c', 'd']);
}

test("with the consumer's record, a list is compared with what the consumer holds, not with what this watcher told", async () => {
  const consumer = new Consumer();
  for (const obj of [cm('a', '1'), cm('z', '9')]) consumer.objects.set(obj.metadata.name!, obj);
  const { client, close } = await scriptedServer((_req, res, url) => {
    if (url.searchParams.get('watch') === 'true') return status(res, 410, 'Expired', 'too old resource version');
    json(res, 200, list([cm('a', '1'), cm('b', '2')], '10'));
  });
  const stop = new AbortController();
  const seen: string[] = [];
  try {
    for await (const event of watchInto(client, ConfigMaps, { namespace: 'ns', signal: stop.signal, backoff: { initialMs: 1, maxMs: 5, jitter: 0 } }, consumer)) {
      consumer.take(event);
      seen.push(describe(event));
      if (event.type === 'synced') break;
    }
  } finally {
    stop.abort();
    await close();
  }
  assert.deepEqual(seen, ['added b@2', 'deleted z@9', 'synced 10']);
});
