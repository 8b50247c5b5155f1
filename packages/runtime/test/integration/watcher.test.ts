// A watch survives what a real API server does to it: a restart, a 410 Gone after compaction, and a
// connection that goes silent. After each, the informer's cache equals a fresh list.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive control-plane
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Client, ConfigMaps, Informer, objectKeyString, type KubeObject } from '../../src/index.ts';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { compactControlPlaneEtcd, silence } from './support.ts';

let env: TestEnv;
let ns: string;
before(async () => {
  env = await TestEnv.start();
  ns = await env.namespace('watch');
});
after(() => env.stop());

type ConfigMap = KubeObject & { data?: Record<string, string> };
let serial = 0;
const create = (name: string): Promise<ConfigMap> => env.client.create(ConfigMaps, { metadata: { name, namespace: ns }, data: { v: String(serial++) } });
const update = (name: string): Promise<ConfigMap> => env.client.mergePatch(ConfigMaps, { namespace: ns, name }, { data: { v: String(serial++) } });
const remove = (name: string): Promise<void> => env.client.delete(ConfigMaps, { namespace: ns, name });

async function cacheEqualsList(informer: Informer<ConfigMap>): Promise<boolean> {
  const fresh = await env.client.list(ConfigMaps, { namespace: ns });
  const want = new Map(fresh.items.map((o) => [objectKeyString(o), o.metadata.resourceVersion]));
  const have = new Map(informer.store.list().map((o) => [objectKeyString(o), o.metadata.resourceVersion]));
  return want.size === have.size && [...want].every(([k, rv]) => have.get(k) === rv);
}

async function startInformer(watchdogMs: number): Promise<{ informer: Informer<ConfigMap>; client: Client; stop: AbortController; deleted: string[] }> {
  const client = await Client.connect({ kubeconfig: env.kubeconfig });
  const informer = new Informer<ConfigMap>(client, ConfigMaps, { namespace: ns, watchdogMs });
  const deleted: string[] = [];
  informer.addHandler({ onDelete: (o) => deleted.push(o.metadata.name ?? '') });
  const stop = new AbortController();
  void informer.run(stop.signal);
  await informer.waitForSync();
  return { informer, client, stop, deleted };
}

test('the cache catches up after an API server restart', async () => {
  for (let i = 0; i < 5; i++) await create(`restart-${i}`);
  const { informer, client, stop } = await startInformer(60_000);
  try {
    await env.kube.restartApiserver();
    await update('restart-0');
    await remove('restart-1');
    await create('restart-new');
    await eventually('cache equal to a fresh list', () => cacheEqualsList(informer), { timeoutMs: 60_000 });
    assert.ok(informer.counts.reconnects >= 1, 'the watch was re-established');
  } finally {
    stop.abort();
    client.close();
  }
});

test('changes written the moment the API server comes back reach the cache (3 restarts)', async () => {
  // A change written while every informer relists or resumes after the restart (the chaos suite's
  // restart-apiserver fault followed by a spec change) must reach the cache, by the watch or by the relist.
  await create('comeback-0');
  const { informer, client, stop } = await startInformer(60_000);
  try {
    for (let round = 0; round < 3; round++) {
      const restarted = env.kube.restartApiserver();
      // Written as soon as the restarted server accepts a write, while informers are re-establishing their watches.
      let written: ConfigMap | undefined;
      while (!written) {
        written = await update('comeback-0').catch(() => undefined);
        if (!written) await new Promise((r) => setTimeout(r, 50));
      }
      await restarted;
      const want = written.metadata.resourceVersion;
      await eventually(`round ${round}: the cache holds the change written at ${want}`, () => {
        const cached = informer.store.get(`${ns}/comeback-0`);
        return cached !== undefined && BigInt(cached.metadata.resourceVersion ?? '0') >= BigInt(want ?? '0');
      }, { timeoutMs: 60_000 });
    }
    await eventually('cache equal to a fresh list', () => cacheEqualsList(informer), { timeoutMs: 60_000 });
  } finally {
    stop.abort();
    client.close();
  }
});

test('410 Gone after compaction leads to a relist that reports what vanished as deleted', async () => {
  for (let i = 0; i < 4; i++) await create(`gone-${i}`);
  const { informer, client, stop, deleted } = await startInformer(3_000);
  try {
    // The informer stops hearing anything; meanwhile objects change and vanish, etcd is compacted past its
    // revision and the API server restarts (so its watch cache no longer holds that revision either).
    const restore = await silence(client.openConnections());
    await remove('gone-0');
    await remove('gone-1');
    await update('gone-2');
    await create('gone-new');
    await compactControlPlaneEtcd();
    await env.kube.restartApiserver();
    await restore();
    await eventually('cache equal to a fresh list', () => cacheEqualsList(informer), { timeoutMs: 60_000 });
    assert.ok(informer.counts.relists >= 1, `relisted after 410 (relists ${informer.counts.relists}, reconnects ${informer.counts.reconnects})`);
    assert.deepEqual(deleted.filter((n) => n.startsWith('gone-')).sort(), ['gone-0', 'gone-1']);
  } finally {
    stop.abort();
    client.close();
  }
});

test('a silent connection is dropped by the watchdog and the watch resumes', async () => {
  await create('silent-0');
  const { informer, client, stop } = await startInformer(2_000);
  let restore: (() => Promise<void>) | undefined;
  try {
    restore = await silence(client.openConnections());
    const before = informer.counts.reconnects;
    await update('silent-0');
    await create('silent-1');
    await eventually('cache equal to a fresh list', () => cacheEqualsList(informer), { timeoutMs: 30_000 });
    assert.ok(informer.counts.reconnects > before, 'the watchdog reconnected');
  } finally {
    await restore?.();
    stop.abort();
    client.close();
  }
});
