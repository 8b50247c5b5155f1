// The process's own metrics, under the names Prometheus's client libraries (and prom-client's default metrics)
// give them, so dashboards written for those work unchanged: CPU, memory, file descriptors, start time, the V8
// heap, the event loop's delay and the Node.js version. Written here rather than taken from prom-client's
// collectDefaultMetrics, which loads @opentelemetry/api with it (prom.ts says why that matters). Left out:
// per-space heap sizes, GC durations and active handles/requests, which prom-client also reports.
import { readdirSync, readFileSync } from 'node:fs';
import { monitorEventLoopDelay } from 'node:perf_hooks';
import { Counter, Gauge, type Registry } from './prom.ts';

/** The names this module registers, for tests and docs. */
export const PROCESS_METRIC_NAMES = [
  'process_cpu_user_seconds_total',
  'process_cpu_system_seconds_total',
  'process_cpu_seconds_total',
  'process_start_time_seconds',
  'process_resident_memory_bytes',
  'process_virtual_memory_bytes',
  'process_heap_bytes',
  'process_open_fds',
  'process_max_fds',
  'nodejs_heap_size_total_bytes',
  'nodejs_heap_size_used_bytes',
  'nodejs_external_memory_bytes',
  'nodejs_eventloop_lag_seconds',
  'nodejs_eventloop_lag_p50_seconds',
  'nodejs_eventloop_lag_p99_seconds',
  'nodejs_version_info',
] as const;

/** Registers the process metrics in `registry`; each is read when scraped. */
export function registerProcessMetrics(registry: Registry): void {
  const registers = [registry];
  const startSeconds = Math.round(Date.now() / 1000 - process.uptime());
  let last = process.cpuUsage();
  // Each group's first metric reads the values for the group when scraped: the registry reads metrics in the order
  // they were registered, so the ones it sets are registered after it. Counters only go up: a scrape adds what was
  // spent since the last one.
  new Counter({
    name: 'process_cpu_user_seconds_total',
    help: 'Total user CPU time spent in seconds.',
    registers,
    collect() {
      const now = process.cpuUsage();
      this.inc((now.user - last.user) / 1e6);
      system.inc((now.system - last.system) / 1e6);
      total.inc((now.user - last.user + now.system - last.system) / 1e6);
      last = now;
    },
  });
  const system = new Counter({ name: 'process_cpu_system_seconds_total', help: 'Total system CPU time spent in seconds.', registers });
  const total = new Counter({ name: 'process_cpu_seconds_total', help: 'Total user and system CPU time spent in seconds.', registers });
  new Gauge({ name: 'process_start_time_seconds', help: 'Start time of the process since unix epoch in seconds.', registers, collect() { this.set(startSeconds); } });
  registerMemoryMetrics(registers);
  registerDescriptorMetrics(registers);
  registerEventLoopMetrics(registers);
  const version = new Gauge({ name: 'nodejs_version_info', help: 'Node.js version info.', labelNames: ['version', 'major', 'minor', 'patch'], registers });
  const [major = '', minor = '', patch = ''] = process.versions.node.split('.');
  version.set({ version: process.version, major, minor, patch }, 1);
}

/** process_* from /proc/self/status (VmRSS, VmSize, VmData), nodejs_heap_* from V8. */
function registerMemoryMetrics(registers: Registry[]): void {
  new Gauge({
    name: 'process_resident_memory_bytes',
    help: 'Resident memory size in bytes.',
    registers,
    collect() {
      const status = procStatus();
      this.set(status.get('VmRSS') ?? process.memoryUsage.rss());
      if (status.has('VmSize')) virtual.set(status.get('VmSize')!);
      if (status.has('VmData')) data.set(status.get('VmData')!);
    },
  });
  const virtual = new Gauge({ name: 'process_virtual_memory_bytes', help: 'Virtual memory size in bytes.', registers });
  const data = new Gauge({ name: 'process_heap_bytes', help: 'Process heap size in bytes.', registers });
  new Gauge({
    name: 'nodejs_heap_size_total_bytes',
    help: 'Process heap size from Node.js in bytes.',
    registers,
    collect() {
      const m = process.memoryUsage();
      this.set(m.heapTotal);
      used.set(m.heapUsed);
      external.set(m.external);
    },
  });
  const used = new Gauge({ name: 'nodejs_heap_size_used_bytes', help: 'Process heap size used from Node.js in bytes.', registers });
  const external = new Gauge({ name: 'nodejs_external_memory_bytes', help: 'Node.js external memory size in bytes.', registers });
}

/** /proc/self/status's kB lines in bytes; empty where there is no /proc. */
function procStatus(): Map<string, number> {
  const values = new Map<string, number>();
  let text = '';
  try {
    text = readFileSync('/proc/self/status', 'utf8');
  } catch {
    return values;
  }
  for (const line of text.split('\n')) {
    const m = /^(\w+):\s+(\d+) kB$/.exec(line);
    if (m) values.set(m[1]!, Number(m[2]) * 1024);
  }
  return values;
}

function registerDescriptorMetrics(registers: Registry[]): void {
  new Gauge({
    name: 'process_open_fds',
    help: 'Number of open file descriptors.',
    registers,
    collect() {
      try {
        // One entry is the descriptor readdir itself holds while it reads.
        this.set(Math.max(0, readdirSync('/proc/self/fd').length - 1));
      } catch {
        // no /proc: the series stays at its last value (0)
      }
    },
  });
  new Gauge({
    name: 'process_max_fds',
    help: 'Maximum number of open file descriptors.',
    registers,
    collect() {
      try {
        const m = /^Max open files\s+(\d+)/m.exec(readFileSync('/proc/self/limits', 'utf8'));
        if (m) this.set(Number(m[1]));
      } catch {
        // no /proc
      }
    },
  });
}

/** The event loop's delay since the last scrape (perf_hooks' histogram, 10 ms resolution), in seconds. */
function registerEventLoopMetrics(registers: Registry[]): void {
  const histogram = monitorEventLoopDelay({ resolution: 10 });
  histogram.enable();
  new Gauge({
    name: 'nodejs_eventloop_lag_seconds',
    help: 'Mean event loop delay since the last scrape, in seconds.',
    registers,
    collect() {
      const mean = histogram.mean;
      this.set(Number.isFinite(mean) ? mean / 1e9 : 0);
      p50.set(histogram.count > 0 ? histogram.percentile(50) / 1e9 : 0);
      p99.set(histogram.count > 0 ? histogram.percentile(99) / 1e9 : 0);
      histogram.reset();
    },
  });
  const p50 = new Gauge({ name: 'nodejs_eventloop_lag_p50_seconds', help: 'The 50th percentile of the event loop delays since the last scrape, in seconds.', registers });
  const p99 = new Gauge({ name: 'nodejs_eventloop_lag_p99_seconds', help: 'The 99th percentile of the event loop delays since the last scrape, in seconds.', registers });
}
