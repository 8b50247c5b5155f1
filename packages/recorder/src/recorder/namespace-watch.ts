// The namespaces a label selector picks, kept current: an informer of the runtime on Namespaces with the
// selector, so the API server does the matching; a namespace whose labels start or stop matching arrives
// as an add or a delete, and the recorder is told to recompute what it watches.
import { Informer, Namespaces, type Client, type OpenObject, type RetryFailure, type RetryLog, type RetryMetrics } from '@quorum/runtime';

export class NamespaceWatch {
  readonly selector: string;
  readonly #informer: Informer<OpenObject>;
  readonly #stop = new AbortController();
  #running: Promise<void> | undefined;

  constructor(client: Client, selector: string, onChange: () => void, options: { log?: RetryLog; metrics?: RetryMetrics } = {}) {
    this.selector = selector;
    this.#informer = new Informer<OpenObject>(client, Namespaces, { labelSelector: selector, log: options.log, metrics: options.metrics });
    this.#informer.addHandler({ onAdd: onChange, onDelete: onChange });
    void this.#informer.waitForSync(this.#stop.signal).then(onChange, () => undefined);
  }

  start(): void {
    this.#running ??= this.#informer.run(this.#stop.signal);
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
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
