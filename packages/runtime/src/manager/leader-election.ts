// Lease-based leader election (coordination.k8s.io/v1), with client-go's rules:
// - a candidate takes the Lease only when its holder has not renewed it for a whole lease duration, timed
//   by the candidate's own clock from when it last saw the Lease change (never by the timestamps in it);
// - the leader renews every retry period, and steps down by itself once it has failed to renew for the
//   renew deadline, which is shorter than the lease duration. So a partitioned leader stops before anyone
//   else can start: no split brain.
// Both loops have a voice: a failing Lease read or write is a warn line (at most every 30 s) with the API
// server's words and how long it has failed, `runtime_retries_total{component="leader-election"}` and
// `runtime_failing_since_seconds`; losing the lease says what the last renewal was told.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Client } from '../client/client.ts';
import { AlreadyExistsError, ConflictError, NotFoundError } from '../client/errors.ts';
import { Leases, type LeaseSpec } from '../client/resources.ts';
import { sleep } from '../timers.ts';
import { errorText, formatSeconds, RetryReporter, type RetryMetrics } from '../watch/retry-reporter.ts';

export interface LeaderElectionOptions {
  /** The Lease's name and namespace. */
  name: string;
  namespace: string;
  /** Unique per process; default `<hostname>_<random>`. */
  identity?: string;
  leaseDurationMs?: number;
  renewDeadlineMs?: number;
  retryPeriodMs?: number;
  /** Give the Lease up on shutdown so a successor need not wait a lease duration. Default true. */
  releaseOnCancel?: boolean;
}

export interface LeadershipCallbacks {
  /**
   * Called once leadership is acquired; `leading` aborts when it is lost or the elector is stopped. The work
   * it returns, if any, is waited for on a stop: the elector keeps renewing the Lease while that work drains
   * and releases the Lease only after it has ended, so no successor starts beside it. (A lost lease is not
   * waited for: another may hold it already.)
   */
  onStartedLeading(leading: AbortSignal): void | Promise<unknown>;
  onStoppedLeading?(): void;
  onNewLeader?(identity: string): void;
}

type Lease = { metadata: { name: string; namespace: string; resourceVersion?: string }; spec?: LeaseSpec };

/**
 * One try at the Lease: taken or renewed; held by another (not a failure for a candidate); a write that lost
 * a race with another writer; or an error from the API server.
 */
type Attempt = { ok: true } | { ok: false; heldBy: string } | { ok: false; raced: ConflictError | AlreadyExistsError } | { ok: false; error: unknown };

/** RFC 3339 with microseconds, the MicroTime format Lease times use. */
const microTime = (ms: number): string => new Date(ms).toISOString().replace(/\.(\d{3})Z$/, '.$1000Z');

export class LeaderElector {
  readonly identity: string;
  readonly #client: Client;
  readonly #log: Logger;
  readonly #name: string;
  readonly #namespace: string;
  readonly #leaseMs: number;
  readonly #renewDeadlineMs: number;
  readonly #retryMs: number;
  readonly #release: boolean;
  #observed: { record: string; at: number } = { record: '', at: 0 };
  readonly #reporter: RetryReporter;
  #leading = false;
  #lastLeader = '';
  #lostBecause: Error | undefined;

  constructor(client: Client, options: LeaderElectionOptions, log: Logger, metrics?: RetryMetrics) {
    this.#client = client;
    this.#log = log.child({ lease: `${options.namespace}/${options.name}` });
    this.#reporter = new RetryReporter({ component: 'leader-election', log: this.#log, metrics });
    this.#name = options.name;
    this.#namespace = options.namespace;
    this.identity = options.identity ?? `${hostname()}_${crypto.randomUUID()}`;
    this.#leaseMs = options.leaseDurationMs ?? 15_000;
    this.#renewDeadlineMs = options.renewDeadlineMs ?? 10_000;
    this.#retryMs = options.retryPeriodMs ?? 2_000;
    this.#release = options.releaseOnCancel ?? true;
    if (this.#renewDeadlineMs + this.#retryMs >= this.#leaseMs) {
      throw new Error('leader election: renewDeadline + retryPeriod must be shorter than leaseDuration');
    }
  }

  isLeader(): boolean {
    return this.#leading;
  }

  /** Why leadership was lost, once it has been: the renew deadline and what the last renewal was told. */
  get lostBecause(): Error | undefined {
    return this.#lostBecause;
  }

  /** Campaigns until elected, leads until leadership is lost or `signal` aborts. Returns why it ended. */
  async run(signal: AbortSignal, callbacks: LeadershipCallbacks): Promise<'stopped' | 'lost'> {
    // Campaign: unbounded by design (a standby waits as long as another leads), but an API server that does
    // not answer is a failure with a voice, not a silent wait.
    while (!signal.aborted) {
      const delay = this.#retryMs * (1 + 0.2 * Math.random());
      const attempt = await this.#tryAcquireOrRenew(callbacks);
      if (attempt.ok) {
        this.#reporter.succeeded();
        break;
      }
      if ('error' in attempt) {
        this.#reporter.failed(attempt.error, { retryInMs: delay });
      } else {
        // The Lease was read (another holds it, or another candidate wrote first): the API server answers.
        this.#reporter.succeeded();
        if ('raced' in attempt) this.#log.debug({ err: attempt.raced }, 'another candidate wrote the lease first');
      }
      await sleep(delay, signal);
    }
    if (signal.aborted) return 'stopped';

    // `leading` aborts only when leadership is lost; the work is told to stop on either that or `signal`.
    const leading = new AbortController();
    this.#leading = true;
    this.#lostBecause = undefined;
    let lastRenew = performance.now();
    let lastFailure: Error | undefined;
    this.#log.info({ identity: this.identity }, 'became leader');
    // Step down exactly at the renew deadline, whatever the renew loop is waiting on, saying why.
    const stepDown = (): void => {
      const why = lastFailure ? errorText(lastFailure) : 'no renewal attempt finished in time';
      leading.abort(new Error(`could not renew the Lease ${this.#namespace}/${this.#name} within the renew deadline (${formatSeconds(this.#renewDeadlineMs)}): ${why}`, { cause: lastFailure }));
    };
    let deadline = setTimeout(stepDown, this.#renewDeadlineMs);
    const stopWork = new AbortController();
    const workSignal = AbortSignal.any([signal, leading.signal, stopWork.signal]);
    // Settled once the work the callback returned has ended (at once when it returned none).
    const drained = new AbortController();
    void Promise.resolve(callbacks.onStartedLeading(workSignal))
      .catch(() => undefined)
      .finally(() => drained.abort());
    try {
      // Renew: bounded by the renew deadline, past which leadership is lost (and the manager exits). After a
      // stop, go on renewing until the work has drained.
      while (!leading.signal.aborted && !(signal.aborted && drained.signal.aborted)) {
        const wake = signal.aborted ? AbortSignal.any([leading.signal, drained.signal]) : AbortSignal.any([signal, leading.signal]);
        await sleep(this.#retryMs, wake);
        if (leading.signal.aborted || (signal.aborted && drained.signal.aborted)) break;
        const remaining = this.#renewDeadlineMs - (performance.now() - lastRenew);
        const attempt = await this.#tryAcquireOrRenew(callbacks, Math.max(1, remaining));
        if (attempt.ok) {
          lastRenew = performance.now();
          lastFailure = undefined;
          this.#reporter.succeeded();
          clearTimeout(deadline);
          deadline = setTimeout(stepDown, this.#renewDeadlineMs);
        } else if (!leading.signal.aborted) {
          // While leading, every refusal counts: a conflict means someone else wrote our Lease.
          const [failure, reason] =
            'error' in attempt ? [attempt.error, undefined] : 'raced' in attempt ? [attempt.raced, undefined] : [new Error(`the Lease is now held by ${attempt.heldBy}`), 'LeaseTaken'];
          lastFailure = failure instanceof Error ? failure : new Error(String(failure));
          this.#reporter.failed(failure, { reason, retryInMs: this.#retryMs });
        }
      }
    } finally {
      clearTimeout(deadline);
      const lost = leading.signal.aborted;
      if (lost) this.#lostBecause = leading.signal.reason instanceof Error ? leading.signal.reason : new Error(String(leading.signal.reason));
      stopWork.abort(new Error('leader election stopped'));
      this.#leading = false;
      callbacks.onStoppedLeading?.();
      if (lost) this.#log.error({ err: this.#lostBecause }, `lost leadership: ${this.#lostBecause?.message ?? ''}`);
      else if (this.#release) await this.#releaseLease();
    }
    return signal.aborted ? 'stopped' : 'lost';
  }

  async #tryAcquireOrRenew(callbacks: LeadershipCallbacks, timeoutMs = this.#renewDeadlineMs): Promise<Attempt> {
    const now = Date.now();
    try {
      const signal = AbortSignal.timeout(Math.ceil(timeoutMs));
      // The read shares the attempt's timeout, so a hung API server cannot hold a renewal past the deadline.
      const lease = (await this.#client.get(Leases, { namespace: this.#namespace, name: this.#name }, { signal }).catch((err: unknown) => {
        if (err instanceof NotFoundError) return undefined;
        throw err;
      })) as Lease | undefined;
      if (!lease) {
        await this.#client.create(Leases, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.#name, namespace: this.#namespace },
          spec: { holderIdentity: this.identity, leaseDurationSeconds: Math.ceil(this.#leaseMs / 1000), acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
        }, { signal });
        this.#observe({ holderIdentity: this.identity });
        this.#noteLeader(this.identity, callbacks);
        return { ok: true };
      }
      const spec = lease.spec ?? {};
      const record = JSON.stringify(spec);
      if (record !== this.#observed.record) this.#observed = { record, at: performance.now() };
      const holder = spec.holderIdentity ?? '';
      if (holder) this.#noteLeader(holder, callbacks);
      const expired = performance.now() - this.#observed.at > this.#leaseMs;
      if (holder && holder !== this.identity && !expired) return { ok: false, heldBy: holder };
      const next: LeaseSpec = {
        holderIdentity: this.identity,
        leaseDurationSeconds: Math.ceil(this.#leaseMs / 1000),
        acquireTime: holder === this.identity ? spec.acquireTime : microTime(now),
        renewTime: microTime(now),
        leaseTransitions: (spec.leaseTransitions ?? 0) + (holder === this.identity ? 0 : 1),
      };
      await this.#client.replace(Leases, { ...lease, spec: next }, { signal });
      this.#observe(next);
      this.#noteLeader(this.identity, callbacks);
      return { ok: true };
    } catch (err) {
      if (err instanceof ConflictError || err instanceof AlreadyExistsError) return { ok: false, raced: err };
      return { ok: false, error: err };
    }
  }

  /** Our own write is a change we observed now. */
  #observe(spec: LeaseSpec): void {
    this.#observed = { record: JSON.stringify(spec), at: performance.now() };
  }

  #noteLeader(identity: string, callbacks: LeadershipCallbacks): void {
    if (identity === this.#lastLeader) return;
    this.#lastLeader = identity;
    callbacks.onNewLeader?.(identity);
  }

  async #releaseLease(): Promise<void> {
    try {
      const lease = (await this.#client.find(Leases, { namespace: this.#namespace, name: this.#name })) as Lease | undefined;
      if (lease?.spec?.holderIdentity !== this.identity) return;
      const now = microTime(Date.now());
      await this.#client.replace(Leases, { ...lease, spec: { ...lease.spec, holderIdentity: null, leaseDurationSeconds: 1, renewTime: now, acquireTime: now } }, { signal: AbortSignal.timeout(5000) });
      this.#log.info('released the lease');
    } catch (err) {
      this.#log.warn({ err }, 'could not release the lease');
    }
  }
}
