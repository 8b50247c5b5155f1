// The namespaces a label selector picks, kept current: an informer of the runtime on Namespaces with the
// selector, so the API server does the matching; a namespace whose labels start or stop matching arrives
// as an add or a delete, and the recorder is told to recompute what it watches.
import { Informer, Namespaces, RetrySeriesScope, type Client, type OpenObject, type RetryFailure, type RetryLog, type RetryMetrics } from '@quorum/runtime';

export class NamespaceWatch {
  readonly selector: string;
  readonly #informer: Informer<OpenObject>;
  /** Its informer's retry series, removed when the selector changes or the ChangeRecorder goes. */
  readonly #metrics: RetrySeriesScope;

  constructor(client: Client, selector: string, onChange: () => void, options: { log?: RetryLog; metrics?: RetryMetrics } = {}) {
    this.selector = selector;
    this.#metrics = new RetrySeriesScope(options.metrics);
    this.#informer = new Informer<OpenObject>(client, Namespaces, { labelSelector: selector, log: options.log, metrics: this.#metrics, onInitialList: onChange });
    this.#informer.addHandler({ onAdd: onChange, onDelete: onChange });
  }

  start(): void {
    void this.#informer.run();
  }

  async stop(): Promise<void> {
    await this.#informer.stop();
    this.#metrics.forgetAll();
  }

  /** The matching namespaces, sorted; undefined until the first list is complete. */
  names(): string[] | undefined {
    if (!this.#informer.hasSynced()) return undefined;
    return this.#informer.store.list().map((ns) => ns.metadata.name ?? '').filter(Boolean).sort();
  }

  failing(): RetryFailure | undefined {
    return this.#informer.failing();
  }
}
