// The runtime's figures on a real API server (localkube): informer memory per cached object, start-up to
// all-reconciled for 1,000 objects with the API requests it took, API writes at idle, and how a burst of
// 200 events coalesces. One JSON line per figure.
import { spawn } from 'node:child_process';
import { Writable } from 'node:stream';
import { Client, ConfigMaps, createLogger, Manager, Namespaces, type KubeObject } from '../src/index.ts';
import { eventually, TestEnv } from '@quorum/localkube/testing';

const report = (bench: string, value: number, unit: string): void =>
  void process.stdout.write(JSON.stringify({ bench, value: Math.round(value * 1000) / 1000, unit }) + '\n');
const progress = (msg: string): void => void process.stderr.write(`[runtime bench] ${msg}\n`);
const quiet = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });

async function createMany(env: TestEnv, ns: string, count: number, data: Record<string, string>, prefix = 'cm'): Promise<void> {
  for (let i = 0; i < count; i += 50) {
    await Promise.all(Array.from({ length: Math.min(50, count - i) }, (_, j) => env.client.create(ConfigMaps, { metadata: { name: `${prefix}-${i + j}`, namespace: ns }, data })));
  }
}

const env = await TestEnv.start({ nodes: 1 });
try {
  // Informer memory: 10,000 ConfigMaps of 1 KiB each, cached in a separate process measured before and after.
  const memNs = await env.namespace('bench-mem');
  progress('creating 10,000 ConfigMaps of 1 KiB');
  await createMany(env, memNs, 10_000, { payload: 'x'.repeat(1024) });
  const child = spawn(process.execPath, ['--expose-gc', new URL('./cache-memory-child.ts', import.meta.url).pathname], {
    env: { ...process.env, KUBECONFIG: env.kubeconfig, NAMESPACE: memNs },
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  let out = '';
  child.stdout.setEncoding('utf8').on('data', (d: string) => (out += d));
  await new Promise((r) => child.on('exit', r));
  const mem = JSON.parse(out) as { objects: number; heapBytes: number; rssBytes: number; jsonBytes: number };
  report('runtime.cache.heap_bytes_per_object', mem.heapBytes / mem.objects, 'bytes');
  report('runtime.cache.json_bytes_per_object', mem.jsonBytes / mem.objects, 'bytes');
  report('runtime.cache.heap_overhead_bytes_per_object', (mem.heapBytes - mem.jsonBytes) / mem.objects, 'bytes');
  report('runtime.cache.rss_mib_10k', mem.rssBytes / 1024 / 1024, 'MiB');
  await env.client.delete(Namespaces, memNs).catch(() => undefined);

  // Start-up: a no-op controller over 1,000 objects; then 60 s of idle.
  const ns = await env.namespace('bench-startup');
  progress('creating 1,000 ConfigMaps');
  await createMany(env, ns, 1000, { k: 'v' });
  const client = await Client.connect({ kubeconfig: env.kubeconfig });
  const seen = new Set<string>();
  const manager = new Manager(client, { logger: quiet });
  manager
    .controller('noop')
    .for(ConfigMaps, { namespace: ns })
    .withOptions({ maxConcurrentReconciles: 4 })
    .complete((req) => {
      // Every namespace also has kube-root-ca.crt: count only ours.
      if (req.name.startsWith('cm-')) seen.add(req.name);
      return Promise.resolve();
    });
  const stop = new AbortController();
  const t0 = performance.now();
  const running = manager.start(stop.signal);
  await eventually('all reconciled', () => seen.size === 1000, { timeoutMs: 60_000, intervalMs: 5 });
  report('runtime.startup.all_reconciled_s', (performance.now() - t0) / 1000, 's');
  report('runtime.startup.api_requests', client.stats.requests, 'requests');
  progress('60 s of idle');
  const writesBefore = client.stats.writes;
  const requestsBefore = client.stats.requests;
  await new Promise((r) => setTimeout(r, 60_000));
  report('runtime.idle.writes_60s', client.stats.writes - writesBefore, 'writes');
  report('runtime.idle.requests_60s', client.stats.requests - requestsBefore, 'requests');
  stop.abort();
  await running;
  client.close();

  // Coalescing: 200 updates to the children of one parent within about a second.
  const cns = await env.namespace('bench-coalesce');
  const parent = await env.client.create(ConfigMaps, { metadata: { name: 'parent', namespace: cns, labels: { role: 'parent' } } });
  for (let i = 0; i < 5; i++) {
    await env.client.create(ConfigMaps, {
      metadata: { name: `child-${i}`, namespace: cns, labels: { role: 'child' }, ownerReferences: [{ apiVersion: 'v1', kind: 'ConfigMap', name: 'parent', uid: parent.metadata.uid!, controller: true }] },
    });
  }
  let reconciles = 0;
  const coalescer = new Manager(env.client, { logger: quiet });
  coalescer
    .controller('coalesce')
    .for(ConfigMaps, { namespace: cns, labelSelector: 'role=parent' })
    .owns(ConfigMaps, { namespace: cns, labelSelector: 'role=child' })
    .withOptions({ maxConcurrentReconciles: 4 })
    .complete(async () => {
      reconciles++;
      await new Promise((r) => setTimeout(r, 500));
    });
  const stopCoalescer = new AbortController();
  const coalescing = coalescer.start(stopCoalescer.signal);
  await eventually('first reconcile', () => reconciles === 1);
  await new Promise((r) => setTimeout(r, 700));
  reconciles = 0;
  for (let batch = 0; batch < 8; batch++) {
    await Promise.all(Array.from({ length: 25 }, (_, j) => env.client.mergePatch<KubeObject>(ConfigMaps, { namespace: cns, name: `child-${j % 5}` }, { data: { n: `${batch}-${j}` } })));
  }
  await new Promise((r) => setTimeout(r, 2000));
  report('runtime.coalesce.reconciles_per_200_events', reconciles, 'reconciles');
  stopCoalescer.abort();
  await coalescing;
} finally {
  await env.stop();
}
