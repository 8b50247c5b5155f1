// Jittered exponential backoff for reconnects, reset once a connection has been healthy for a while
// (client-go's reflector uses 800 ms → 30 s, reset after 2 minutes).
export interface BackoffOptions {
  initialMs?: number;
  maxMs?: number;
  /** A delay is drawn uniformly from [d, d * (1 + jitter)]. */
  jitter?: number;
  /** After this long without a failure the next failure starts from `initialMs` again. */
  resetAfterMs?: number;
  now?: () => number;
  random?: () => number;
}

export class Backoff {
  readonly #initial: number;
  readonly #max: number;
  readonly #jitter: number;
  readonly #resetAfter: number;
  readonly #now: () => number;
  readonly #random: () => number;
  #current = 0;
  #lastFailure = -Infinity;

  constructor(options: BackoffOptions = {}) {
    this.#initial = options.initialMs ?? 800;
    this.#max = options.maxMs ?? 30_000;
    this.#jitter = options.jitter ?? 1;
    this.#resetAfter = options.resetAfterMs ?? 120_000;
    this.#now = options.now ?? Date.now;
    this.#random = options.random ?? Math.random;
  }

  /** The delay before the next attempt, after a failure. */
  next(): number {
    const now = this.#now();
    if (now - this.#lastFailure > this.#resetAfter) this.#current = 0;
    this.#lastFailure = now;
    this.#current = this.#current === 0 ? this.#initial : Math.min(this.#max, this.#current * 2);
    return this.#current * (1 + this.#jitter * this.#random());
  }

  reset(): void {
    this.#current = 0;
  }
}
