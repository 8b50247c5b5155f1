// What every step handler is given (ActContext), how a handler is typed (one per step kind), and the refusal
// a handler throws when the operator itself finds a step cannot be taken now.
import { NotFoundError, type Client, type KubeObject, type Result } from '@quorum/runtime';
import type { DefragReason } from '../../api/etcdcluster.ts';
import type { BudgetStatus } from '../disruption.ts';
import type { Scheme } from '../../names.ts';
import type { EtcdClients } from '../../etcd/clients.ts';
import type { EtcdView, PodObject } from '../observe-members.ts';
import type { Action } from '../plan/types.ts';
import type { DefaultedSpec, EtcdCluster } from '../spec.ts';
import type { CABundles, ClientCredentials, TLSStage } from '../../tls/members.ts';

export interface ActContext {
  client: Client;
  etcd: EtcdClients;
  cluster: EtcdCluster;
  spec: DefaultedSpec;
  pods: PodObject[];
  pvcs: KubeObject[];
  /** The cluster's PodDisruptionBudget as the cache holds it: why it refuses an eviction (disruption.ts). */
  pdb?: BudgetStatus;
  view: EtcdView;
  peerWaitImage?: string;
  /** The backup agent's image (the operator's own), for a restored member's fetch-snapshot init container. */
  agentImage?: string;
  signal: AbortSignal;
  event: (type: 'Normal' | 'Warning', reason: string, note: string) => void;
  wrote: (what: string) => Promise<void>;
  /** For a cluster with spec.tls: how the operator dials members, and what writing its Secrets needs. */
  tls?: { credentials?: ClientCredentials; clusterDomain: string; mayIssueCA: boolean; now: Date; caBundles?: CABundles };
  /** Each member's peer URL scheme as etcd (or, without a quorum, status) last said: what --initial-cluster must repeat. */
  peerSchemes?: ReadonlyMap<string, Scheme>;
  /** The TLS stage a member's new pod is made at (tls/members.ts memberTLSStages); unset: the spec's final stage. */
  tlsStage?: (member: string) => TLSStage;
  /** Told what a maintenance step did, for the next status (which is written before each step, so cannot know it). */
  maintained?: (result: MaintenanceResult) => void;
}

/** What a storage maintenance step did: status.maintenance records it on the next reconcile. */
export type MaintenanceResult =
  | { kind: 'compacted'; revision: string; at: Date }
  | { kind: 'defragmented'; member: string; reason: DefragReason; durationMs: number; dbSizeBefore: number; dbSizeAfter?: number; at: Date };

export type StepKind = Action['type'];

/** The handler of one step kind: it takes that step, and answers when to reconcile again. */
export type Handler<K extends StepKind> = (step: Extract<Action, { type: K }>, c: ActContext) => Promise<Result>;

/** Handlers for the step kinds K, one each: a table of every kind is checked complete by the compiler. */
export type Handlers<K extends StepKind = StepKind> = { [P in K]: Handler<P> };

/** A refusal the operator itself finds (not etcd's nor the API server's), with its reason. */
export class StepError extends Error {
  readonly reason: string;
  constructor(reason: string, message: string) {
    super(message);
    this.name = 'StepError';
    this.reason = reason;
  }
}

export function ignoreNotFound(err: unknown): void {
  if (!(err instanceof NotFoundError)) throw err;
}

/** The cluster's name and namespace, as every handler names its objects. */
export function clusterKey(c: ActContext): { name: string; namespace: string } {
  return { name: c.cluster.metadata.name!, namespace: c.cluster.metadata.namespace! };
}
