// The process metrics every operator exports, under prom-client's default names, read when scraped; and the
// runtime's metrics without prom-client's main module, whose default metrics load @opentelemetry/api.
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { test } from 'node:test';
import { Registry } from '../../src/manager/prom.ts';
import { PROCESS_METRIC_NAMES, registerProcessMetrics } from '../../src/manager/process-metrics.ts';

async function scrape(registry: Registry): Promise<Map<string, number>> {
  const values = new Map<string, number>();
  for (const line of (await registry.metrics()).split('\n')) {
    const m = /^([a-z0-9_]+)(?:\{[^}]*\})? (\S+)$/.exec(line);
    if (m) values.set(m[1]!, Number(m[2]));
  }
  return values;
}

test('every process metric is exported with a value read at the scrape; CPU counters grow with the work done', async () => {
  const registry = new Registry();
  registerProcessMetrics(registry);
  const first = await scrape(registry);
  assert.deepEqual([...first.keys()].sort(), [...PROCESS_METRIC_NAMES].sort());
  assert.ok(first.get('process_resident_memory_bytes')! > 10 * 1024 * 1024, 'RSS read from /proc/self/status');
  assert.ok(first.get('process_virtual_memory_bytes')! >= first.get('process_resident_memory_bytes')!);
  assert.ok(first.get('nodejs_heap_size_used_bytes')! > 0 && first.get('nodejs_heap_size_used_bytes')! <= first.get('nodejs_heap_size_total_bytes')!);
  assert.ok(first.get('process_open_fds')! > 0 && first.get('process_open_fds')! < first.get('process_max_fds')!);
  assert.ok(Math.abs(first.get('process_start_time_seconds')! - (Date.now() / 1000 - process.uptime())) <= 1);
  const start = process.cpuUsage();
  while (process.cpuUsage(start).user < 100_000); // 100 ms of user CPU, however busy the machine is
  await new Promise((r) => setTimeout(r, 50)); // the event loop delay histogram samples while idle
  const second = await scrape(registry);
  const cpu = second.get('process_cpu_seconds_total')! - first.get('process_cpu_seconds_total')!;
  assert.ok(cpu >= 0.1, `CPU spent between the scrapes: ${cpu} s`);
  assert.ok(Math.abs(second.get('process_cpu_seconds_total')! - second.get('process_cpu_user_seconds_total')! - second.get('process_cpu_system_seconds_total')!) < 1e-6, 'total = user + system, in the same scrape');
  assert.ok(second.get('nodejs_eventloop_lag_p99_seconds')! >= second.get('nodejs_eventloop_lag_p50_seconds')!);
});

test('the runtime\'s metrics load neither prom-client\'s main module nor @opentelemetry/api', () => {
  const script = `
    const { RuntimeMetrics } = await import(${JSON.stringify(new URL('../../src/manager/metrics.ts', import.meta.url).href)});
    const { createRequire } = await import('node:module');
    await new RuntimeMetrics().registry.metrics();
    const loaded = Object.keys(createRequire(import.meta.url).cache);
    console.log(JSON.stringify(loaded.filter((p) => /opentelemetry|prom-client[\\\\/]index\\.js|defaultMetrics/.test(p))));`;
  const out = execFileSync(process.execPath, ['--conditions=@quorum/source', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out.trim().split('\n').at(-1)!), []);
});

test('importing the runtime does not load Node\'s bundled undici (an ES module import of node:http would)', () => {
  const script = `
    await import(${JSON.stringify(new URL('../../src/index.ts', import.meta.url).href)});
    console.log(JSON.stringify(process.moduleLoadList.filter((m) => m.includes('undici'))));`;
  const out = execFileSync(process.execPath, ['--conditions=@quorum/source', '--input-type=module', '-e', script], { encoding: 'utf8' });
  assert.deepEqual(JSON.parse(out.trim().split('\n').at(-1)!), []);
});
