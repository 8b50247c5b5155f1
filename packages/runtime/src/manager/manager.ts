// The manager runs an operator: it owns the client, the shared informers (one per kind and scope), the
// controllers, leader election, probes, metrics and graceful shutdown.
//
// Start order: probe/metrics server → informers (every replica keeps a warm cache) → wait for sync →
// leader election → controllers and leader-only runnables. Losing the lease stops them and makes start()
// reject, so the process exits and its Pod restarts, as controller-runtime does.
import type { Logger } from 'pino';
import { Informer } from '../cache/informer.ts';
import { Client } from '../client/client.ts';
import type { ConnectionOptions } from '../client/config.ts';
import type { ResourceType } from '../client/resources.ts';
import { ControllerBuilder, type ControllerHost, type InformerScope } from '../controller/builder.ts';
import type { Controller } from '../controller/controller.ts';
import type { KubeObject } from '../object.ts';
import { ProbeServer, type Check } from './health.ts';
import { LeaderElector, type LeaderElectionOptions } from './leader-election.ts';
import { createLogger } from './log.ts';
import { RuntimeMetrics, resourceOf } from './metrics.ts';

export interface Runnable {
  name: string;
  /** Run only on the leader (default true), like controllers; false runs on every replica (webhooks). */
  needLeaderElection?: boolean;
  start(signal: AbortSignal): Promise<void>;
}

export interface ManagerOptions {
  client?: Client;
  connection?: ConnectionOptions;
  /** Default scope of informers: one namespace, or all when unset. */
  namespace?: string;
  leaderElection?: LeaderElectionOptions;
  /** Port of /healthz, /readyz and /metrics (0: ephemeral; undefined: no server). */
  probePort?: number;
  probeHost?: string;
  logger?: Logger;
  /** How long shutdown waits for reconciles in flight. */
  gracefulShutdownMs?: number;
  syncTimeoutMs?: number;
  /** Replay cached objects to controllers this often (default: never). */
  resyncMs?: number;
}

export class LeadershipLostError extends Error {
  constructor() {
    super('leadership lost: controllers stopped');
    this.name = 'LeadershipLostError';
  }
}

export class Manager implements ControllerHost {
  readonly client: Client;
  readonly log: Logger;
  readonly metrics: RuntimeMetrics;
  readonly probes: ProbeServer;
  readonly elector: LeaderElector | undefined;
  readonly #options: ManagerOptions;
  readonly #informers = new Map<string, Informer<KubeObject>>();
  readonly #controllers: { controller: Controller; informers: Informer<KubeObject>[] }[] = [];
  readonly #runnables: Runnable[] = [];
  readonly #stopInformers = new AbortController();
  #started = false;

  constructor(client: Client, options: ManagerOptions = {}) {
    this.client = client;
    this.#options = options;
    this.log = options.logger ?? createLogger();
    this.metrics = new RuntimeMetrics();
    this.probes = new ProbeServer(this.metrics.registry);
    client.observe((method, path, code) => this.metrics.apiRequests.inc({ method, code: String(code), resource: resourceOf(path) }));
    this.elector = options.leaderElection ? new LeaderElector(client, options.leaderElection, this.log) : undefined;
    this.probes.addHealthCheck('ping', () => undefined);
    this.probes.addReadyCheck('informers-synced', () => {
      const pending = [...this.#informers.values()].filter((i) => !i.hasSynced()).map((i) => i.type.kind);
      if (pending.length) throw new Error(`caches not synced: ${pending.join(', ')}`);
    });
  }

  static async create(options: ManagerOptions = {}): Promise<Manager> {
    return new Manager(options.client ?? (await Client.connect(options.connection)), options);
  }

  /** The shared informer for a kind and scope, created on first use (and started at once if the manager runs). */
  informer<T extends KubeObject>(type: ResourceType<T>, scope: InformerScope = {}): Informer<T> {
    const namespace = type.namespaced ? (scope.namespace ?? this.#options.namespace) : undefined;
    const key = [type.apiVersion, type.kind, namespace ?? '', scope.labelSelector ?? '', scope.fieldSelector ?? ''].join('|');
    let informer = this.#informers.get(key);
    if (!informer) {
      const created = new Informer<T>(this.client, type, {
        namespace,
        labelSelector: scope.labelSelector,
        fieldSelector: scope.fieldSelector,
        resyncMs: this.#options.resyncMs,
        onError: (err, action) => this.log.warn({ kind: type.kind, err, action }, 'watch interrupted; recovering'),
      });
      informer = created as unknown as Informer<KubeObject>;
      this.#informers.set(key, informer);
      if (this.#started) void informer.run(this.#stopInformers.signal);
    }
    return informer as unknown as Informer<T>;
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
    const informersDone = [...this.#informers.values()].map((i) => i.run(this.#stopInformers.signal));
    try {
      const syncTimeout = AbortSignal.timeout(this.#options.syncTimeoutMs ?? 120_000);
      await Promise.all([...this.#informers.values()].map((i) => i.waitForSync(AbortSignal.any([signal, syncTimeout]))));
      this.log.info({ informers: this.#informers.size }, 'caches synced');
      const everywhere = this.#runnables.filter((r) => r.needLeaderElection === false).map((r) => this.#run(r, signal));

      let lost = false;
      if (this.elector) {
        this.metrics.leader.set({ name: 'manager' }, 0);
        let leaderWork: Promise<unknown> = Promise.resolve();
        const outcome = await this.elector.run(signal, {
          onStartedLeading: (leading) => {
            this.metrics.leader.set({ name: 'manager' }, 1);
            leaderWork = this.#runLeaderWork(leading);
          },
          onStoppedLeading: () => this.metrics.leader.set({ name: 'manager' }, 0),
          onNewLeader: (identity) => this.log.info({ leader: identity }, 'leader observed'),
        });
        await leaderWork;
        lost = outcome === 'lost';
      } else {
        await this.#runLeaderWork(signal);
      }
      await Promise.all(everywhere);
      if (lost) throw new LeadershipLostError();
    } finally {
      this.#stopInformers.abort();
      await Promise.allSettled(informersDone);
      await this.probes.close();
      this.log.info('manager stopped');
    }
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

/** An AbortSignal that aborts on SIGTERM or SIGINT: pass it to Manager.start for graceful shutdown. */
export function shutdownSignal(): AbortSignal {
  const controller = new AbortController();
  const stop = (sig: string): void => controller.abort(new Error(`received ${sig}`));
  process.once('SIGTERM', () => stop('SIGTERM'));
  process.once('SIGINT', () => stop('SIGINT'));
  return controller.signal;
}
