// Prometheus metrics of a manager, in a registry of its own (several managers may share a process in tests).
// Names follow controller-runtime's, so existing dashboards work.
import { registerProcessMetrics } from './process-metrics.ts';
import { Counter, Gauge, Histogram, Registry } from './prom.ts';
import type { WorkQueueMetrics } from '../queue/workqueue.ts';
import type { RetrySeries } from '../metrics/retry-series.ts';

const DURATION_BUCKETS = [0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 30, 60];

/** One series of a collectedGauge: its labels and its value now. */
export interface CollectedSample<L extends string> {
  labels: Record<L, string>;
  value: number;
}

export class RuntimeMetrics {
  readonly registry: Registry;
  readonly reconcileTotal: Counter<'controller' | 'result'>;
  readonly reconcileErrors: Counter<'controller'>;
  readonly reconcileTime: Histogram<'controller'>;
  readonly activeWorkers: Gauge<'controller'>;
  readonly leader: Gauge<'name'>;
  readonly apiRequests: Counter<'method' | 'code' | 'resource'>;
  readonly queue: WorkQueueMetrics;
  /**
   * The runtime's own retry loops (watches, leader election, reconciles, event writes, certificate reloads):
   * `runtime_retries_total{component,reason}` counts every retry, and `runtime_failing_since_seconds{component}`
   * is the Unix time a loop's current run of failures began, 0 while it is healthy, so
   * `time() - runtime_failing_since_seconds > 60 and runtime_failing_since_seconds > 0` finds a loop stuck for a minute.
   * `forget(component)` removes a component's series once its loop is gone for good (RetrySeriesScope).
   */
  readonly retries: RetrySeries;

  /**
   * A counter of the operator's own in this manager's registry (served on /metrics with the rest), so
   * operators built on the runtime need no metrics library of their own. Asking twice gives the same one.
   */
  counter<L extends string>(name: string, help: string, labelNames: readonly L[]): { inc(labels: Record<L, string>, value?: number): void } {
    const existing = this.registry.getSingleMetric(name);
    const counter = (existing as Counter<L> | undefined) ?? new Counter({ name, help, labelNames: [...labelNames], registers: [this.registry] });
    return { inc: (labels, value = 1) => counter.inc(labels as Partial<Record<L, string | number>>, value) };
  }

  /** A gauge of the operator's own, like counter(): last values such as a backup's size or time of success. */
  gauge<L extends string>(name: string, help: string, labelNames: readonly L[]): { set(labels: Record<L, string>, value: number): void; remove(labels: Record<L, string>): void } {
    const existing = this.registry.getSingleMetric(name);
    const gauge = (existing as Gauge<L> | undefined) ?? new Gauge({ name, help, labelNames: [...labelNames], registers: [this.registry] });
    return {
      set: (labels, value) => gauge.set(labels as Partial<Record<L, string | number>>, value),
      remove: (labels) => gauge.remove(labels as Partial<Record<L, string | number>>),
    };
  }

  /**
   * A histogram of the operator's own, like counter(): durations observed as they end. `buckets` applies when
   * it is first asked for.
   */
  histogram<L extends string>(name: string, help: string, labelNames: readonly L[], buckets: readonly number[] = DURATION_BUCKETS): { observe(labels: Record<L, string>, value: number): void } {
    const existing = this.registry.getSingleMetric(name);
    const histogram = (existing as Histogram<L> | undefined) ?? new Histogram({ name, help, labelNames: [...labelNames], buckets: [...buckets], registers: [this.registry] });
    return { observe: (labels, value) => histogram.observe(labels as Partial<Record<L, string | number>>, value) };
  }

  /**
   * A gauge whose every series is computed when /metrics is read, from what `collect` returns (e.g. read from
   * informer caches): nothing to keep in step with the objects, and a series whose object is gone simply
   * stops being listed. Registering a name twice replaces the first collector.
   */
  collectedGauge<L extends string>(name: string, help: string, labelNames: readonly L[], collect: () => Iterable<CollectedSample<L>>): void {
    this.registry.removeSingleMetric(name);
    new Gauge({
      name,
      help,
      labelNames: [...labelNames],
      registers: [this.registry],
      collect() {
        this.reset();
        for (const sample of collect()) this.set(sample.labels as Partial<Record<L, string | number>>, sample.value);
      },
    });
  }

  constructor(options: { processMetrics?: boolean } = {}) {
    const registry = (this.registry = new Registry());
    if (options.processMetrics !== false) registerProcessMetrics(registry);
    this.reconcileTotal = new Counter({ name: 'controller_runtime_reconcile_total', help: 'Reconciliations per controller and result', labelNames: ['controller', 'result'], registers: [registry] });
    this.reconcileErrors = new Counter({ name: 'controller_runtime_reconcile_errors_total', help: 'Reconciliation errors per controller', labelNames: ['controller'], registers: [registry] });
    this.reconcileTime = new Histogram({ name: 'controller_runtime_reconcile_time_seconds', help: 'Reconciliation duration', labelNames: ['controller'], buckets: DURATION_BUCKETS, registers: [registry] });
    this.activeWorkers = new Gauge({ name: 'controller_runtime_active_workers', help: 'Workers reconciling now', labelNames: ['controller'], registers: [registry] });
    this.leader = new Gauge({ name: 'leader_election_master_status', help: '1 while this process leads', labelNames: ['name'], registers: [registry] });
    this.apiRequests = new Counter({ name: 'rest_client_requests_total', help: 'API server requests by method, status code and resource', labelNames: ['method', 'code', 'resource'], registers: [registry] });

    const depth = new Gauge({ name: 'workqueue_depth', help: 'Items waiting in the queue', labelNames: ['name'], registers: [registry] });
    const adds = new Counter({ name: 'workqueue_adds_total', help: 'Items added', labelNames: ['name'], registers: [registry] });
    const latency = new Histogram({ name: 'workqueue_queue_duration_seconds', help: 'Time an item waits before a worker takes it', labelNames: ['name'], buckets: DURATION_BUCKETS, registers: [registry] });
    const work = new Histogram({ name: 'workqueue_work_duration_seconds', help: 'Time a worker holds an item', labelNames: ['name'], buckets: DURATION_BUCKETS, registers: [registry] });
    const retries = new Counter({ name: 'workqueue_retries_total', help: 'Rate-limited re-adds', labelNames: ['name'], registers: [registry] });
    const unfinished = new Gauge({ name: 'workqueue_unfinished_work_seconds', help: 'Seconds of work in progress', labelNames: ['name'], registers: [registry] });
    const retried = new Counter({ name: 'runtime_retries_total', help: 'Retries of the runtime\'s loops (watch, leader election, reconcile, events, certificates), by component and reason', labelNames: ['component', 'reason'], registers: [registry] });
    const failingSince = new Gauge({ name: 'runtime_failing_since_seconds', help: 'Unix time a runtime loop began failing without a success since; 0 while it is healthy', labelNames: ['component'], registers: [registry] });
    // The reasons counted per component: a counter's series can only be removed by their full labels.
    const reasons = new Map<string, Set<string>>();
    this.retries = {
      retried: (component, reason) => {
        let seen = reasons.get(component);
        if (!seen) reasons.set(component, (seen = new Set()));
        seen.add(reason);
        retried.inc({ component, reason });
      },
      failingSince: (component, sinceMs) => failingSince.set({ component }, sinceMs === undefined ? 0 : sinceMs / 1000),
      forget: (component) => {
        for (const reason of reasons.get(component) ?? []) retried.remove({ component, reason });
        reasons.delete(component);
        failingSince.remove({ component });
      },
    };
    this.queue = {
      add: (name) => adds.inc({ name }),
      depth: (name, value) => depth.set({ name }, value),
      queueLatency: (name, seconds) => latency.observe({ name }, seconds),
      workDuration: (name, seconds) => work.observe({ name }, seconds),
      retry: (name) => retries.inc({ name }),
      unfinishedWork: (name, seconds) => unfinished.set({ name }, seconds),
    };
  }
}

/** The resource (plural, with its subresource) a request path addresses: `pods`, `leases`, `etcdclusters/status`. */
export function resourceOf(path: string): string {
  const parts = path.split('?')[0]!.split('/').filter(Boolean);
  // /api/v1/... or /apis/<group>/<version>/...
  let rest = parts[0] === 'api' ? parts.slice(2) : parts[0] === 'apis' ? parts.slice(3) : parts;
  if (rest[0] === 'namespaces' && rest.length > 2) rest = rest.slice(2);
  return [rest[0], rest[2]].filter(Boolean).join('/') || 'other';
}
