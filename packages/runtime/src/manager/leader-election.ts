// Lease-based leader election (coordination.k8s.io/v1), with client-go's rules:
// - a candidate takes the Lease only when its holder has not renewed it for a whole lease duration, timed
//   by the candidate's own clock from when it last saw the Lease change (never by the timestamps in it);
// - the leader renews every retry period, and steps down by itself once it has failed to renew for the
//   renew deadline, which is shorter than the lease duration. So a partitioned leader stops before anyone
//   else can start: no split brain.
import { hostname } from 'node:os';
import type { Logger } from 'pino';
import type { Client } from '../client/client.ts';
import { AlreadyExistsError, ConflictError } from '../client/errors.ts';
import { Leases, type LeaseSpec } from '../client/resources.ts';
import { sleep } from '../watch/backoff.ts';

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
  /** Called once leadership is acquired; `leading` aborts when it is lost or the elector stops. */
  onStartedLeading(leading: AbortSignal): void;
  onStoppedLeading?(): void;
  onNewLeader?(identity: string): void;
}

type Lease = { metadata: { name: string; namespace: string; resourceVersion?: string }; spec?: LeaseSpec };

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
  #leading = false;
  #lastLeader = '';

  constructor(client: Client, options: LeaderElectionOptions, log: Logger) {
    this.#client = client;
    this.#log = log.child({ lease: `${options.namespace}/${options.name}` });
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

  /** Campaigns until elected, leads until leadership is lost or `signal` aborts. Returns why it ended. */
  async run(signal: AbortSignal, callbacks: LeadershipCallbacks): Promise<'stopped' | 'lost'> {
    while (!signal.aborted) {
      if (await this.#tryAcquireOrRenew(callbacks)) break;
      await sleep(this.#retryMs * (1 + 0.2 * Math.random()), signal);
    }
    if (signal.aborted) return 'stopped';

    const leading = new AbortController();
    this.#leading = true;
    let lastRenew = performance.now();
    this.#log.info({ identity: this.identity }, 'became leader');
    // Step down exactly at the renew deadline, whatever the renew loop is waiting on.
    let deadline = setTimeout(() => leading.abort(new Error('renew deadline passed')), this.#renewDeadlineMs);
    callbacks.onStartedLeading(leading.signal);
    try {
      while (!signal.aborted && !leading.signal.aborted) {
        await sleep(this.#retryMs, AbortSignal.any([signal, leading.signal]));
        if (signal.aborted || leading.signal.aborted) break;
        const remaining = this.#renewDeadlineMs - (performance.now() - lastRenew);
        if (await this.#tryAcquireOrRenew(callbacks, Math.max(1, remaining))) {
          lastRenew = performance.now();
          clearTimeout(deadline);
          deadline = setTimeout(() => leading.abort(new Error('renew deadline passed')), this.#renewDeadlineMs);
        }
      }
    } finally {
      clearTimeout(deadline);
      const lost = leading.signal.aborted && !signal.aborted;
      leading.abort(new Error('leader election stopped'));
      this.#leading = false;
      callbacks.onStoppedLeading?.();
      if (lost) this.#log.error('lost leadership: failed to renew the lease within the renew deadline');
      else if (this.#release) await this.#releaseLease();
    }
    return signal.aborted ? 'stopped' : 'lost';
  }

  async #tryAcquireOrRenew(callbacks: LeadershipCallbacks, timeoutMs = this.#renewDeadlineMs): Promise<boolean> {
    const now = Date.now();
    try {
      const signal = AbortSignal.timeout(Math.ceil(timeoutMs));
      const lease = (await this.#client.find(Leases, { namespace: this.#namespace, name: this.#name })) as Lease | undefined;
      if (!lease) {
        await this.#client.create(Leases, {
          apiVersion: 'coordination.k8s.io/v1',
          kind: 'Lease',
          metadata: { name: this.#name, namespace: this.#namespace },
          spec: { holderIdentity: this.identity, leaseDurationSeconds: Math.ceil(this.#leaseMs / 1000), acquireTime: microTime(now), renewTime: microTime(now), leaseTransitions: 0 },
        }, { signal });
        this.#observe({ holderIdentity: this.identity });
        this.#noteLeader(this.identity, callbacks);
        return true;
      }
      const spec = lease.spec ?? {};
      const record = JSON.stringify(spec);
      if (record !== this.#observed.record) this.#observed = { record, at: performance.now() };
      const holder = spec.holderIdentity ?? '';
      if (holder) this.#noteLeader(holder, callbacks);
      const expired = performance.now() - this.#observed.at > this.#leaseMs;
      if (holder && holder !== this.identity && !expired) return false;
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
      return true;
    } catch (err) {
      if (!(err instanceof ConflictError || err instanceof AlreadyExistsError)) this.#log.warn({ err }, 'lease update failed');
      return false;
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
