// The @quorum/runtime side of the runtime.compare.* figures (compare.bench.ts): the same tiny controller as
// tools/controller-runtime-compare/main.go. It watches the ConfigMaps of $NAMESPACE with a no-op reconcile and
// 4 workers, and prints the JSON lines of CompareLine on stdout:
//   reconciled  every one of $EXPECT "cm-" ConfigMaps reconciled once, seconds since manager.start()
//   memory      then, after a full GC: RSS and heapUsed
//   burst       with $BURST > 0: that many update events received, and every key they touched reconciled since
// Run with --expose-gc, either as TypeScript from the runtime's sources (--conditions=@quorum/source) or stripped
// of its types into a .mjs with the runtime's built dist/ (as the product ships): $RUNTIME_ENTRY is the URL of
// the runtime's entry module to import (src/index.ts or dist/index.js).
import type * as Runtime from '@quorum/runtime';

export type CompareLine =
  | { event: 'reconciled'; objects: number; sinceStartS: number }
  | { event: 'memory'; rssBytes: number; heapBytes: number }
  | { event: 'burst'; updates: number; seconds: number; cpuSeconds: number };

const entry = process.env['RUNTIME_ENTRY'];
const namespace = process.env['NAMESPACE'];
if (!entry || !namespace) throw new Error('RUNTIME_ENTRY and NAMESPACE are required');
const expect = Number(process.env['EXPECT'] ?? 0);
const burst = Number(process.env['BURST'] ?? 0);
const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const { Client, ConfigMaps, Manager, createLogger } = (await import(entry)) as typeof Runtime;

const emit = (line: CompareLine): void => void process.stdout.write(JSON.stringify(line) + '\n');
const cpuSeconds = (): number => {
  const { user, system } = process.cpuUsage();
  return (user + system) / 1e6;
};

// What the bench observes of the controller; the reconcile itself does nothing else.
const seen = new Set<string>();
const pending = new Set<string>();
let updates = 0;
let firstUpdate = { at: 0, cpu: 0 };
let allReconciled: () => void = () => undefined;
const reconciled = new Promise<void>((resolve) => (allReconciled = resolve));
let burstDone: (line: CompareLine) => void = () => undefined;
const burstOver = new Promise<CompareLine>((resolve) => (burstDone = resolve));

const counting: Runtime.Predicate = (e) => {
  if (e.type !== 'update') return true;
  if (updates === 0) firstUpdate = { at: performance.now(), cpu: cpuSeconds() };
  updates++;
  pending.add(e.object.metadata.name ?? '');
  return true;
};
const noop: Runtime.Reconciler = (req) => {
  // Every namespace also has kube-root-ca.crt: count only ours.
  if (req.name.startsWith('cm-')) seen.add(req.name);
  if (seen.size >= expect) allReconciled();
  pending.delete(req.name);
  if (burst > 0 && updates >= burst && pending.size === 0) {
    burstDone({ event: 'burst', updates, seconds: (performance.now() - firstUpdate.at) / 1000, cpuSeconds: cpuSeconds() - firstUpdate.cpu });
  }
  return Promise.resolve();
};

const client = await Client.connect({ kubeconfig: process.env['KUBECONFIG'] });
const manager = new Manager(client, { logger: createLogger({ level: 'silent' }) });
manager.controller('noop').for(ConfigMaps, { namespace, predicates: [counting] }).withOptions({ maxConcurrentReconciles: 4 }).complete(noop);
const stop = new AbortController();
const t0 = performance.now();
const running = manager.start(stop.signal);
await Promise.race([reconciled, running.then(() => Promise.reject(new Error('the manager stopped before every object was reconciled')))]);
emit({ event: 'reconciled', objects: expect, sinceStartS: (performance.now() - t0) / 1000 });
for (let i = 0; i < 3; i++) {
  gc();
  await new Promise((r) => setTimeout(r, 50));
}
const { rss, heapUsed } = process.memoryUsage();
emit({ event: 'memory', rssBytes: rss, heapBytes: heapUsed });
if (burst > 0) emit(await burstOver);
stop.abort();
await running;
client.close();
process.exit(0);
