// Retry series that go when what they count goes. `runtime_retries_total{component,reason}` and
// `runtime_failing_since_seconds{component}` have one series per component; a component named after an object
// (a ChangeRecorder, the namespace a watch follows) would stay on /metrics for ever after the object is
// deleted, and a re-created object with the same name would carry on its predecessor's counts. A
// RetrySeriesScope names the components of one owner below a prefix, remembers which it used, and removes
// them all when the owner is gone.
import type { RetryMetrics } from '../watch/retry-reporter.ts';

/** RetryMetrics whose series of one component can be removed (RuntimeMetrics.retries is one). */
export interface RetrySeries extends RetryMetrics {
  /** Removes every series of `component`: its retries by each reason, and its failing-since gauge. */
  forget(component: string): void;
}

export class RetrySeriesScope implements RetrySeries {
  readonly #parent: RetryMetrics | undefined;
  readonly #prefix: string;
  /** The components used, as the parent names them. */
  readonly #used = new Set<string>();

  /** Components are counted in `parent` as `prefix` + their own name (e.g. `recorder/app/` + `storage`). */
  constructor(parent: RetryMetrics | undefined, prefix = '') {
    this.#parent = parent;
    this.#prefix = prefix;
  }

  retried(component: string, reason: string): void {
    this.#parent?.retried(this.#name(component), reason);
  }

  failingSince(component: string, sinceMs: number | undefined): void {
    this.#parent?.failingSince(this.#name(component), sinceMs);
  }

  forget(component: string): void {
    const name = this.#prefix + component;
    this.#used.delete(name);
    forgetIn(this.#parent, name);
  }

  /** Removes every series this scope has counted; the scope may count again afterwards (from zero). */
  forgetAll(): void {
    for (const name of this.#used) forgetIn(this.#parent, name);
    this.#used.clear();
  }

  #name(component: string): string {
    const name = this.#prefix + component;
    this.#used.add(name);
    return name;
  }
}

function forgetIn(metrics: RetryMetrics | undefined, component: string): void {
  if (metrics && 'forget' in metrics && typeof metrics.forget === 'function') (metrics as RetrySeries).forget(component);
}
