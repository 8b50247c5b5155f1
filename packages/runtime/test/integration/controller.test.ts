// Controllers against the real API server: bursts coalesce, a key is never reconciled twice at once,
// failures back off per key without starving others, and server-side apply behaves as the server says.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @quiet: bounds coalescing and backoff gaps in time
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { ConfigMaps, ConflictError, createLogger, Manager, type Controller, type KubeObject, type Request } from '../../src/index.ts';
import { eventually, TestEnv } from '@quorum/localkube/testing';

let env: TestEnv;
before(async () => {
  env = await TestEnv.start();
});
after(() => env.stop());

const quiet = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
type ConfigMap = KubeObject & { data?: Record<string, string> };

async function withManager(build: (m: Manager) => void, body: (m: Manager) => Promise<void>): Promise<void> {
  const manager = new Manager(env.client, { logger: quiet });
  build(manager);
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    await body(manager);
  } finally {
    stop.abort();
    await running;
  }
}

test('200 updates to the children of one parent within about a second coalesce into one reconcile per 500 ms of burst (+1), never concurrent per key', async () => {
  const ns = await env.namespace('burst');
  const parents = ['p0', 'p1', 'p2', 'p3'];
  const owners: Record<string, ConfigMap> = {};
  for (const name of parents) owners[name] = await env.client.create(ConfigMaps, { metadata: { name, namespace: ns, labels: { role: 'parent' } } });
  const children = parents.flatMap((p) => Array.from({ length: 5 }, (_, i) => ({ parent: p, name: `${p}-c${i}` })));
  for (const c of children) {
    const owner = owners[c.parent]!;
    await env.client.create(ConfigMaps, {
      metadata: { name: c.name, namespace: ns, labels: { role: 'child' }, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: c.parent, uid: owner.metadata.uid!, controller: true }] },
      data: { n: '0' },
    });
  }

  const reconciles = new Map<string, number>();
  const inFlight = new Map<string, number>();
  let overlapping = 0;
  let maxParallel = 0;
  let parallel = 0;
  let controller: Controller | undefined;
  // A child's resourceVersion as the controller's cache holds it.
  let cachedVersion: (name: string) => string | undefined = () => undefined;
  // Idle: nothing queued and no reconcile running. A key enqueued while its reconcile runs is held back
  // (dirty) and queued when that reconcile ends, so it is never missed by this check; nothing here is
  // queued with a delay (every reconcile succeeds).
  const idle = (): boolean => controller !== undefined && controller.queue.len() === 0 && parallel === 0;
  await withManager(
    (m) => {
      // The same shared informer owns() uses: what the controller's event handlers have seen.
      const childCache = m.informer(ConfigMaps, { namespace: ns, labelSelector: 'role=child' });
      cachedVersion = (name) => childCache.store.get(`${ns}/${name}`)?.metadata.resourceVersion;
      controller = m
        .controller('parents')
        .for(ConfigMaps, { namespace: ns, labelSelector: 'role=parent' })
        .owns(ConfigMaps, { namespace: ns, labelSelector: 'role=child' })
        .withOptions({ maxConcurrentReconciles: 4 })
        .complete(async (req: Request) => {
          const key = req.name;
          if ((inFlight.get(key) ?? 0) > 0) overlapping++;
          inFlight.set(key, (inFlight.get(key) ?? 0) + 1);
          maxParallel = Math.max(maxParallel, ++parallel);
          reconciles.set(key, (reconciles.get(key) ?? 0) + 1);
          // Work of the size a real reconcile does (reads, writes, a call to etcd).
          await new Promise((r) => setTimeout(r, 500));
          parallel--;
          inFlight.set(key, inFlight.get(key)! - 1);
        });
    },
    async () => {
      // Positive signal before counting afresh: each parent reconciled once and the controller idle, so
      // no initial reconcile is still running or owed.
      await eventually('initial reconciles done', () => parents.every((p) => reconciles.get(p) === 1) && idle(), { timeoutMs: 20_000 });
      reconciles.clear();
      // 200 updates to p0's children, and 10 to each other parent's, within about a second.
      const updates: Promise<unknown>[] = [];
      const started = Date.now();
      for (let i = 0; i < 200; i++) {
        const c = children.filter((x) => x.parent === 'p0')[i % 5]!;
        updates.push(env.client.mergePatch(ConfigMaps, { namespace: ns, name: c.name }, { data: { n: String(i + 1) } }));
        if (i % 20 === 0) for (const p of ['p1', 'p2', 'p3']) updates.push(env.client.mergePatch(ConfigMaps, { namespace: ns, name: `${p}-c0` }, { data: { n: String(i + 1) } }));
        if (updates.length % 25 === 0) await Promise.all(updates.splice(0));
      }
      await Promise.all(updates);
      const burstMs = Date.now() - started;
      // Positive signal before asserting that no more reconciles happen: the cache holds every child's
      // final version (the informer enqueues in the same step as it stores, so every update's enqueue has
      // happened), and after that the controller is idle, so every reconcile owed for them has run.
      const final = new Map<string, string | undefined>();
      for (const c of children) final.set(c.name, (await env.client.get(ConfigMaps, { namespace: ns, name: c.name })).metadata.resourceVersion);
      await eventually('the cache holds the final children', () => [...final].every(([name, rv]) => cachedVersion(name) === rv), { timeoutMs: 20_000 });
      await eventually('the burst reconciled', idle, { timeoutMs: 20_000 });
      const p0 = reconciles.get('p0') ?? 0;
      process.stderr.write(`burst of 200 updates took ${burstMs} ms; p0 reconciled ${p0} times; max parallel ${maxParallel}\n`);
      // Coalescing: while p0's reconcile (500 ms) runs, all its events fold into one pending run, so a burst
      // of B ms can cause at most ⌈B / 500⌉ + 1 reconciles however many events it holds (a fixed number
      // would be a timing assertion: a loaded machine stretches the burst).
      const bound = Math.ceil(burstMs / 500) + 1;
      assert.ok(bound <= 10, `the burst was compact enough to show coalescing (took ${burstMs} ms)`);
      assert.ok(p0 >= 1 && p0 <= bound, `p0 reconciled ${p0} times for 200 updates in ${burstMs} ms (at most ${bound})`);
      assert.equal(overlapping, 0, 'a key was reconciled by two workers at once');
      assert.ok(maxParallel > 1, 'different keys were reconciled in parallel');
    },
  );
});

test('a reconcile that always throws is retried with growing delays and does not starve other keys', async () => {
  const ns = await env.namespace('backoff');
  await env.client.create(ConfigMaps, { metadata: { name: 'bad', namespace: ns } });
  const attempts: number[] = [];
  const goodDone = new Map<string, number>();
  let goodCreated = new Map<string, number>();
  await withManager(
    (m) =>
      m
        .controller('backoff')
        .for(ConfigMaps, { namespace: ns })
        .withOptions({ maxConcurrentReconciles: 1 })
        .complete((req) => {
          if (req.name === 'bad') {
            attempts.push(performance.now());
            return Promise.reject(new Error('always fails'));
          }
          goodDone.set(req.name, performance.now());
          return Promise.resolve();
        }),
    async () => {
      await eventually('7 attempts', () => attempts.length >= 7, { timeoutMs: 20_000 });
      goodCreated = new Map();
      for (let i = 0; i < 5; i++) {
        const name = `good-${i}`;
        goodCreated.set(name, performance.now());
        await env.client.create(ConfigMaps, { metadata: { name, namespace: ns } });
      }
      await eventually('good keys reconciled', () => [...goodCreated.keys()].every((k) => goodDone.has(k)), { timeoutMs: 10_000 });
      await eventually('9 attempts', () => attempts.length >= 9, { timeoutMs: 20_000 });
    },
  );
  const gaps = attempts.slice(1).map((t, i) => t - attempts[i]!);
  process.stderr.write(`retry gaps (ms): ${gaps.map((g) => g.toFixed(0)).join(', ')}\n`);
  // Default backoff: 5 ms doubling per failure; compare where timer granularity no longer dominates.
  for (let i = 3; i < gaps.length; i++) assert.ok(gaps[i]! > gaps[i - 1]! * 1.5, `gap ${i} (${gaps[i]} ms) should exceed 1.5× gap ${i - 1} (${gaps[i - 1]} ms)`);
  assert.ok(gaps.at(-1)! >= 600, 'the delay keeps doubling');
  for (const [name, created] of goodCreated) assert.ok(goodDone.get(name)! - created < 2000, `${name} waited ${goodDone.get(name)! - created} ms behind the failing key`);
});

test('server-side apply from two field managers: conflicts are reported, force takes ownership', async () => {
  const ns = await env.namespace('ssa');
  const cm = (value: string): ConfigMap => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'shared', namespace: ns }, data: { owned: value } });
  await env.client.apply(ConfigMaps, cm('from-a'), { fieldManager: 'manager-a' });
  await assert.rejects(env.client.apply(ConfigMaps, cm('from-b'), { fieldManager: 'manager-b' }), (err: unknown) => {
    assert.ok(err instanceof ConflictError);
    assert.match(err.message, /conflict with "manager-a"/);
    assert.match(err.message, /\.data\.owned/);
    return true;
  });
  assert.equal((await env.client.get(ConfigMaps, { namespace: ns, name: 'shared' })).data?.['owned'], 'from-a');
  const forced = await env.client.apply(ConfigMaps, cm('from-b'), { fieldManager: 'manager-b', force: true });
  assert.equal(forced.data?.['owned'], 'from-b');
  const managers = (forced.metadata.managedFields as { manager: string; fieldsV1: { 'f:data'?: Record<string, unknown> } }[]).filter((f) => f.fieldsV1['f:data']?.['f:owned']);
  assert.deepEqual(managers.map((m) => m.manager), ['manager-b']);
  // A dry run is validated by the server but not stored.
  await env.client.apply(ConfigMaps, cm('dry'), { fieldManager: 'manager-b', dryRun: true });
  assert.equal((await env.client.get(ConfigMaps, { namespace: ns, name: 'shared' })).data?.['owned'], 'from-b');
});
