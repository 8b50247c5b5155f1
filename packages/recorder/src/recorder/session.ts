// One ChangeRecorder at work: its record store, the watches of the scopes its spec asks for, and the
// per-object queue of writes. The reconciler decides what to watch (plan.ts) and hands it over here; this
// turns what the watches see into records, in order per object, and counts what it wrote.
import { RetryReporter, RetrySeriesScope, type Client, type OpenObject, type RetryFailure, type RetryLog, type RetryMetrics } from '@quorum/runtime';
import type { AdmittedOperation, UserSource } from '../attribution/admitted-users.ts';
import { excluder, type ObjectIdentity } from '../api/defaults.ts';
import type { ExcludeRule } from '../api/changerecorder.ts';
import {
  lastSeenOf,
  lastSeenOutdated,
  recordOfDeletion,
  recordOfMissedChange,
  recordOfMissedDeletion,
  recordOfUpdate,
  type CleaningContext,
  type NewRecord,
} from '../record/changes.ts';
import { sameVersion, type CleanSettings } from '../record/clean.ts';
import type { UserAttribution } from '../record/record-file.ts';
import type { RetentionPolicy } from '../record/retention.ts';
import { objectPath, type ObjectRef } from '../store/layout.ts';
import { openRecordStore, type StoreLocation } from '../store/open-store.ts';
import type { RedactionKeySource } from '../store/redaction-keys.ts';
import type { RecordStore, StoreStats } from '../store/record-store.ts';
import type { ResolvedKind } from './discovery.ts';
import { KindWatch, targetKey, type ChangeSink, type WatchTarget } from './kind-watch.ts';
import { NamespaceWatch } from './namespace-watch.ts';
import { OrderedWork } from './ordered-work.ts';

export interface SessionSettings {
  cleaning: CleanSettings;
  retention: RetentionPolicy;
  exclude: ExcludeRule[];
  /** Name in each record the user who made the change (spec.attribution.users). */
  users?: boolean;
}

export interface SessionOptions {
  /** The ChangeRecorder's name. */
  name: string;
  /** Where the records go: a directory (storage root + the spec's path), or an object store prefix. */
  location: StoreLocation;
  client: Client;
  /** Where the store's redaction key is kept (the recorder's Secret), apart from the store. */
  redactionKeys: RedactionKeySource;
  log?: RetryLog;
  metrics?: RetryMetrics;
  /** Told when there is something new to report in status (a record written, a watch ready). */
  onActivity: () => void;
  /** Told when the namespaces a selector picks change. */
  onNamespacesChanged: () => void;
  /** Store writes in flight at once, across objects. */
  writeConcurrency?: number;
  /**
   * Changes queued (or being written) at most, across objects; default DEFAULT_MAX_QUEUED_CHANGES. Past it,
   * changes are no longer queued one by one (see #queueChange).
   */
  maxQueuedChanges?: number;
  /** How long one call to an object store may take; default STORE_CALL_TIMEOUT_MS. */
  storeCallTimeoutMs?: number;
  /** The users the recorder's admission webhook saw; undefined when the recorder runs without it. */
  users?: UserSource;
  now?: () => Date;
}

export interface WatchReport {
  target: WatchTarget;
  objects: number;
  /** The first list has been compared with the records, and changes are being followed. */
  ready: boolean;
  failure?: RetryFailure;
}

export interface SessionReport {
  watches: WatchReport[];
  /** Records written since the session started. */
  written: number;
  store: StoreStats;
  /** The storage failure under way, if writes are failing. */
  storageFailure?: RetryFailure;
  /** Writes queued or in flight. */
  pending: number;
  /** Set while the write queue is full: changes are not queued, and every watch starts again once it drains. */
  queueFull?: { failure: RetryFailure; dropped: number; bound: number };
}

const DEFAULT_WRITE_CONCURRENCY = 8;
/**
 * The write queue's bound, in changes: each holds the object's versions before and after the change (a few
 * KiB for common objects) until it is written, so a store that does not answer cannot grow the recorder's
 * memory past about this many of them.
 */
export const DEFAULT_MAX_QUEUED_CHANGES = 10_000;
/** Objects whose deletion started (a deletionTimestamp, finalizers pending) remembered for their deletion record. */
const MAX_PENDING_DELETIONS = 10_000;

export class RecorderSession implements ChangeSink {
  readonly name: string;
  readonly location: StoreLocation;
  readonly startedAt: Date;
  readonly #store: RecordStore;
  readonly #options: SessionOptions;
  readonly #work: OrderedWork;
  readonly #storage: RetryReporter;
  readonly #queue: RetryReporter;
  /**
   * Every retry series of this ChangeRecorder: its store's and queue's, and (below `recorder/<name>/`, as two
   * recorders may watch the same kind) its informers'. Removed when it closes, so a deleted ChangeRecorder leaves
   * none on /metrics and one re-created with its name counts from zero.
   */
  readonly #metrics: RetrySeriesScope;
  readonly #watchMetrics: RetrySeriesScope;
  readonly #maxQueued: number;
  /** Changes queued and not written yet: what the bound counts (the comparisons' writes are not changes). */
  #queuedChanges = 0;
  /** While the queue is full: changes dropped since (found again by the comparison when watches restart). */
  #overflow: { dropped: number } | undefined;
  #closed = false;
  readonly #watches = new Map<string, KindWatch>();
  #namespaces: NamespaceWatch | undefined;
  #settings: SessionSettings | undefined;
  #isExcluded: (id: ObjectIdentity) => boolean = () => false;
  #written = 0;
  /**
   * Who started each pending deletion, by uid. An object with finalizers gets a deletionTimestamp from the DELETE
   * request and goes only when they are removed (by controllers' UPDATEs): its last state is not the version
   * the DELETE started from, but the version before the deletionTimestamp appeared is.
   */
  readonly #deletionStartedBy = new Map<string, UserAttribution>();

  private constructor(store: RecordStore, options: SessionOptions) {
    this.name = options.name;
    this.location = options.location;
    this.startedAt = (options.now ?? (() => new Date()))();
    this.#store = store;
    this.#options = options;
    this.#metrics = new RetrySeriesScope(options.metrics);
    this.#watchMetrics = new RetrySeriesScope(this.#metrics, `recorder/${options.name}/`);
    this.#storage = new RetryReporter({ component: `recorder/${options.name}/storage`, log: options.log, metrics: this.#metrics, fields: { store: store.description } });
    this.#queue = new RetryReporter({ component: `recorder/${options.name}/queue`, log: options.log, metrics: this.#metrics, fields: { store: store.description } });
    this.#maxQueued = options.maxQueuedChanges ?? DEFAULT_MAX_QUEUED_CHANGES;
    this.#work = new OrderedWork({
      concurrency: options.writeConcurrency ?? DEFAULT_WRITE_CONCURRENCY,
      onFailure: (key, err, retryInMs) => {
        this.#storage.failed(new Error(`writing the record of ${key}`, { cause: err }), { retryInMs });
        options.onActivity();
      },
      onRecovery: () => {
        this.#storage.succeeded();
        options.onActivity();
      },
    });
  }

  static async open(options: SessionOptions): Promise<RecorderSession> {
    return new RecorderSession(await openRecordStore(options.location, options.redactionKeys, options.log, options.storeCallTimeoutMs), options);
  }

  /**
   * Applies the spec's settings. A change of cleaning or exclusions restarts every watch, so that the
   * comparison at start brings each object's last-seen copy in line with the new settings (and writes one
   * for objects no longer excluded).
   */
  async configure(settings: SessionSettings): Promise<void> {
    const previous = this.#settings;
    this.#settings = settings;
    this.#isExcluded = excluder(settings.exclude);
    const changed = previous && !(sameVersion(previous.cleaning, settings.cleaning) && sameVersion(previous.exclude, settings.exclude));
    if (changed) {
      const targets = [...this.#watches.values()].map((w) => w.target);
      await this.watch([]);
      await this.watch(targets);
    }
    if (previous && !sameVersion(previous.retention, settings.retention)) this.sweep();
  }

  /** Makes the running watches exactly `targets`: new ones start (and compare at start), dropped ones stop. */
  async watch(targets: readonly WatchTarget[]): Promise<void> {
    const wanted = new Map(targets.map((t) => [targetKey(t), t]));
    for (const [key, watch] of this.#watches) {
      if (wanted.has(key)) continue;
      this.#watches.delete(key);
      await watch.stop();
    }
    for (const [key, target] of wanted) {
      if (this.#watches.has(key)) continue;
      const watch = new KindWatch(this.#options.client, target, this, { log: this.#options.log, metrics: this.#watchMetrics, onReady: this.#options.onActivity });
      this.#watches.set(key, watch);
      watch.start();
    }
  }

  /**
   * The namespaces `selector` picks (undefined until known), following label changes; undefined as the
   * selector stops the namespace watch.
   */
  async selectNamespaces(selector: string | undefined): Promise<string[] | undefined> {
    if (this.#namespaces && this.#namespaces.selector !== selector) {
      await this.#namespaces.stop();
      this.#namespaces = undefined;
    }
    if (selector === undefined) return undefined;
    if (!this.#namespaces) {
      this.#namespaces = new NamespaceWatch(this.#options.client, selector, this.#options.onNamespacesChanged, { log: this.#options.log, metrics: this.#watchMetrics });
      this.#namespaces.start();
    }
    return this.#namespaces.names();
  }

  namespaceFailure(): RetryFailure | undefined {
    return this.#namespaces?.failing();
  }

  /** Applies retention to every object with records past it (count or age), through each object's queue. */
  sweep(): void {
    const policy = this.#settings?.retention;
    if (!policy) return;
    const now = this.#now().getTime();
    for (const ref of this.#store.expired(policy, now)) {
      this.#work.add(refKey(ref), async () => {
        await this.#store.retain(ref, policy, this.#now().getTime());
      });
    }
  }

  /** When the next record passes maxAge, if one will. */
  nextExpiry(): number | undefined {
    return this.#settings ? this.#store.nextExpiry(this.#settings.retention) : undefined;
  }

  report(): SessionReport {
    const failure = this.#storage.failing();
    const queueFailure = this.#queue.failing();
    return {
      watches: [...this.#watches.values()].map((w) => {
        const watchFailure = w.failing();
        return { target: w.target, objects: w.objects, ready: w.ready, ...(watchFailure ? { failure: watchFailure } : {}) };
      }),
      written: this.#written,
      store: this.#store.stats(),
      ...(failure ? { storageFailure: failure } : {}),
      pending: this.#work.pending,
      ...(this.#overflow && queueFailure ? { queueFull: { failure: queueFailure, dropped: this.#overflow.dropped, bound: this.#maxQueued } } : {}),
    };
  }

  /** Resolves once every queued write is done (tests, and a clean stop). */
  idle(): Promise<void> {
    return this.#work.idle();
  }

  /** Stops every watch and waits for the writes in flight; queued ones are dropped (the next start finds them). */
  async close(): Promise<void> {
    this.#closed = true;
    await Promise.all([...this.#watches.values()].map((w) => w.stop()));
    this.#watches.clear();
    await this.#namespaces?.stop();
    this.#namespaces = undefined;
    await this.#work.stop();
    this.#store.close();
    this.#metrics.forgetAll();
  }

  // ---- ChangeSink: what the watches see ----

  resumed(target: WatchTarget, listed: readonly OpenObject[]): Promise<void> {
    const { kind } = target;
    const present = new Set<string>();
    const compared: Promise<void>[] = [];
    // Resolves when the job has succeeded (it is retried until then); a job dropped by close() never does.
    const add = (ref: ObjectRef, job: () => Promise<void>): void => {
      compared.push(new Promise((resolve) => this.#work.add(refKey(ref), () => job().then(resolve))));
    };
    for (const live of listed) {
      const ref = refOf(kind, live);
      if (this.#excluded(ref)) continue;
      present.add(refKey(ref));
      const seenAt = this.#now();
      add(ref, async () => {
        const context = this.#context();
        const lastSeen = await this.#store.readLastSeen(ref);
        if (!lastSeen) {
          await this.#store.writeLastSeen(ref, lastSeenOf(live, context, seenAt));
          return;
        }
        const missed = recordOfMissedChange(lastSeen, live, context, seenAt, this.#unknownUser('SeenLate'));
        if (missed) await this.#record(ref, missed);
        if (missed || lastSeenOutdated(lastSeen, context)) await this.#store.writeLastSeen(ref, lastSeenOf(live, context, seenAt));
      });
    }
    for (const ref of this.#store.lastSeenRefs(kind.group, kind.kind, target.namespace)) {
      if (present.has(refKey(ref)) || this.#excluded(ref)) continue;
      const seenAt = this.#now();
      add(ref, async () => {
        const lastSeen = await this.#store.readLastSeen(ref);
        if (!lastSeen) return;
        await this.#record(ref, recordOfMissedDeletion(lastSeen, seenAt, this.#unknownUser('SeenLate')));
        await this.#store.removeLastSeen(ref);
      });
    }
    return Promise.all(compared).then(() => undefined);
  }

  created(kind: ResolvedKind, obj: OpenObject): void {
    const ref = refOf(kind, obj);
    if (this.#excluded(ref)) return;
    const seenAt = this.#now();
    this.#queueChange(ref, () => this.#store.writeLastSeen(ref, lastSeenOf(obj, this.#context(), seenAt)));
  }

  updated(kind: ResolvedKind, before: OpenObject, after: OpenObject): void {
    if (after.metadata.resourceVersion === before.metadata.resourceVersion) return;
    // An object being deleted changes on its way out (finalizers removed); its deletion record keeps the last state.
    if (after.metadata.deletionTimestamp) {
      if (!before.metadata.deletionTimestamp) this.#deletionStarted(kind, before);
      return;
    }
    const ref = refOf(kind, after);
    if (this.#excluded(ref)) return;
    const seenAt = this.#now();
    // Looked up now, as the change arrives, not when a slow store gets to write it.
    const user = this.#userOf(before, 'UPDATE');
    this.#queueChange(ref, async () => {
      const context = this.#context();
      const record = recordOfUpdate(before, after, context, seenAt, user);
      if (!record) return;
      await this.#record(ref, record);
      await this.#store.writeLastSeen(ref, lastSeenOf(after, context, seenAt));
    });
  }

  deleted(kind: ResolvedKind, last: OpenObject): void {
    const uid = last.metadata.uid ?? '';
    const startedBy = this.#deletionStartedBy.get(uid);
    this.#deletionStartedBy.delete(uid);
    const ref = refOf(kind, last);
    if (this.#excluded(ref)) return;
    const seenAt = this.#now();
    // Without finalizers the DELETE started from the last state; with them, from the version before the
    // deletionTimestamp, if the recorder saw it appear (else it does not know).
    const user = last.metadata.deletionTimestamp ? (startedBy ?? this.#unknownUser('NotSeen')) : this.#userOf(last, 'DELETE');
    this.#queueChange(ref, async () => {
      await this.#record(ref, recordOfDeletion(last, this.#context(), seenAt, user));
      await this.#store.removeLastSeen(ref);
    });
  }

  /**
   * Queues a change's write, unless the queue is full. Then the change is dropped, and so is every change
   * after it until the queue has drained to half its bound: every watch then starts again, and the comparison
   * at start records what changed meanwhile (seen late, as after a restart). Said in status (Ready False
   * QueueFull), an event, a metric and a warn log. The comparison's own writes are not counted: there is one
   * per object watched, which the informers hold anyway, and counting them would make a restart after an
   * overflow of a large namespace overflow again at once.
   */
  #queueChange(ref: ObjectRef, job: () => Promise<void>): void {
    if (this.#overflow) {
      this.#overflow.dropped++;
      return;
    }
    if (this.#queuedChanges < this.#maxQueued) {
      this.#queuedChanges++;
      // Retried until it succeeds; a job dropped by close() is never counted down, and nothing counts after it.
      this.#work.add(refKey(ref), async () => {
        await job();
        this.#queuedChanges--;
      });
      return;
    }
    this.#overflow = { dropped: 1 };
    this.#queue.failed(new Error(`the write queue holds ${this.#queuedChanges} changes, its bound: changes are no longer queued one by one; once it drains to ${Math.floor(this.#maxQueued / 2)}, every watch starts again and compares the live objects with the records`), { reason: 'QueueFull' });
    this.#options.onActivity();
    void this.#work.whenBelow(Math.floor(this.#maxQueued / 2)).then(() => this.#restartAfterOverflow());
  }

  async #restartAfterOverflow(): Promise<void> {
    if (this.#closed) return;
    const targets = [...this.#watches.values()].map((w) => w.target);
    // The changes from here on are queued again; the restarted watches' lists cover those dropped before.
    this.#overflow = undefined;
    await this.watch([]);
    await this.watch(targets);
    this.#queue.succeeded();
    this.#options.onActivity();
  }

  /** Writes a record, then applies retention to the object. The record comes first: a crash after it at worst records a change twice, never loses it. */
  async #record(ref: ObjectRef, record: NewRecord): Promise<void> {
    await this.#store.writeRecord(ref, record);
    this.#written++;
    if (this.#settings) await this.#store.retain(ref, this.#settings.retention, this.#now().getTime());
    this.#options.onActivity();
  }

  #deletionStarted(kind: ResolvedKind, before: OpenObject): void {
    const uid = before.metadata.uid;
    const user = this.#userOf(before, 'DELETE');
    if (!uid || !user || this.#excluded(refOf(kind, before))) return;
    this.#deletionStartedBy.set(uid, user);
    // A deletion whose end the watch never delivers (it restarted meanwhile) must not be kept for ever.
    while (this.#deletionStartedBy.size > MAX_PENDING_DELETIONS) this.#deletionStartedBy.delete(this.#deletionStartedBy.keys().next().value!);
  }

  /** Who made the change that started from `version`, when the ChangeRecorder asks for users; undefined when it does not. */
  #userOf(version: OpenObject, operation: AdmittedOperation): UserAttribution | undefined {
    if (!this.#settings?.users) return undefined;
    const source = this.#options.users;
    if (!source) return { userUnknown: 'NoWebhook' };
    const { uid, resourceVersion } = version.metadata;
    if (!uid || !resourceVersion) return { userUnknown: 'NotSeen' };
    const found = source.lookup(uid, resourceVersion, operation);
    if ('unknown' in found) return { userUnknown: found.unknown };
    return { user: found.user.username, ...(found.user.groups ? { groups: found.user.groups } : {}) };
  }

  /** `reason` when the ChangeRecorder asks for users (a missing webhook said first); undefined when it does not. */
  #unknownUser(reason: 'SeenLate' | 'NotSeen'): UserAttribution | undefined {
    if (!this.#settings?.users) return undefined;
    return { userUnknown: this.#options.users ? reason : 'NoWebhook' };
  }

  #context(): CleaningContext {
    if (!this.#settings) throw new Error(`recorder ${this.name}: configure() must come before watching`);
    return { settings: this.#settings.cleaning, redactionKey: this.#store.redactionKey };
  }

  #excluded(ref: ObjectRef): boolean {
    return this.#isExcluded(ref);
  }

  #now(): Date {
    return (this.#options.now ?? (() => new Date()))();
  }
}

function refOf(kind: ResolvedKind, obj: OpenObject): ObjectRef {
  return { group: kind.group, kind: kind.kind, namespace: obj.metadata.namespace ?? '', name: obj.metadata.name ?? '' };
}

function refKey(ref: ObjectRef): string {
  return objectPath(ref);
}
