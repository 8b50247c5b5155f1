// Run with --expose-gc by runtime.bench.ts: caches every ConfigMap of $NAMESPACE in one informer and
// prints the heap and RSS growth that caching cost, as JSON.
import { Client, ConfigMaps, Informer } from '../src/index.ts';

const gc = (globalThis as { gc?: () => void }).gc;
if (!gc) throw new Error('run with --expose-gc');
const settle = async (): Promise<void> => {
  for (let i = 0; i < 3; i++) {
    gc();
    await new Promise((r) => setTimeout(r, 50));
  }
};
const client = await Client.connect({ kubeconfig: process.env['KUBECONFIG'] });
// Warm up the client and module code so their memory is not counted as the cache's.
await client.list(ConfigMaps, { namespace: 'default', limit: 1 });
await settle();
const before = process.memoryUsage();
const stop = new AbortController();
const informer = new Informer(client, ConfigMaps, { namespace: process.env['NAMESPACE'] });
void informer.run(stop.signal);
await informer.waitForSync();
await settle();
const after = process.memoryUsage();
const objects = informer.store.size;
const jsonBytes = informer.store.list().reduce((sum, o) => sum + Buffer.byteLength(JSON.stringify(o)), 0);
process.stdout.write(JSON.stringify({ objects, heapBytes: after.heapUsed - before.heapUsed, rssBytes: after.rss, rssGrowthBytes: after.rss - before.rss, jsonBytes }) + '\n');
stop.abort();
client.close();
process.exit(0);
