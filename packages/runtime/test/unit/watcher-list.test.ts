// The watcher's list, against a scripted HTTPS API server: each page's objects are told before the next page
// is asked for (a big list is never held whole), and a relist tells only what changed: new objects as added,
// a new resourceVersion as modified, an unchanged one not at all, and what vanished as deleted.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ConfigMaps } from '../../src/client/resources.ts';
import type { KubeObject } from '../../src/object.ts';
import { watcher, type WatcherEvent } from '../../src/watch/watcher.ts';
import { json, scriptedServer, status } from './retry-support.ts';

const cm = (name: string, rv: string): KubeObject => ({ metadata: { name, namespace: 'ns', resourceVersion: rv } });
const list = (items: KubeObject[], rv: string, cont?: string) => ({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: rv, continue: cont }, items });
const describe = (e: WatcherEvent<KubeObject>): string => (e.type === 'synced' ? `synced ${e.resourceVersion}` : `${e.type} ${e.object.metadata.name}@${e.object.metadata.resourceVersion}`);

test('a paged list is told page by page, and a relist tells only what changed since', async () => {
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
    for await (const event of watcher(client, ConfigMaps, { namespace: 'ns', signal: stop.signal, pageSize: 2, backoff: { initialMs: 1, maxMs: 5, jitter: 0 } })) {
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
});
