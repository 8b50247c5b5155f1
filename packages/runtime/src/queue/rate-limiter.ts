// Rate limiters for re-queuing failed work, with the semantics of client-go's workqueue package.
// Keys are compared by identity (Map semantics), so use strings or other primitives as items.

export interface RateLimiter<K> {
  /** How long, in ms, the item should wait before it is processed again; records a failure. */
  when(item: K): number;
  /** Stops tracking the item: it succeeded, or was given up on. */
  forget(item: K): void;
  /** How many failures are recorded for the item. */
  retries(item: K): number;
}

export interface ExponentialBackoffOptions {
  /** Delay after the first failure, in ms. Default 5. */
  baseDelayMs?: number;
  /** Ceiling for the delay, in ms. Default 1000 s. */
  maxDelayMs?: number;
}

/** Per-item exponential backoff: base * 2^failures, capped at maxDelayMs. */
export class ExponentialBackoffRateLimiter<K> implements RateLimiter<K> {
  readonly #baseDelayMs: number;
  readonly #maxDelayMs: number;
  readonly #failures = new Map<K, number>();

  constructor(options: ExponentialBackoffOptions = {}) {
    this.#baseDelayMs = options.baseDelayMs ?? 5;
    this.#maxDelayMs = options.maxDelayMs ?? 1_000_000;
    if (!(this.#baseDelayMs >= 0) || !(this.#maxDelayMs >= 0)) throw new RangeError('backoff delays must be non-negative numbers');
  }

  when(item: K): number {
    const failures = this.#failures.get(item) ?? 0;
    this.#failures.set(item, failures + 1);
    // 2 ** failures overflows to Infinity after ~1000 failures; Math.min still caps it.
    return Math.min(this.#baseDelayMs * 2 ** failures, this.#maxDelayMs);
  }

  forget(item: K): void {
    this.#failures.delete(item);
  }

  retries(item: K): number {
    return this.#failures.get(item) ?? 0;
  }
}

export interface TokenBucketOptions {
  /** Tokens added per second. Default 10. */
  qps?: number;
  /** Bucket capacity, and so how many items pass without delay from a full bucket. Default 100. */
  burst?: number;
  /** Clock in ms; injectable for tests. Default performance.now. */
  now?: () => number;
}

/**
 * One bucket shared by all items, like golang.org/x/time/rate: `when` reserves a token and returns how long
 * until it is available. Tokens may go negative, so a flood of failures is spread out at 1/qps.
 */
export class TokenBucketRateLimiter<K> implements RateLimiter<K> {
  readonly #msPerToken: number;
  readonly #burst: number;
  readonly #now: () => number;
  #tokens: number;
  #lastMs: number;

  constructor(options: TokenBucketOptions = {}) {
    const qps = options.qps ?? 10;
    this.#burst = options.burst ?? 100;
    if (!(qps > 0)) throw new RangeError('qps must be positive');
    if (!(this.#burst >= 1)) throw new RangeError('burst must be at least 1');
    // Kept as ms per token, not tokens per ms, so whole-ms intervals stay exact in floating point.
    this.#msPerToken = 1000 / qps;
    this.#now = options.now ?? (() => performance.now());
    this.#tokens = this.#burst;
    this.#lastMs = this.#now();
  }

  when(_item: K): number {
    const nowMs = this.#now();
    // A clock that steps backwards must not mint tokens later; x/time/rate does the same.
    const elapsedMs = Math.max(0, nowMs - this.#lastMs);
    this.#lastMs = nowMs;
    this.#tokens = Math.min(this.#burst, this.#tokens + elapsedMs / this.#msPerToken) - 1;
    return this.#tokens >= 0 ? 0 : -this.#tokens * this.#msPerToken;
  }

  forget(_item: K): void {}

  retries(_item: K): number {
    return 0;
  }
}

/** Combines limiters: the longest delay wins, so each limiter's constraint holds. */
export class MaxOfRateLimiter<K> implements RateLimiter<K> {
  readonly #limiters: readonly RateLimiter<K>[];

  constructor(...limiters: RateLimiter<K>[]) {
    this.#limiters = limiters;
  }

  when(item: K): number {
    let delayMs = 0;
    // Every limiter must see the failure (the exponential one counts it), so no early exit.
    for (const limiter of this.#limiters) delayMs = Math.max(delayMs, limiter.when(item));
    return delayMs;
  }

  forget(item: K): void {
    for (const limiter of this.#limiters) limiter.forget(item);
  }

  retries(item: K): number {
    let retries = 0;
    for (const limiter of this.#limiters) retries = Math.max(retries, limiter.retries(item));
    return retries;
  }
}

/** controller-runtime's default: per-item backoff from 5 ms to 1000 s, and 10 qps overall with a burst of 100. */
export function defaultControllerRateLimiter<K>(): RateLimiter<K> {
  return new MaxOfRateLimiter<K>(
    new ExponentialBackoffRateLimiter<K>({ baseDelayMs: 5, maxDelayMs: 1_000_000 }),
    new TokenBucketRateLimiter<K>({ qps: 10, burst: 100 }),
  );
}
