// A work queue with client-go's semantics: adds are deduplicated, and a key being processed is never handed
// to a second worker; if it is added meanwhile it is marked dirty and re-queued once, when `done` is called.
// Items are compared by identity (Set semantics), so use strings or other primitives as keys.
import { defaultControllerRateLimiter, type RateLimiter } from './rate-limiter.ts';

/** Observation hooks; `name` is the queue's name. Durations are in seconds, as Prometheus expects. */
export interface WorkQueueMetrics {
  /** An add was accepted (not a duplicate, queue not shut down). */
  add(name: string): void;
  /** The number of items waiting to be handed out changed. */
  depth(name: string, depth: number): void;
  /** Time an item waited between its add and the `get` that handed it out. */
  queueLatency(name: string, seconds: number): void;
  /** Time between `get` and `done` for one item. */
  workDuration(name: string, seconds: number): void;
  /** An item was re-queued through `addRateLimited`. */
  retry(name: string): void;
  /** Sum of how long each in-flight item has been processed so far; reported periodically, finds stuck workers. */
  unfinishedWork?(name: string, seconds: number): void;
}

const doNothing = (): void => {};

export const noopMetrics: WorkQueueMetrics = Object.freeze({
  add: doNothing,
  depth: doNothing,
  queueLatency: doNothing,
  workDuration: doNothing,
  retry: doNothing,
});

export interface WorkQueueOptions<K> {
  /** Passed to every metrics hook. Default 'workqueue'. */
  name?: string;
  /** Used by addRateLimited, forget and numRequeues. Default defaultControllerRateLimiter(). */
  rateLimiter?: RateLimiter<K>;
  metrics?: WorkQueueMetrics;
  /** Clock in ms for delayed adds and metrics; injectable for tests. Default performance.now. */
  now?: () => number;
}

// client-go reports unfinished work at the same period.
const UNFINISHED_WORK_PERIOD_MS = 500;
// setTimeout treats longer delays as 1 ms; a longer wait is re-armed when the timer fires early.
const MAX_TIMER_DELAY_MS = 2 ** 31 - 1;

/** A growable ring buffer: O(1) push and shift without Array.prototype.shift's copying. */
class Fifo<T> {
  #slots: (T | undefined)[] = new Array<T | undefined>(16);
  #head = 0;
  #size = 0;

  get size(): number {
    return this.#size;
  }

  push(value: T): void {
    if (this.#size === this.#slots.length) this.#grow();
    this.#slots[(this.#head + this.#size) & (this.#slots.length - 1)] = value;
    this.#size++;
  }

  /** Callers check `size` first. */
  shift(): T {
    const value = this.#slots[this.#head] as T;
    this.#slots[this.#head] = undefined; // let the item be collected
    this.#head = (this.#head + 1) & (this.#slots.length - 1);
    this.#size--;
    return value;
  }

  clear(): void {
    this.#slots = new Array<T | undefined>(16);
    this.#head = 0;
    this.#size = 0;
  }

  // Capacity stays a power of two so wrapping is a mask.
  #grow(): void {
    const mask = this.#slots.length - 1;
    const slots = new Array<T | undefined>(this.#slots.length * 2);
    for (let i = 0; i < this.#size; i++) slots[i] = this.#slots[(this.#head + i) & mask];
    this.#slots = slots;
    this.#head = 0;
  }
}

interface DelayedEntry<K> {
  item: K;
  readyAtMs: number;
  /** Breaks ties between equal ready times in insertion order, so delayed adds stay deterministic. */
  sequence: number;
  heapIndex: number;
}

/** A binary min-heap on (readyAtMs, sequence) whose entries know their index, so a ready time can be lowered in place. */
class DelayHeap<K> {
  #entries: DelayedEntry<K>[] = [];

  get size(): number {
    return this.#entries.length;
  }

  peek(): DelayedEntry<K> | undefined {
    return this.#entries[0];
  }

  push(entry: DelayedEntry<K>): void {
    entry.heapIndex = this.#entries.length;
    this.#entries.push(entry);
    this.#siftUp(entry.heapIndex);
  }

  /** Callers check `size` first. */
  pop(): DelayedEntry<K> {
    const top = this.#entries[0]!;
    const last = this.#entries.pop()!;
    if (last !== top) {
      this.#place(last, 0);
      this.#siftDown(0);
    }
    return top;
  }

  moveEarlier(entry: DelayedEntry<K>, readyAtMs: number): void {
    entry.readyAtMs = readyAtMs;
    this.#siftUp(entry.heapIndex);
  }

  clear(): void {
    this.#entries = [];
  }

  #before(a: DelayedEntry<K>, b: DelayedEntry<K>): boolean {
    return a.readyAtMs < b.readyAtMs || (a.readyAtMs === b.readyAtMs && a.sequence < b.sequence);
  }

  #place(entry: DelayedEntry<K>, index: number): void {
    this.#entries[index] = entry;
    entry.heapIndex = index;
  }

  #siftUp(index: number): void {
    const entry = this.#entries[index]!;
    while (index > 0) {
      const parentIndex = (index - 1) >> 1;
      const parent = this.#entries[parentIndex]!;
      if (!this.#before(entry, parent)) break;
      this.#place(parent, index);
      index = parentIndex;
    }
    this.#place(entry, index);
  }

  #siftDown(index: number): void {
    const entries = this.#entries;
    const entry = entries[index]!;
    for (;;) {
      const left = 2 * index + 1;
      if (left >= entries.length) break;
      const right = left + 1;
      const child = right < entries.length && this.#before(entries[right]!, entries[left]!) ? right : left;
      if (!this.#before(entries[child]!, entry)) break;
      this.#place(entries[child]!, index);
      index = child;
    }
    this.#place(entry, index);
  }
}

type Receiver<K> = (item: K | undefined) => void;

export class WorkQueue<K = string> {
  readonly #name: string;
  readonly #rateLimiter: RateLimiter<K>;
  readonly #metrics: WorkQueueMetrics;
  readonly #now: () => number;
  // Timing maps cost a Map operation per add/get/done; skip them when nobody listens.
  readonly #measuring: boolean;

  /** Items waiting to be handed out, in order. */
  readonly #queue = new Fifo<K>();
  /** Items that need processing: everything in #queue, plus in-flight items added again since their `get`. */
  readonly #dirty = new Set<K>();
  /** Items between `get` and `done`. */
  readonly #processing = new Set<K>();
  /** Pending `get` calls, oldest first; only non-empty while #queue is empty. */
  readonly #receivers = new Set<Receiver<K>>();

  readonly #delayed = new Map<K, DelayedEntry<K>>();
  readonly #delayHeap = new DelayHeap<K>();
  #delaySequence = 0;
  #delayTimer: ReturnType<typeof setTimeout> | undefined;
  #delayTimerReadyAtMs = Infinity;

  readonly #addedAtMs = new Map<K, number>();
  readonly #startedAtMs = new Map<K, number>();
  #unfinishedWorkTimer: ReturnType<typeof setInterval> | undefined;

  #shuttingDown = false;
  #drainWaiters: (() => void)[] = [];

  constructor(options: WorkQueueOptions<K> = {}) {
    this.#name = options.name ?? 'workqueue';
    this.#rateLimiter = options.rateLimiter ?? defaultControllerRateLimiter<K>();
    this.#metrics = options.metrics ?? noopMetrics;
    this.#now = options.now ?? (() => performance.now());
    this.#measuring = this.#metrics !== noopMetrics;
    if (this.#metrics.unfinishedWork) {
      this.#unfinishedWorkTimer = setInterval(() => this.#reportUnfinishedWork(), UNFINISHED_WORK_PERIOD_MS);
      // Observation alone must not keep the process alive.
      this.#unfinishedWorkTimer.unref();
    }
  }

  /** Queues the item unless it is already waiting; an in-flight item is re-queued when it is `done`. */
  add(item: K): void {
    if (this.#shuttingDown || this.#dirty.has(item)) return;
    this.#dirty.add(item);
    this.#metrics.add(this.#name);
    if (this.#measuring && !this.#addedAtMs.has(item)) this.#addedAtMs.set(item, this.#now());
    if (this.#processing.has(item)) return;
    this.#enqueue(item);
  }

  /** Adds the item once delayMs has passed; if it is already waiting for an earlier time, that time stands. */
  addAfter(item: K, delayMs: number): void {
    if (this.#shuttingDown) return;
    // `!(> 0)` also sends NaN to the immediate path rather than into the heap.
    if (!(delayMs > 0)) {
      this.add(item);
      return;
    }
    const readyAtMs = this.#now() + delayMs;
    const waiting = this.#delayed.get(item);
    if (waiting) {
      if (readyAtMs >= waiting.readyAtMs) return;
      this.#delayHeap.moveEarlier(waiting, readyAtMs);
    } else {
      const entry: DelayedEntry<K> = { item, readyAtMs, sequence: this.#delaySequence++, heapIndex: -1 };
      this.#delayed.set(item, entry);
      this.#delayHeap.push(entry);
    }
    this.#armDelayTimer();
  }

  /**
   * Re-queues the item after the rate limiter's delay for it, counting a retry. Returns that delay (so the
   * caller can say when the retry comes), or undefined when shutting down.
   */
  addRateLimited(item: K): number | undefined {
    if (this.#shuttingDown) return undefined;
    this.#metrics.retry(this.#name);
    const delayMs = this.#rateLimiter.when(item);
    this.addAfter(item, delayMs);
    return delayMs;
  }

  /** Clears the item's failure history in the rate limiter; call it when the item was processed successfully. */
  forget(item: K): void {
    this.#rateLimiter.forget(item);
  }

  numRequeues(item: K): number {
    return this.#rateLimiter.retries(item);
  }

  /**
   * The next item, oldest first, waiting for one if the queue is empty. Resolves undefined once the queue is shut
   * down, or when the signal aborts. The caller must call `done(item)` when it has finished with the item.
   */
  get(signal?: AbortSignal): Promise<K | undefined> {
    if (this.#shuttingDown || signal?.aborted) return Promise.resolve(undefined);
    if (this.#queue.size > 0) return Promise.resolve(this.#handOut());
    return new Promise<K | undefined>((resolve) => {
      if (!signal) {
        this.#receivers.add(resolve);
        return;
      }
      const onAbort = (): void => {
        // If the item was already handed to this receiver, the abort came too late and changes nothing.
        if (this.#receivers.delete(receive)) resolve(undefined);
      };
      const receive: Receiver<K> = (item) => {
        signal.removeEventListener('abort', onAbort);
        resolve(item);
      };
      signal.addEventListener('abort', onAbort, { once: true });
      this.#receivers.add(receive);
    });
  }

  /** Marks the item finished; if it was added while in flight, it goes back on the queue now. */
  done(item: K): void {
    if (!this.#processing.delete(item)) return;
    if (this.#measuring) {
      const startedAtMs = this.#startedAtMs.get(item);
      this.#startedAtMs.delete(item);
      if (startedAtMs !== undefined) this.#metrics.workDuration(this.#name, (this.#now() - startedAtMs) / 1000);
    }
    if (this.#dirty.has(item)) this.#enqueue(item);
    else if (this.#shuttingDown && this.#processing.size === 0) this.#drained();
  }

  /** Items waiting to be handed out (not those in flight or delayed). */
  len(): number {
    return this.#queue.size;
  }

  shuttingDown(): boolean {
    return this.#shuttingDown;
  }

  /** Stops accepting adds, drops waiting and delayed items, and resolves every pending `get` with undefined. */
  shutDown(): void {
    if (this.#shuttingDown) return;
    this.#shuttingDown = true;

    if (this.#delayTimer !== undefined) clearTimeout(this.#delayTimer);
    this.#delayTimer = undefined;
    this.#delayed.clear();
    this.#delayHeap.clear();

    const dropped = this.#queue.size;
    this.#queue.clear();
    this.#dirty.clear();
    this.#addedAtMs.clear();
    if (dropped > 0) this.#metrics.depth(this.#name, 0);

    const receivers = [...this.#receivers];
    this.#receivers.clear();
    for (const receive of receivers) receive(undefined);

    if (this.#processing.size === 0) this.#drained();
  }

  /** Like shutDown, then resolves once every in-flight item has been marked `done`. */
  shutDownWithDrain(): Promise<void> {
    this.shutDown();
    if (this.#processing.size === 0) return Promise.resolve();
    return new Promise<void>((resolve) => this.#drainWaiters.push(resolve));
  }

  #enqueue(item: K): void {
    this.#queue.push(item);
    this.#metrics.depth(this.#name, this.#queue.size);
    // Receivers only wait while the queue is empty, so the item just pushed is the one handed over: FIFO holds.
    if (this.#receivers.size > 0) {
      const receive = this.#receivers.values().next().value!;
      this.#receivers.delete(receive);
      receive(this.#handOut());
    }
  }

  // Synchronous with the decision to give an item to a worker, so no other `get` can see it in between.
  #handOut(): K {
    const item = this.#queue.shift();
    this.#metrics.depth(this.#name, this.#queue.size);
    this.#dirty.delete(item);
    this.#processing.add(item);
    if (this.#measuring) {
      const nowMs = this.#now();
      const addedAtMs = this.#addedAtMs.get(item);
      this.#addedAtMs.delete(item);
      if (addedAtMs !== undefined) this.#metrics.queueLatency(this.#name, (nowMs - addedAtMs) / 1000);
      this.#startedAtMs.set(item, nowMs);
    }
    return item;
  }

  #armDelayTimer(): void {
    const next = this.#delayHeap.peek();
    if (!next) return;
    // One timer serves the whole heap; only an earlier head needs it moved.
    if (this.#delayTimer !== undefined) {
      if (this.#delayTimerReadyAtMs <= next.readyAtMs) return;
      clearTimeout(this.#delayTimer);
    }
    this.#delayTimerReadyAtMs = next.readyAtMs;
    const delayMs = Math.min(MAX_TIMER_DELAY_MS, Math.max(0, next.readyAtMs - this.#now()));
    this.#delayTimer = setTimeout(this.#releaseReady, delayMs);
  }

  readonly #releaseReady = (): void => {
    this.#delayTimer = undefined;
    const nowMs = this.#now();
    for (let next = this.#delayHeap.peek(); next && next.readyAtMs <= nowMs; next = this.#delayHeap.peek()) {
      this.#delayHeap.pop();
      this.#delayed.delete(next.item);
      this.add(next.item);
    }
    this.#armDelayTimer();
  };

  #reportUnfinishedWork(): void {
    const nowMs = this.#now();
    let unfinishedMs = 0;
    for (const startedAtMs of this.#startedAtMs.values()) unfinishedMs += nowMs - startedAtMs;
    this.#metrics.unfinishedWork?.(this.#name, unfinishedMs / 1000);
  }

  #drained(): void {
    if (this.#unfinishedWorkTimer !== undefined) clearInterval(this.#unfinishedWorkTimer);
    this.#unfinishedWorkTimer = undefined;
    const waiters = this.#drainWaiters;
    this.#drainWaiters = [];
    for (const resolve of waiters) resolve();
  }
}
