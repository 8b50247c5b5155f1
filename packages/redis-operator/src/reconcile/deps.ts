// What the Redis reconciler is given: the API client, the informer caches it reads, how it reads instances and
// Sentinels, and the operator's settings (operator.ts fills them; tests fill them directly).
import type { Client, EventRecorder, Informer, NetworkPolicy, Node, OpenObject, PodDisruptionBudget } from '@quorum/runtime';
import type { NetworkPolicyOptions } from '../render/network-policy.ts';
import type { InstanceReading, Observed, SentinelReading } from '../plan/types.ts';
import type { Endpoint } from '../redis/readings.ts';
import type { RedisBackupObject, RedisObject } from '../resources.ts';

export interface Readers {
  instance(e: Endpoint): Promise<InstanceReading>;
  sentinel(e: Endpoint, monitored: string): Promise<SentinelReading>;
  replicaOf(e: Endpoint, primary?: { host: string; port: number }): Promise<void>;
  /** Planned failovers and SENTINEL RESET (redis/commands.ts). */
  sentinelFailover(primary: Endpoint, sentinels: readonly Endpoint[], monitored: string): Promise<void>;
  failoverTo(primary: Endpoint, to: { host: string; port: number }): Promise<void>;
  resetSentinel(sentinel: Endpoint, monitored: string): Promise<void>;
  /** Has an instance load its TLS files again (CONFIG SET). */
  reloadTLS(instance: Endpoint): Promise<void>;
}

export interface ReconcilerDeps {
  client: Client;
  redises: Pick<Informer<RedisObject>, 'store'>;
  /** The operator's own objects (label app.kubernetes.io/managed-by=quorum-redis-operator). */
  pods: Pick<Informer<OpenObject>, 'store'>;
  claims: Pick<Informer<OpenObject>, 'store'>;
  services: Pick<Informer<OpenObject>, 'store'>;
  configMaps: Pick<Informer<OpenObject>, 'store'>;
  networkPolicies: Pick<Informer<NetworkPolicy>, 'store'>;
  disruptionBudgets: Pick<Informer<PodDisruptionBudget>, 'store'>;
  /** The Nodes that are cordoned (spec.unschedulable, as kubectl cordon and drain set it): whose primary moves away. */
  cordonedNodes: Pick<Informer<Node>, 'store'>;
  /** Whom each Redis's NetworkPolicy admits as the operator's pods; unset: the defaults (reconcile/network-policy.ts). */
  network?: NetworkPolicyOptions;
  events: Pick<EventRecorder, 'record'>;
  readers: Readers;
  /** The RedisBackups, for spec.bootstrap.fromBackup. */
  backups: Pick<Informer<RedisBackupObject>, 'store'>;
  /** The image of restore init containers: the operator's own (it carries the agent). */
  agentImage: string;
  /** The server image for an engine and version. */
  image(engine: string, version: string): string;
  /** The cluster domain the TLS certificate names (`<svc>.<ns>.svc.<domain>`); default cluster.local. */
  clusterDomain?: string;
  /**
   * How long a CA rotation keeps the new CA in the bundle before the servers present certificates of it
   * (CA_ROTATION_OVERLAP_SECONDS): the time clients have to read the two-CA bundle. Unset: no overlap.
   */
  caRotationOverlapMs?: number;
  /** A step's bound: past it, Progressing=False and Degraded=True. */
  stepDeadlineMs?: number;
  now?: () => Date;
  /** Given every observation (instances' INFO readings included): the operator's metrics of them (operator/metrics.ts). */
  observed?: (observed: Observed) => void;
  /** Test hook: called after every write the reconciler makes (failpoints). */
  afterWrite?: (what: string) => Promise<void> | void;
}

export { FIELD_MANAGER } from '../names.ts';
