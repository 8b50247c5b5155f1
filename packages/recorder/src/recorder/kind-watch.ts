// One watched scope: a kind in one namespace, or in all of them (cluster-scoped kinds too). An informer of
// the runtime lists and watches it; once its first list is complete, the whole list goes to the sink at once
// (to be compared with what was last seen), and from then on each change goes to the sink as it comes, with
// the version before it (the informer's cached copy) for updates and the last state for deletions.
import { Informer, RetrySeriesScope, type Client, type OpenObject, type RetryFailure, type RetryLog, type RetryMetrics } from '@quorum/runtime';
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
  /** Its informer's retry series, removed when the watch stops (a namespace no longer recorded, a deleted ChangeRecorder). */
  readonly #metrics: RetrySeriesScope;
  /** Changes are being followed (the first list has been handed over). */
  #live = false;
  /** ...and that list has been compared with the records. */
  #ready = false;

  constructor(client: Client, target: WatchTarget, sink: ChangeSink, options: KindWatchOptions = {}) {
    this.target = target;
    const kind = target.kind;
    this.#metrics = new RetrySeriesScope(options.metrics);
    this.#informer = new Informer<OpenObject>(client, kind.type, {
      namespace: target.namespace,
      // The runtime's default transform drops managedFields whole; records need to know who changed what.
      transform: keepManagersOnly,
      log: options.log,
      metrics: this.#metrics,
      // Called before the informer applies any later change: the list and the changes after it meet exactly.
      onInitialList: (listed) => {
        const compared = sink.resumed(target, listed);
        this.#live = true;
        void compared.then(() => {
          this.#ready = true;
          options.onReady?.();
        });
      },
    });
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
  }

  start(): void {
    void this.#informer.run();
  }

  async stop(): Promise<void> {
    await this.#informer.stop();
    this.#metrics.forgetAll();
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
}
