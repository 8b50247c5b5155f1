// One watched scope: a kind in one namespace, or in all of them (cluster-scoped kinds too). An informer of
// the runtime lists and watches it; once its first list is complete, the whole list goes to the sink at once
// (to be compared with what was last seen), and from then on each change goes to the sink as it comes, with
// the version before it (the informer's cached copy) for updates and the last state for deletions.
import { Informer, type Client, type OpenObject, type RetryFailure, type RetryLog, type RetryMetrics } from '@quorum/runtime';
import { keepManagersOnly } from '../record/author.ts';
import type { ResolvedKind } from './discovery.ts';

export interface WatchTarget {
  kind: ResolvedKind;
  /** One namespace; undefined for all namespaces, and always for cluster-scoped kinds. */
  namespace?: string;
}

export function targetKey(target: WatchTarget): string {
  return `${target.kind.group}/${target.kind.kind}/${target.kind.version}/${target.namespace ?? '*'}`;
}

/** Where a watch sends what it sees. */
export interface ChangeSink {
  /**
   * The complete list, once, when the watch starts: everything that exists now in the target's scope.
   * Resolves once it has been compared with what was recorded before (and the findings written).
   */
  resumed(target: WatchTarget, listed: readonly OpenObject[]): Promise<void>;
  created(kind: ResolvedKind, obj: OpenObject): void;
  updated(kind: ResolvedKind, before: OpenObject, after: OpenObject): void;
  deleted(kind: ResolvedKind, last: OpenObject): void;
}

export interface KindWatchOptions {
  log?: RetryLog;
  metrics?: RetryMetrics;
  /** Told once the first list has been compared with the records (the watch is ready). */
  onReady?: () => void;
}

export class KindWatch {
  readonly target: WatchTarget;
  readonly #informer: Informer<OpenObject>;
  readonly #stop = new AbortController();
  #running: Promise<void> | undefined;
  /** Changes are being followed (the first list has been handed over). */
  #live = false;
  /** ...and that list has been compared with the records. */
  #ready = false;

  constructor(client: Client, target: WatchTarget, sink: ChangeSink, options: KindWatchOptions = {}) {
    this.target = target;
    this.#informer = new Informer<OpenObject>(client, target.kind.type, {
      namespace: target.namespace,
      // The runtime's default transform drops managedFields whole; records need to know who changed what.
      transform: keepManagersOnly,
      log: options.log,
      metrics: options.metrics,
    });
    const kind = target.kind;
    // Until the first list is complete its adds are not news: resumed() compares the whole list instead.
    this.#informer.addHandler({
      onAdd: (obj) => {
        if (this.#live) sink.created(kind, obj);
      },
      onUpdate: (before, after) => {
        if (this.#live) sink.updated(kind, before, after);
      },
      onDelete: (last) => {
        if (this.#live) sink.deleted(kind, last);
      },
    });
    this.#onSynced(sink, options.onReady);
  }

  start(): void {
    this.#running ??= this.#informer.run(this.#stop.signal);
  }

  async stop(): Promise<void> {
    this.#stop.abort();
    await this.#running;
  }

  /** Whether the first list has been compared with the records and changes are being followed. */
  get ready(): boolean {
    return this.#ready;
  }

  get objects(): number {
    return this.#informer.store.size;
  }

  /** The list or watch failure under way (the API server's words, since when), if any. */
  failing(): RetryFailure | undefined {
    return this.#informer.failing();
  }

  #onSynced(sink: ChangeSink, onReady: (() => void) | undefined): void {
    this.#informer.waitForSync(this.#stop.signal).then(
      () => {
        // No await between the sync and going live: the informer's next event needs network I/O, so it
        // cannot slip in between the snapshot and the first live handler call.
        const compared = sink.resumed(this.target, this.#informer.store.list());
        this.#live = true;
        void compared.then(() => {
          this.#ready = true;
          onReady?.();
        });
      },
      () => undefined, // stopped before the first list completed
    );
  }
}
