// What the EtcdCluster reconciler is given: the API client, the informer caches it reads, the etcd clients, and
// the operator's settings (operator.ts fills them from its configuration; tests fill them directly).
import type { V1PersistentVolumeClaim, V1Pod, V1PodDisruptionBudget, V1Secret, V1Service } from '@kubernetes/client-node';
import type { BuiltinObject, Client, EventRecorder, Informer, NetworkPolicy } from '@quorum/runtime';
import type { EtcdBackup } from '../api/etcdbackup.ts';
import type { EtcdClients } from '../etcd/clients.ts';
import type { NetworkPolicyOptions } from './resources.ts';
import type { EtcdCluster } from './spec.ts';

/**
 * A built-in object as the informers' caches hold it: the client-node model of its kind, field by field, with
 * timestamps as the strings the API server sends (the runtime's BuiltinObject, as its resource types give them).
 */
export type Cached<T> = BuiltinObject<T>;
export type CachedPod = Cached<V1Pod>;
export type CachedPVC = Cached<V1PersistentVolumeClaim>;
export type CachedService = Cached<V1Service>;
export type CachedPDB = Cached<V1PodDisruptionBudget>;
export type CachedSecret = Cached<V1Secret>;
export type CachedNetworkPolicy = NetworkPolicy;

/** Counts each retry of a step: `quorum_etcdcluster_step_retries_total{step,reason}`. */
export interface StepMetrics {
  stepRetried(step: string, reason: string): void;
  /** A member was defragmented: `quorum_etcdcluster_defrag_last_duration_seconds`, `quorum_etcdcluster_defrags_total`. */
  defragmented?(namespace: string, cluster: string, member: string, reason: string, seconds: number): void;
  /** Whether etcd's NOSPACE alarm is raised: `quorum_etcdcluster_alarm{alarm="NOSPACE"}` (1 or 0). */
  alarm?(namespace: string, cluster: string, alarm: string, raised: boolean): void;
}

export interface ReconcilerDeps {
  client: Client;
  clusters: Pick<Informer<EtcdCluster>, 'store'>;
  pods: Pick<Informer<CachedPod>, 'store'>;
  pvcs: Pick<Informer<CachedPVC>, 'store'>;
  services: Pick<Informer<CachedService>, 'store'>;
  pdbs: Pick<Informer<CachedPDB>, 'store'>;
  networkPolicies: Pick<Informer<CachedNetworkPolicy>, 'store'>;
  /**
   * Who besides the members may reach them (the operator's namespace, the monitoring namespaces), for each
   * cluster's NetworkPolicy; unset: the operator's defaults (DEFAULT_NETWORK_POLICY_OPTIONS).
   */
  network?: NetworkPolicyOptions;
  /** The operator's own Secrets (label managed-by=quorum): a TLS cluster's CAs and certificates. */
  secrets?: Pick<Informer<CachedSecret>, 'store'>;
  /** The cluster domain member certificates name (CLUSTER_DOMAIN, default cluster.local). */
  clusterDomain?: string;
  etcd: EtcdClients;
  events: Pick<EventRecorder, 'record'>;
  crashLoopGraceMs: number;
  /** How long the old CA stays trusted once a CA rotation signs with the new one (CA_ROTATION_OVERLAP_SECONDS). */
  caRotationOverlapMs?: number;
  /** The image of the init container that waits for peer names to resolve; none when empty. */
  peerWaitImage?: string;
  /** The backup agent's image (the operator's own): a restored member's pod downloads its snapshot with it. */
  agentImage?: string;
  /** EtcdBackups, to resolve spec.bootstrap.fromBackup.backupName. */
  backups?: Pick<Informer<EtcdBackup>, 'store'>;
  /** A step's bound: past it, Progressing=False (ProgressDeadlineExceeded) and Degraded=True. */
  stepDeadlineMs?: number;
  /** How long a membership change may be refused by every member before a stale peer is restarted. */
  refusedRestartMs?: number;
  metrics?: StepMetrics;
  /** The clock (tests move it forward to cross a step's bounds). */
  now?: () => Date;
  /** Test hook: called after every etcd or Kubernetes write the reconciler makes (failpoints). */
  afterWrite?: (what: string) => Promise<void> | void;
}

/** How often a cluster with nothing to do is looked at again. */
export const STEADY_RESYNC_MS = 30_000;
/** How long a membership change may be refused by every member before a stale peer is restarted. */
export const DEFAULT_REFUSED_RESTART_MS = 120_000;
