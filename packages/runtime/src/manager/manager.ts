// The manager runs an operator: it owns the client, the shared informers (one per kind and scope), the
// controllers, leader election, probes, metrics and graceful shutdown.
//
// Start order: probe/metrics server → informers (every replica keeps a warm cache) → wait for sync →
// leader election → controllers and leader-only runnables. Losing the lease stops them and makes start()
// reject, so the process exits and its Pod restarts, as controller-runtime does. On shutdown the leader keeps
// renewing while its controllers drain and releases the lease only then: a successor never reconciles beside
// a draining leader.
//
// Scope: every namespace, one (`namespace`) or several (`namespaces`: one watch per namespace behind each
// informer's one store, for an operator whose RBAC is a Role in each of its tenant namespaces).
//
// No loop here retries in silence: informers that cannot list or watch for longer than
// `informerFailureBoundMs` make /readyz fail with the resource and the server's error; a sync that times
// out says which caches and why; leadership lost says what the last renewal attempt was told.
import type { Logger } from 'pino';
import { Informer } from '../cache/informer.ts';
import { Client } from '../client/client.ts';
import type { ConnectionOptions } from '../client/config.ts';
import type { ResourceType } from '../client/resources.ts';
import { ControllerBuilder, type ControllerHost, type InformerScope } from '../controller/builder.ts';
import type { Controller } from '../controller/controller.ts';
import { EventRecorder, type EventRecorderOptions } from '../helpers/events.ts';
import type { KubeObject } from '../object.ts';
import { formatSeconds } from '../watch/retry-reporter.ts';
import { ProbeServer, type Check } from './health.ts';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.ts';
import { createLogger } from './log.ts';
import { RuntimeMetrics, resourceOf } from './metrics.ts';
import { SecureMetricsServer, type SecureMetricsOptions } from './secure-metrics.ts';

export interface Runnable {
  name: string;
  /** Run only on the leader (default true), like controllers; false runs on every replica (webhooks). */
  needLeaderElection?: boolean;
  start(signal: AbortSignal): Promise<void>;
}

export interface ManagerOptions {
  client?: Client;
  connection?: ConnectionOptions;
  /** Default scope of informers: one namespace, or all when unset (and `namespaces` too). */
  namespace?: string;
  /**
   * Default scope of informers: these namespaces, each informer watching each of them into one store (instead
   * of `namespace`; at least one). Cluster-scoped kinds are watched whole.
   */
  namespaces?: readonly string[];
  leaderElection?: LeaderElectionOptions;
  /** Port of /healthz, /readyz, and of /metrics unless `secureMetrics` is set (0: ephemeral; undefined: no server). */
  probePort?: number;
  probeHost?: string;
  /**
   * Serve /metrics on a port of its own over HTTPS, only to callers whose bearer token a TokenReview accepts and
   * a SubjectAccessReview allows `get` on the non-resource URL `/metrics` (the operator then needs `create` on
   * tokenreviews and subjectaccessreviews); the probe port no longer serves it.
   */
  secureMetrics?: SecureMetricsOptions;
  logger?: Logger;
  /** How long shutdown waits for reconciles in flight. */
  gracefulShutdownMs?: number;
  syncTimeoutMs?: number;
  /** Replay cached objects to controllers this often (default: never). */
  resyncMs?: number;
  /** /readyz fails once an informer has failed to list or watch for this long. Default 60 s. */
  informerFailureBoundMs?: number;
}

export const DEFAULT_INFORMER_FAILURE_BOUND_MS = 60_000;

export class LeadershipLostError extends Error {
  constructor(cause?: unknown) {
    super(`leadership lost: controllers stopped${cause instanceof Error ? `: ${cause.message}` : ''}`, { cause });
    this.name = 'LeadershipLostError';
  }
}

export class Manager implements ControllerHost {
  readonly client: Client;
  readonly log: Logger;
  readonly metrics: RuntimeMetrics;
  readonly probes: ProbeServer;
  /** The HTTPS /metrics server, when `secureMetrics` is set; its port is known once start() has begun. */
  readonly secureMetrics: SecureMetricsServer | undefined;
  readonly elector: LeaderElector | undefined;
  readonly #options: ManagerOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #controllers: { controller: Controller; informers: Informer<KubeObject>[] }[] = [];
  readonly #runnables: Runnable[] = [];
  readonly #stopInformers = new AbortController();
  /** The namespaces informers watch by default; undefined: every namespace. */
  readonly #namespaces: readonly string[] | undefined;
  #started = false;

  constructor(client: Client, options: ManagerOptions = {}) {
    this.client = client;
    this.#options = options;
    this.#namespaces = defaultNamespaces(options);
    this.log = options.logger ?? createLogger();
    this.metrics = new RuntimeMetrics();
    this.secureMetrics = options.secureMetrics ? new SecureMetricsServer(client, this.metrics.registry, options.secureMetrics, this.log, this.metrics.retries) : undefined;
    this.probes = new ProbeServer(this.secureMetrics ? undefined : this.metrics.registry);
    client.observe((method, path, code) => this.metrics.apiRequests.inc({ method, code: String(code), resource: resourceOf(path) }));
    this.elector = options.leaderElection ? new LeaderElector(client, options.leaderElection, this.log, this.metrics.retries) : undefined;
    this.probes.addHealthCheck('ping', () => undefined);
    this.probes.addReadyCheck('informers-synced', () => {
      const pending = [...this.#informers.values()].filter((i) => !i.hasSynced()).map((i) => i.type.kind);
      if (pending.length) throw new Error(`caches not synced: ${pending.join(', ')}`);
    });
    // A cache that cannot follow the API server goes stale while controllers act on it: past the bound the
    // process is not ready, and says which resource and what the server answered.
    const bound = options.informerFailureBoundMs ?? DEFAULT_INFORMER_FAILURE_BOUND_MS;
    this.probes.addReadyCheck('informers-watching', () => {
      const stuck = [...this.#informers.values()].flatMap((i) => {
        const failure = i.failing();
        return failure && failure.forMs >= bound ? [`${i.component}: cannot list or watch for ${formatSeconds(failure.forMs)} (bound ${formatSeconds(bound)}): ${failure.message}`] : [];
      });
      if (stuck.length) throw new Error(stuck.join('; '));
    });
  }

  static async create(options: ManagerOptions = {}): Promise<Manager> {
    return new Manager(options.client ?? (await Client.connect(options.connection)), options);
  }

  /** The shared informer for a kind and scope, created on first use (and started at once if the manager runs). */
  informer<T extends KubeObject>(type: ResourceType<T>, scope: InformerScope = {}): Informer<T> {
    const namespaces = type.namespaced ? (scope.namespace !== undefined ? [scope.namespace] : this.#namespaces) : undefined;
    const key = [type.apiVersion, type.kind, namespaces?.join(',') ?? '', scope.labelSelector ?? '', scope.fieldSelector ?? ''].join('|');
    let informer = this.#informers.get(key);
    if (!informer) {
      const created = new Informer<T>(this.client, type, {
        ...(namespaces?.length === 1 ? { namespace: namespaces[0] } : namespaces ? { namespaces } : {}),
        labelSelector: scope.labelSelector,
        fieldSelector: scope.fieldSelector,
        resyncMs: this.#options.resyncMs,
        // The informer's reporter logs (warn at most every 30 s per informer) and counts every interruption.
        log: this.log,
        metrics: this.metrics.retries,
      });
      informer = created as unknown as Informer<KubeObject>;
      this.#informers.set(key, informer);
      if (this.#started) void informer.run(this.#stopInformers.signal);
    }
    return informer as unknown as Informer<T>;
  }

  /**
   * An event recorder whose failed writes speak through this manager: a warn line at most every 30 s while
   * writes fail (with the API server's words), an info line when they work again, `runtime_retries_total{component="events"}`.
   */
  eventRecorder(options: Omit<EventRecorderOptions, 'log' | 'metrics'>): EventRecorder {
    return new EventRecorder(this.client, { ...options, log: this.log, metrics: this.metrics.retries });
  }

  controller(name: string): ControllerBuilder {
    return new ControllerBuilder(this, name);
  }

  register(controller: Controller, informers: Informer<KubeObject>[]): void {
    if (this.#started) throw new Error(`controller ${controller.name}: register controllers before start()`);
    this.#controllers.push({ controller, informers });
  }

  add(runnable: Runnable): void {
    this.#runnables.push(runnable);
  }

  addHealthCheck(name: string, check: Check): void {
    this.probes.addHealthCheck(name, check);
  }

  addReadyCheck(name: string, check: Check): void {
    this.probes.addReadyCheck(name, check);
  }

  isLeader(): boolean {
    return this.elector ? this.elector.isLeader() : this.#started;
  }

  /** Runs until `signal` aborts (resolves after a graceful shutdown) or leadership is lost (rejects). */
  async start(signal: AbortSignal): Promise<void> {
    if (this.#started) throw new Error('manager already started');
    this.#started = true;
    if (this.#options.probePort !== undefined) await this.probes.listen(this.#options.probePort, this.#options.probeHost);
    await this.secureMetrics?.listen();
    const informersDone = [...this.#informers.values()].map((i) => i.run(this.#stopInformers.signal));
    try {
      const syncTimeoutMs = this.#options.syncTimeoutMs ?? 120_000;
      const syncTimeout = AbortSignal.timeout(syncTimeoutMs);
      try {
        await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(AbortSignal.any([signal, syncTimeout]))));
      } catch (err) {
        if (!syncTimeout.aborted || signal.aborted) throw err;
        throw new Error(`caches not synced after ${formatSeconds(syncTimeoutMs)}: ${this.#unsynced().join('; ')}`, { cause: err });
      }
      this.log.info({ informers: this.#informers.size }, 'caches synced');
      // Runnables that need no leadership (a webhook server) stop with the process, and also when leadership is
      // lost: start() can only reject once they have, and a process left running without its controllers would
      // hold no lease and reconcile nothing, for good (the chaos suite found both replicas so after an API
      // server restart).
      const stopEverywhere = new AbortController();
      const everywhereSignal = AbortSignal.any([signal, stopEverywhere.signal]);
      const everywhere = this.#runnables.filter((r) => r.needLeaderElection === false).map((r) => this.#run(r, everywhereSignal));

      let lost: Error | undefined;
      if (this.elector) {
        this.metrics.leader.set({ name: 'manager' }, 0);
        let leaderWork: Promise<unknown> = Promise.resolve();
        const outcome = await this.elector.run(signal, {
          // The elector keeps the lease until this work has drained (see LeadershipCallbacks).
          onStartedLeading: (leading) => {
            this.metrics.leader.set({ name: 'manager' }, 1);
            leaderWork = this.#runLeaderWork(leading);
            return leaderWork;
          },
          onStoppedLeading: () => this.metrics.leader.set({ name: 'manager' }, 0),
          onNewLeader: (identity) => this.log.info({ leader: identity }, 'leader observed'),
        });
        if (outcome === 'lost') {
          lost = this.elector.lostBecause ?? new Error('the lease was not renewed within the renew deadline');
          stopEverywhere.abort();
        }
        await leaderWork;
      } else {
        await this.#runLeaderWork(signal);
      }
      await Promise.all(everywhere);
      if (lost) throw new LeadershipLostError(lost);
    } finally {
      this.#stopInformers.abort();
      await Promise.allSettled(informersDone);
      await this.probes.close();
      await this.secureMetrics?.close();
      this.log.info('manager stopped');
    }
  }

  /** Each informer not yet synced, with what its list or watch was last told. */
  #unsynced(): string[] {
    return [...this.#informers.values()]
      .filter((i) => !i.hasSynced())
      .map((i) => {
        const failure = i.failing();
        return failure ? `${i.component} (failing for ${formatSeconds(failure.forMs)}: ${failure.message})` : `${i.component} (no error yet; still listing)`;
      });
  }

  async #runLeaderWork(signal: AbortSignal): Promise<void> {
    const drainMs = this.#options.gracefulShutdownMs ?? 30_000;
    await Promise.all([
      ...this.#controllers.map(({ controller }) => controller.run(signal, drainMs)),
      ...this.#runnables.filter((r) => r.needLeaderElection !== false).map((r) => this.#run(r, signal)),
    ]);
  }

  async #run(runnable: Runnable, signal: AbortSignal): Promise<void> {
    try {
      await runnable.start(signal);
    } catch (err) {
      if (!signal.aborted) this.log.error({ err, runnable: runnable.name }, 'runnable failed');
    }
  }
}

/** The namespaces of `options` (namespace or namespaces), checked; undefined for every namespace. */
function defaultNamespaces(options: ManagerOptions): readonly string[] | undefined {
  if (options.namespaces === undefined) return options.namespace ? [options.namespace] : undefined;
  if (options.namespace !== undefined) throw new Error('manager: give namespace or namespaces, not both');
  const namespaces = [...new Set(options.namespaces)];
  if (namespaces.length === 0 || namespaces.includes('')) throw new Error('manager: namespaces must name at least one namespace, and no empty one (leave it unset for every namespace)');
  return namespaces;
}

/** An AbortSignal that aborts on SIGTERM or SIGINT: pass it to Manager.start for graceful shutdown. */
export function shutdownSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = (sig: string): void => controller.abort(new Error(`received ${sig}`));
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return controller.signal;
}
