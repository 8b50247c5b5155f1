// A shared informer: one watcher feeding one store, with handlers told about every change. Handlers are
// meant only to enqueue keys; reads go to the store. Scoped to several namespaces (a namespace-scoped
// operator's tenants), it runs one watcher per namespace, all feeding the one store: like controller-runtime's
// MultiNamespacedCache, one reader over one watch per namespace, which RBAC granted per namespace (a Role in
// each) allows where a watch of every namespace is forbidden. An optional resync replays the cached objects to the
// handlers as updates (from memory: it is not a relist). Its watcher's failures and recoveries are voiced by a
// RetryReporter, whose `failing()` the manager's /readyz reads: a cache that cannot list or watch for longer
// than a bound makes the process unready, naming the resource and the server's error.
import type { Client } from '../client/client.ts';
import type { ResourceType } from '../client/resources.ts';
import { objectKeyString, type KubeObject } from '../object.ts';
import { RetryReporter, type RetryFailure, type RetryLog, type RetryMetrics } from '../watch/retry-reporter.ts';
import { watchInto, type ToldObjects, type WatcherEvent, type WatcherOptions } from '../watch/watcher.ts';
import { defaultIndexers, Store, type Indexer } from './store.ts';

export interface EventHandler<T extends KubeObject> {
  onAdd?(obj: T): void;
  onUpdate?(oldObj: T, newObj: T): void;
  onDelete?(obj: T): void;
}

export interface InformerOptions<T extends KubeObject> {
  namespace?: string;
  /**
   * Several namespaces: one list and watch per namespace, all in this informer's one store (instead of
   * `namespace`; at least one). The first list is complete once every namespace's is.
   */
  namespaces?: readonly string[];
  labelSelector?: string;
  fieldSelector?: string;
  indexers?: Record<string, Indexer<T>>;
  /** Replay every cached object to the handlers this often (0: never). */
  resyncMs?: number;
  watchdogMs?: number;
  pageSize?: number;
  /**
   * Applied to every object before it is cached and handed to the handlers (deleted ones too); the default
   * drops managedFields, which no controller reads. A recorder of changes keeps a trimmed form instead.
   */
  transform?: (obj: T) => T;
  /**
   * Called once, with every cached object, when the first LIST is complete: before any later change is
   * applied to the cache or told to a handler, so the list and the changes after it neither overlap nor leave
   * a gap (a consumer comparing the whole list with what it saw before, then following the changes). It must
   * not throw; a throw is logged as a warning.
   */
  onInitialList?: (objects: T[]) => void;
  onError?: WatcherOptions['onError'];
  /** Where the watch's failures and recoveries are logged (warn at most every 30 s while failing). */
  log?: RetryLog;
  /** Where its retries are counted (`runtime_retries_total{component="informer/<plural>…"}`). */
  metrics?: RetryMetrics;
  backoff?: WatcherOptions['backoff'];
  /** Injectable clock for the reporter (tests). */
  now?: () => number;
}

/** `informer/pods`, or with its scope: `informer/pods(namespace=db,labels=app=etcd)`, `informer/pods(namespaces=a,b)`. */
export function informerComponent(type: ResourceType, scope: { namespace?: string; namespaces?: readonly string[]; labelSelector?: string; fieldSelector?: string }): string {
  const parts = [
    scope.namespace ? `namespace=${scope.namespace}` : '',
    scope.namespaces?.length ? `namespaces=${[...new Set(scope.namespaces)].join(',')}` : '',
    scope.labelSelector ? `labels=${scope.labelSelector}` : '',
    scope.fieldSelector ? `fields=${scope.fieldSelector}` : '',
  ].filter(Boolean);
  return `informer/${type.plural}${parts.length ? `(${parts.join(',')})` : ''}`;
}

/** What a watcher reports other than a completed list. */
type Change<T extends KubeObject> = Exclude<WatcherEvent<T>, { type: 'synced' }>;

interface NamespaceWatch {
  /** Undefined: every namespace (or a cluster-scoped kind). */
  namespace: string | undefined;
  reporter: RetryReporter;
  /** Its first list is complete. */
  synced: boolean;
}

export function stripManagedFields<T extends KubeObject>(obj: T): T {
  if (!obj.metadata.managedFields) return obj;
  const { managedFields: _drop, ...metadata } = obj.metadata;
  return { ...obj, metadata };
}

export class Informer<T extends KubeObject> {
  readonly type: ResourceType<T>;
  readonly store: Store<T>;
  readonly #client: Client;
  readonly #options: InformerOptions<T>;
  readonly #component: string;
  /** One per namespace watched (one, unscoped, for a single namespace or all of them). */
  readonly #watches: NamespaceWatch[];
  readonly #handlers: EventHandler<T>[] = [];
  #synced = false;
  /** Changes in namespaces already listed, held until every namespace's first list is complete. */
  readonly #held: Change<T>[] = [];
  readonly #syncWaiters: { resolve: () => void; reject: (err: Error) => void }[] = [];
  #running: Promise<void> | undefined;
  readonly #stop = new AbortController();
  /** Changes seen since start (for metrics and tests). */
  readonly counts = { added: 0, modified: 0, deleted: 0, relists: 0, reconnects: 0 };

  constructor(client: Client, type: ResourceType<T>, options: InformerOptions<T> = {}) {
    this.#client = client;
    this.type = type;
    this.#options = options;
    this.store = new Store<T>({ ...defaultIndexers<T>(), ...options.indexers });
    this.#component = informerComponent(type, options);
    const reporter = (component: string): RetryReporter => new RetryReporter({ component, log: options.log, metrics: options.metrics, now: options.now });
    if (options.namespaces === undefined) {
      this.#watches = [{ namespace: options.namespace, reporter: reporter(this.#component), synced: false }];
    } else {
      if (options.namespace !== undefined) throw new Error(`${this.#component}: give namespace or namespaces, not both`);
      const namespaces = [...new Set(options.namespaces)];
      if (namespaces.length === 0 || namespaces.includes('')) throw new Error(`${informerComponent(type, {})}: namespaces must name at least one namespace, and no empty one (leave it unset for every namespace)`);
      // Each namespace's watch is voiced under its own name, which says which namespace fails.
      this.#watches = namespaces.map((namespace) => ({ namespace, reporter: reporter(informerComponent(type, { ...options, namespaces: undefined, namespace })), synced: false }));
    }
  }

  /** This informer's name in logs and metrics, e.g. `informer/pods(labels=app=etcd)`. */
  get component(): string {
    return this.#component;
  }

  /**
   * The list/watch failures under way (the server's last error, since when), or undefined while it watches.
   * Watching several namespaces: the one failing longest, its message naming the namespace.
   */
  failing(): RetryFailure | undefined {
    let worst: { failure: RetryFailure; namespace: string | undefined } | undefined;
    for (const w of this.#watches) {
      const failure = w.reporter.failing();
      if (failure && (!worst || failure.forMs > worst.failure.forMs)) worst = { failure, namespace: w.namespace };
    }
    if (!worst || this.#watches.length === 1) return worst?.failure;
    return { ...worst.failure, message: `namespace ${worst.namespace ?? ''}: ${worst.failure.message}` };
  }

  /** Handlers added after start are told about every cached object as an add, as client-go does. */
  addHandler(handler: EventHandler<T>): void {
    this.#handlers.push(handler);
    if (this.#synced) for (const obj of this.store.list()) handler.onAdd?.(obj);
  }

  hasSynced(): boolean {
    return this.#synced;
  }

  waitForSync(signal?: AbortSignal): Promise<void> {
    if (this.#synced) return Promise.resolve();
    if (this.#stop.signal.aborted) return Promise.reject(this.#stop.signal.reason as Error);
    return new Promise((resolve, reject) => {
      this.#syncWaiters.push({ resolve, reject });
      signal?.addEventListener('abort', () => reject(signal.reason as Error), { once: true });
    });
  }

  /** Runs until `signal` aborts or stop() is called. Calling it twice returns the same run. */
  run(signal?: AbortSignal): Promise<void> {
    this.#running ??= this.#run(signal ? AbortSignal.any([signal, this.#stop.signal]) : this.#stop.signal);
    return this.#running;
  }

  /** Stops the watch and resolves once the run has ended (at once if it never started). waitForSync callers are released with a rejection. */
  async stop(): Promise<void> {
    this.#stop.abort(new Error(`${this.component} stopped`));
    for (const waiter of this.#syncWaiters.splice(0)) waiter.reject(this.#stop.signal.reason as Error);
    await this.#running;
  }

  async #run(signal: AbortSignal): Promise<void> {
    const resync = this.#options.resyncMs ? setInterval(() => this.#resync(), this.#options.resyncMs) : undefined;
    try {
      await Promise.all(this.#watches.map((w) => this.#follow(w, signal)));
    } finally {
      clearInterval(resync);
    }
  }

  /** The store as the watcher's record of what it told (watchInto's `told`). */
  readonly #told: ToldObjects = {
    resourceVersion: (obj) => {
      const held = this.store.get(objectKeyString(obj));
      return held === undefined ? undefined : (held.metadata.resourceVersion ?? '');
    },
    list: () => this.store.list(),
  };

  /** One namespace's (or every namespace's) watch into the store. */
  async #follow(watch: NamespaceWatch, signal: AbortSignal): Promise<void> {
    // One watch applies each event before it takes the next, so the store is what the watcher told; several
    // hold changes until every namespace is listed, so each watcher keeps its own record.
    const told = this.#watches.length === 1 ? this.#told : undefined;
    const events = watchInto(this.#client, this.type, {
      namespace: watch.namespace,
      labelSelector: this.#options.labelSelector,
      fieldSelector: this.#options.fieldSelector,
      watchdogMs: this.#options.watchdogMs,
      pageSize: this.#options.pageSize,
      backoff: this.#options.backoff,
      reporter: watch.reporter,
      signal,
      onError: (err, action) => {
        if (action === 'relist') this.counts.relists++;
        else this.counts.reconnects++;
        this.#options.onError?.(err, action);
      },
    }, told);
    for await (const event of events) {
      if (event.type === 'synced') {
        watch.synced = true;
        if (!this.#synced && this.#watches.every((w) => w.synced)) {
          this.#initialListDone();
          for (const held of this.#held.splice(0)) this.#apply(held);
        }
      } else if (watch.synced && !this.#synced) {
        // This namespace is listed, another is not yet: the initial-list hook must see the whole first list
        // before any change after it.
        this.#held.push(event);
      } else {
        this.#apply(event);
      }
    }
  }

  #apply(event: Change<T>): void {
    const transform = this.#options.transform ?? stripManagedFields;
    if (event.type === 'deleted') {
      const last = this.store.remove(objectKeyString(event.object));
      this.counts.deleted++;
      const obj = last ?? transform(event.object);
      for (const h of this.#handlers) h.onDelete?.(obj);
      return;
    }
    const obj = transform(event.object);
    const previous = this.store.upsert(obj);
    if (previous) {
      this.counts.modified++;
      for (const h of this.#handlers) h.onUpdate?.(previous, obj);
    } else {
      this.counts.added++;
      for (const h of this.#handlers) h.onAdd?.(obj);
    }
  }

  #initialListDone(): void {
    this.#synced = true;
    try {
      this.#options.onInitialList?.(this.store.list());
    } catch (err) {
      this.#options.log?.warn({ err, component: this.component }, 'the initial-list hook threw');
    }
    for (const waiter of this.#syncWaiters.splice(0)) waiter.resolve();
  }

  #resync(): void {
    for (const obj of this.store.list()) for (const h of this.#handlers) h.onUpdate?.(obj, obj);
  }
}
