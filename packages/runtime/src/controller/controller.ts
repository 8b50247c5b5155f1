// A controller: a work queue of keys fed by informer handlers, and workers that reconcile one key at a
// time each. The queue guarantees a key is never reconciled by two workers at once; errors back off per
// key; a reconcile that outlives its timeout is aborted through its signal. A key that keeps failing is
// voiced like every other retry loop: a warn line with the error at most every 30 s per key, debug in between,
// one info line when it succeeds again, and `runtime_retries_total{component="controller/<name>"}`.
import type { Logger } from 'pino';
import { keyString, parseKey } from '../object.ts';
import type { RuntimeMetrics } from '../manager/metrics.ts';
import type { RateLimiter } from '../queue/rate-limiter.ts';
import { defaultControllerRateLimiter } from '../queue/rate-limiter.ts';
import { WorkQueue } from '../queue/workqueue.ts';
import { RetryReporter } from '../watch/retry-reporter.ts';
import { ReconcileScope } from './reconcile-scope.ts';
import { TerminalError, type Reconciler, type Request, type Result } from './reconciler.ts';

/** Reporters of recovered keys kept (for warn spacing) before they are swept. */
const MAX_IDLE_REPORTERS = 1000;

export interface ControllerOptions {
  maxConcurrentReconciles?: number;
  /** Abort a reconcile after this long (default 60 s); it is then retried with backoff. */
  reconcileTimeoutMs?: number;
  rateLimiter?: RateLimiter<string>;
}

export class Controller {
  readonly name: string;
  readonly queue: WorkQueue<string>;
  readonly #reconcile: Reconciler;
  readonly #options: Required<Omit<ControllerOptions, 'rateLimiter'>>;
  readonly #log: Logger;
  readonly #metrics: RuntimeMetrics;
  #started = false;
  /**
   * A reporter per key that has failed. Kept after it recovers, so a key that flaps between failing and
   * succeeding still warns at most every 30 s; healthy ones are dropped once there are many.
   */
  readonly #reporters = new Map<string, RetryReporter>();

  constructor(name: string, reconcile: Reconciler, log: Logger, metrics: RuntimeMetrics, options: ControllerOptions = {}) {
    this.name = name;
    this.#reconcile = reconcile;
    this.#log = log.child({ controller: name });
    this.#metrics = metrics;
    this.#options = { maxConcurrentReconciles: options.maxConcurrentReconciles ?? 1, reconcileTimeoutMs: options.reconcileTimeoutMs ?? 60_000 };
    this.queue = new WorkQueue<string>({ name, rateLimiter: options.rateLimiter ?? defaultControllerRateLimiter<string>(), metrics: metrics.queue });
  }

  enqueue(request: Request): void {
    this.queue.add(keyString(request));
  }

  /**
   * Runs the workers until `signal` aborts, then stops taking keys and waits (up to `drainMs`) for the
   * reconciles in flight to finish.
   */
  async run(signal: AbortSignal, drainMs = 30_000): Promise<void> {
    if (this.#started) throw new Error(`controller ${this.name} already started`);
    this.#started = true;
    this.#log.info({ workers: this.#options.maxConcurrentReconciles }, 'starting workers');
    const workers = Array.from({ length: this.#options.maxConcurrentReconciles }, () => this.#worker(signal));
    await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
    const drained = this.queue.shutDownWithDrain();
    const timer = new Promise<'timeout'>((resolve) => setTimeout(() => resolve('timeout'), drainMs).unref());
    if ((await Promise.race([drained, timer])) === 'timeout') this.#log.warn({ drainMs }, 'reconciles still running after the drain timeout');
    await Promise.race([Promise.all(workers), timer]);
    this.#log.info('stopped');
  }

  async #worker(signal: AbortSignal): Promise<void> {
    for (;;) {
      const key = await this.queue.get();
      if (key === undefined) return;
      try {
        await this.#process(key, signal);
      } finally {
        this.queue.done(key);
      }
    }
  }

  async #process(key: string, shutdown: AbortSignal): Promise<void> {
    const request = parseKey(key);
    const scope = new ReconcileScope(this.#log, request, shutdown, this.#options.reconcileTimeoutMs, this.queue.numRequeues(key));
    const started = performance.now();
    const controller = this.name;
    this.#metrics.activeWorkers.inc({ controller });
    let result: Result | void;
    try {
      // Awaited even past its timeout: returning early would let another worker take the same key while
      // this reconcile still runs. The signal tells it to stop.
      result = await this.#reconcile(request, scope);
    } catch (err) {
      const seconds = (performance.now() - started) / 1000;
      this.#metrics.reconcileTime.observe({ controller }, seconds);
      this.#metrics.reconcileErrors.inc({ controller });
      if (err instanceof TerminalError) {
        this.#metrics.reconcileTotal.inc({ controller, result: 'terminal' });
        this.queue.forget(key);
        this.#reporters.delete(key);
        scope.log.error({ err }, 'reconcile failed with a terminal error; not retrying');
      } else if (shutdown.aborted) {
        this.#metrics.reconcileTotal.inc({ controller, result: 'error' });
        scope.log.info('reconcile interrupted by shutdown');
      } else {
        this.#metrics.reconcileTotal.inc({ controller, result: 'error' });
        const retryInMs = this.queue.addRateLimited(key);
        const failure = scope.timedOut ? new Error(`reconcile timed out after ${this.#options.reconcileTimeoutMs} ms`, { cause: err }) : err;
        this.#reporterFor(key, request).failed(failure, { retryInMs });
      }
      return;
    } finally {
      scope.end();
      this.#metrics.activeWorkers.dec({ controller });
    }
    this.#metrics.reconcileTime.observe({ controller }, (performance.now() - started) / 1000);
    this.#reporters.get(key)?.succeeded();
    if (result?.requeueAfter !== undefined) {
      this.#metrics.reconcileTotal.inc({ controller, result: 'requeue_after' });
      this.queue.forget(key);
      this.queue.addAfter(key, result.requeueAfter);
    } else if (result?.requeue) {
      this.#metrics.reconcileTotal.inc({ controller, result: 'requeue' });
      this.queue.addRateLimited(key);
    } else {
      this.#metrics.reconcileTotal.inc({ controller, result: 'success' });
      this.queue.forget(key);
    }
  }

  #reporterFor(key: string, request: Request): RetryReporter {
    let reporter = this.#reporters.get(key);
    if (!reporter) {
      if (this.#reporters.size >= MAX_IDLE_REPORTERS) for (const [k, r] of this.#reporters) if (!r.failing()) this.#reporters.delete(k);
      const counter = this.#metrics.retries;
      reporter = new RetryReporter({
        component: `controller/${this.name}`,
        log: this.#log.child({ namespace: request.namespace || undefined, name: request.name }),
        // Counted per controller; no failing-since gauge, which would be one series per key.
        metrics: { retried: (component, reason) => counter.retried(component, reason), failingSince: () => undefined },
        withStack: true,
      });
      this.#reporters.set(key, reporter);
    }
    return reporter;
  }
}
