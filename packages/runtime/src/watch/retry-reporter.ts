// The voice of a retry loop. A loop that retries (a watch reconnecting, a candidate re-reading its Lease, a
// reconcile backing off) tells this reporter about each failure and about the first success after one, and
// the reporter turns that into what a person or a probe can see:
// - a warn line with the server's or peer's own words and how long the loop has been failing, at most one
//   per `warnEveryMs` (30 s) per loop, so a loop failing every second does not drown the log; the failures
//   in between go to debug;
// - one info line when the loop recovers, with how long it failed and its last error;
// - `runtime_retries_total{component,reason}` for every retry and `runtime_failing_since_seconds{component}`
//   while it fails;
// - `failing()`, for readiness checks that fail once a loop has failed for longer than its bound.
import { ApiError } from '../client/errors.ts';

/** The log methods the reporter uses: a pino Logger fits, and so does a plain recording object in tests. */
export interface RetryLog {
  debug(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
}

/** Where retries are counted: RuntimeMetrics.retries serves these on /metrics. */
export interface RetryMetrics {
  /** One retry of `component`, for `reason` (a short, bounded word: `Forbidden`, `ECONNREFUSED`, `Gone`). */
  retried(component: string, reason: string): void;
  /** When `component`'s current run of failures began (ms since the epoch), or undefined once it recovers. */
  failingSince(component: string, sinceMs: number | undefined): void;
}

export interface RetryReporterOptions {
  /** Names the loop in every line and metric, e.g. `informer/pods`, `leader-election`. */
  component: string;
  log?: RetryLog;
  metrics?: RetryMetrics;
  /** Added to every log line (e.g. the lease or the object a loop is about). */
  fields?: Record<string, unknown>;
  /** At most one warn line per this long per loop. Default 30 s. */
  warnEveryMs?: number;
  /** Put the error object itself (with its stack) in the warn lines, not only its text. */
  withStack?: boolean;
  /** Injectable clock (ms since the epoch) for tests. */
  now?: () => number;
}

export interface RetryFailure {
  /** When this run of failures began (ms since the epoch). */
  sinceMs: number;
  /** How long it has been failing, now. */
  forMs: number;
  /** Failed attempts in this run. */
  attempts: number;
  reason: string;
  /** The last error's text: the server's or peer's own words. */
  message: string;
}

export const RETRY_WARN_INTERVAL_MS = 30_000;

const doNothing = (): void => undefined;
const silentLog: RetryLog = { debug: doNothing, info: doNothing, warn: doNothing };

export class RetryReporter {
  readonly component: string;
  readonly #log: RetryLog;
  readonly #metrics: RetryMetrics | undefined;
  readonly #fields: Record<string, unknown>;
  readonly #warnEveryMs: number;
  readonly #withStack: boolean;
  readonly #now: () => number;
  #run: { sinceMs: number; attempts: number; reason: string; message: string } | undefined;
  // Kept across runs: a loop that flaps between failing and recovering still warns at most once per interval.
  #lastWarnMs = -Infinity;

  constructor(options: RetryReporterOptions) {
    this.component = options.component;
    this.#log = options.log ?? silentLog;
    this.#metrics = options.metrics;
    this.#fields = options.fields ?? {};
    this.#warnEveryMs = options.warnEveryMs ?? RETRY_WARN_INTERVAL_MS;
    this.#withStack = options.withStack ?? false;
    this.#now = options.now ?? Date.now;
  }

  /**
   * One failed attempt that will be retried. `retryInMs` is the wait before the next attempt, when known;
   * `reason` overrides the one derived from the error.
   */
  failed(err: unknown, options: { reason?: string; retryInMs?: number } = {}): void {
    const now = this.#now();
    const reason = options.reason ?? retryReason(err);
    const message = errorText(err);
    if (!this.#run) {
      this.#run = { sinceMs: now, attempts: 0, reason, message };
      this.#metrics?.failingSince(this.component, now);
    }
    const run = this.#run;
    run.attempts++;
    run.reason = reason;
    run.message = message;
    this.#metrics?.retried(this.component, reason);
    const forSeconds = Math.round((now - run.sinceMs) / 1000);
    const retryIn = options.retryInMs === undefined ? '' : `; retrying in ${formatSeconds(options.retryInMs)}`;
    const fields: Record<string, unknown> = {
      ...this.#fields,
      component: this.component,
      reason,
      error: message,
      failingForSeconds: forSeconds,
      attempts: run.attempts,
      ...(options.retryInMs === undefined ? {} : { retryInMs: Math.round(options.retryInMs) }),
    };
    const msg = `${this.component}: ${message} (failing for ${forSeconds} s, ${plural(run.attempts, 'attempt')}${retryIn})`;
    if (now - this.#lastWarnMs >= this.#warnEveryMs) {
      this.#lastWarnMs = now;
      this.#log.warn(this.#withStack && err instanceof Error ? { ...fields, err } : fields, msg);
    } else {
      this.#log.debug(fields, msg);
    }
  }

  /**
   * A retry that is part of normal operation, not a failure (a relist after 410 Gone): counted and logged at
   * info, and it neither starts nor ends a run of failures.
   */
  retried(reason: string, err: unknown, what: string): void {
    this.#metrics?.retried(this.component, reason);
    this.#log.info({ ...this.#fields, component: this.component, reason, error: errorText(err) }, `${this.component}: ${what}: ${errorText(err)}`);
  }

  /** An attempt succeeded: ends a run of failures, if one was under way, with one info line. */
  succeeded(): void {
    const run = this.#run;
    if (!run) return;
    this.#run = undefined;
    const forMs = this.#now() - run.sinceMs;
    this.#metrics?.failingSince(this.component, undefined);
    this.#log.info(
      { ...this.#fields, component: this.component, recoveredAfterSeconds: Math.round(forMs / 1000), attempts: run.attempts, lastError: run.message },
      `${this.component}: recovered after ${formatSeconds(forMs)} and ${plural(run.attempts, 'failed attempt')} (last error: ${run.message})`,
    );
  }

  /** The run of failures under way, or undefined while the loop is healthy. */
  failing(): RetryFailure | undefined {
    const run = this.#run;
    return run && { ...run, forMs: this.#now() - run.sinceMs };
  }
}

/**
 * A short label for why an attempt failed, bounded in number (it becomes a metric label): the API server's
 * reason (`Forbidden`, `Gone`, `InternalError`), else its status code, else Node's error code
 * (`ECONNREFUSED`), else the error's class name.
 */
export function retryReason(err: unknown): string {
  if (err instanceof ApiError) return err.reason || `HTTP${err.code}`;
  if (err instanceof Error) {
    const code = (err as Error & { code?: unknown }).code;
    if (typeof code === 'string' && /^[A-Z0-9_]{2,40}$/.test(code)) return code;
    return err.name || 'Error';
  }
  return 'Error';
}

/** The error's own text, with its causes: what the server or peer said, not our paraphrase of it. */
export function errorText(err: unknown): string {
  if (!(err instanceof Error)) return String(err);
  let text = err.message || err.name;
  let cause: unknown = err.cause;
  for (let depth = 0; cause !== undefined && depth < 3; depth++) {
    text += `: ${cause instanceof Error ? cause.message : typeof cause === 'string' ? cause : JSON.stringify(cause)}`;
    cause = cause instanceof Error ? cause.cause : undefined;
  }
  return text;
}

export function formatSeconds(ms: number): string {
  if (ms < 1000) return `${Math.round(ms)} ms`;
  return ms < 10_000 ? `${(ms / 1000).toFixed(1)} s` : `${Math.round(ms / 1000)} s`;
}

function plural(n: number, word: string): string {
  return `${n} ${word}${n === 1 ? '' : 's'}`;
}
