// Work in order per key, in parallel across keys: an object's records must be written in the order its
// changes happened (the record of v1→v2 before that of v2→v3, the last-seen copy after its record), while
// different objects need not wait for each other's fsyncs. At most `concurrency` jobs run at once.
//
// A job that fails is retried, after a backoff, before anything else of its key runs: a record is never
// skipped, and never overtaken. Stopping drops what is queued; the recorder's comparison at its next start
// finds whatever was not written. The queue itself has no bound: the session bounds what it adds (changes
// stop being queued once `pending` reaches its bound, and whenBelow() tells when it has drained).
import { Backoff, sleep } from '@quorum/runtime';

export type Job = () => Promise<void>;

export interface OrderedWorkOptions {
  concurrency: number;
  /** Told about each failed attempt, with the wait before the next one. */
  onFailure: (key: string, err: unknown, retryInMs: number) => void;
  /** Told when a key's job succeeds after failing. */
  onRecovery?: (key: string) => void;
  backoff?: ConstructorParameters<typeof Backoff>[0];
}

export class OrderedWork {
  readonly #options: OrderedWorkOptions;
  readonly #queues = new Map<string, Job[]>();
  /** Keys with work and no job running, in arrival order. */
  readonly #ready: string[] = [];
  /** Keys whose jobs are running (one job at a time each). */
  readonly #active = new Set<string>();
  readonly #stop = new AbortController();
  readonly #idleWaiters: (() => void)[] = [];
  readonly #belowWaiters: { count: number; resolve: () => void }[] = [];
  #pending = 0;

  constructor(options: OrderedWorkOptions) {
    this.#options = options;
  }

  /** Jobs queued or running. */
  get pending(): number {
    return this.#pending;
  }

  add(key: string, job: Job): void {
    if (this.#stop.signal.aborted) return;
    this.#pending++;
    const jobs = this.#queues.get(key);
    if (jobs) {
      jobs.push(job);
      return;
    }
    this.#queues.set(key, [job]);
    this.#ready.push(key);
    this.#pump();
  }

  /** Resolves once nothing is queued or running. */
  idle(): Promise<void> {
    if (this.#queues.size === 0) return Promise.resolve();
    return new Promise((resolve) => this.#idleWaiters.push(resolve));
  }

  /** Resolves once at most `count` jobs are queued or running (at once when that is so already). */
  whenBelow(count: number): Promise<void> {
    if (this.#pending <= count) return Promise.resolve();
    return new Promise((resolve) => this.#belowWaiters.push({ count, resolve }));
  }

  /** Drops queued jobs and interrupts retry waits; resolves when running jobs have finished. */
  async stop(): Promise<void> {
    this.#stop.abort();
    this.#ready.length = 0;
    for (const [key, jobs] of this.#queues) {
      // Its first job is running: it finishes, the rest go.
      if (this.#active.has(key)) this.#left(jobs.splice(1).length);
      else {
        this.#left(jobs.length);
        this.#queues.delete(key);
      }
    }
    await this.idle();
  }

  /** `n` jobs left the queue (done or dropped): tells the waiters the queue is now short enough for. */
  #left(n: number): void {
    this.#pending -= n;
    for (let i = this.#belowWaiters.length - 1; i >= 0; i--) {
      const waiter = this.#belowWaiters[i]!;
      if (this.#pending > waiter.count) continue;
      this.#belowWaiters.splice(i, 1);
      waiter.resolve();
    }
  }

  #pump(): void {
    while (this.#active.size < this.#options.concurrency && this.#ready.length > 0) {
      const key = this.#ready.shift()!;
      this.#active.add(key);
      void this.#drain(key).finally(() => {
        this.#active.delete(key);
        this.#pump();
        if (this.#queues.size === 0) for (const resolve of this.#idleWaiters.splice(0)) resolve();
      });
    }
  }

  /** Runs `key`'s jobs one after another until its queue is empty, retrying each until it succeeds. */
  async #drain(key: string): Promise<void> {
    const jobs = this.#queues.get(key)!;
    const backoff = new Backoff(this.#options.backoff);
    let failed = false;
    while (jobs.length > 0) {
      try {
        await jobs[0]!();
        if (failed) this.#options.onRecovery?.(key);
        failed = false;
        backoff.reset();
        jobs.shift();
        this.#left(1);
      } catch (err) {
        if (this.#stop.signal.aborted) {
          this.#left(jobs.length);
          break;
        }
        failed = true;
        const delay = backoff.next();
        this.#options.onFailure(key, err, delay);
        await sleep(delay, this.#stop.signal);
        if (this.#stop.signal.aborted) {
          this.#left(jobs.length);
          break;
        }
      }
    }
    this.#queues.delete(key);
  }
}
