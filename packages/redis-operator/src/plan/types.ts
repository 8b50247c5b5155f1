// What the planner sees and what it may decide. Observed is built by observe.ts from the caches, the instances
// (ROLE / INFO replication) and the Sentinels (SENTINEL get-master-addr-by-name); Action is the one next step.
import type { DefaultedSpec } from '../api/defaults.ts';
import type { HaltReason, RolloutStatus } from '../api/redis.ts';
import type { Component } from '../names.ts';

export interface PodFacts {
  name: string;
  component: Component;
  /** Kubernetes' own word: Pending, Running, Succeeded, Failed. */
  phase: string;
  ready: boolean;
  deleting: boolean;
  /** The redis.quorum.dev/role label the Services select by. */
  roleLabel?: string;
  /** The config-hash annotation: what the pod was made from (compared with Observed.desiredHash). */
  hash?: string;
  /** Set while a container is in CrashLoopBackOff: its last exit, in the kubelet's words. */
  crashLooping?: string;
  /** The node it is scheduled on. */
  node?: string;
  /** Its node is cordoned (kubectl cordon, or a drain under way): the primary moves off it (plan/changes.ts). */
  nodeCordoned?: boolean;
  /** How long ago the pod was made. */
  ageMs?: number;
}

/** What an instance said about itself, or why it said nothing (which is not evidence of anything). */
export type InstanceReading =
  | {
      ok: true;
      role: 'master' | 'slave';
      /** A replica's primary, as it names it (`master_host`). */
      primaryHost?: string;
      /** A replica's link to its primary (`master_link_status:up`). */
      linkUp?: boolean;
      /** Its replication offset (`master_repl_offset`; a replica's `slave_repl_offset` when it has one). */
      offset: number;
      version: string;
      /** With TLS: the SHA-256 fingerprint of the certificate it serves now (what it loaded at start or last reload). */
      certificate?: string;
      /** INFO memory, stats and replication counts, for the operator's metrics only (the planner ignores them). */
      stats?: InstanceStats;
    }
  | { ok: false; error: string };

/**
 * What a Sentinel said: the primary it names for this Redis, and the replicas and other Sentinels it remembers
 * (as pod names: Sentinel forgets none by itself, so removed ones stay until SENTINEL RESET); or why it said nothing.
 */
/** What an instance's INFO says of its load: the metrics of operator/metrics.ts. */
export interface InstanceStats {
  /** `used_memory`. */
  usedMemoryBytes: number;
  /** `maxmemory`; 0: no limit. */
  maxMemoryBytes: number;
  /** `evicted_keys`: keys evicted for maxmemory since the server started. */
  evictedKeys: number;
  /** `connected_slaves`: replicas connected to it now. */
  connectedReplicas: number;
}

export type SentinelReading =
  | { ok: true; primaryHost?: string; knownReplicas?: readonly string[]; knownSentinels?: readonly string[]; /** The replicas it would promote now (not down, linked as of its last INFO). */ goodReplicas?: readonly string[] }
  | { ok: false; error: string };

export interface ConfigState {
  redisConf: string;
  sentinelConf: string;
  /** The authority's last decision, as the operator recorded it: whom a starting instance replicates. */
  primary: string;
}

export interface Observed {
  redis: string;
  namespace: string;
  spec: DefaultedSpec;
  /** ok, or which Secret is missing: the generated one (the operator makes it) or the user's (a wait). */
  auth: 'ok' | 'generate' | 'missing';
  /** The ConfigMap as it is, when it exists. */
  config?: ConfigState;
  /** redis.conf as the spec renders it, and sentinel.conf for a given primary. */
  desired: { redisConf: string; sentinelConf: (primary: string) => string };
  services: ReadonlySet<string>;
  missingServices: readonly string[];
  claims: ReadonlySet<string>;
  pods: ReadonlyMap<string, PodFacts>;
  instances: ReadonlyMap<string, InstanceReading>;
  sentinels: ReadonlyMap<string, SentinelReading>;
  /** How long the step now under way has lasted (status.step), for waits the planner bounds itself. */
  step?: { name: string; ageMs: number };
  /** The config-hash a pod made from the spec now carries, by component. */
  desiredHash: { redis: string; sentinel: string };
  /** The rollout record (status.rollout) and the retry annotation now. */
  rollout: { record?: RolloutStatus; retryToken?: string };
  /** The failover the operator last asked for (status.plannedFailover), with how long ago. */
  plannedFailover?: { from: string; ageMs: number };
  /** Why spec.bootstrap.fromBackup cannot be started from yet (the backup missing, not Succeeded, its Secret unlabelled). */
  bootstrapBlocked?: string;
  /** Why spec.users cannot be served: a password Secret or key that does not exist (a pod made now could not start). */
  usersProblem?: string;
  /** TLS as observed (absent without TLS): Secrets to issue, or why it cannot be served. */
  tls?: { secretName: string; issue: readonly { name: string; reason: string }[]; problem?: { reason: string; message: string }; /** The fingerprint256 of the Secret's certificate. */ certificate?: string; caRotation?: CARotationFacts };
}

/** An operator-managed CA rotation (plan/tls.ts): due (Start) or under way in the phase `<name>-ca` is in. */
export interface CARotationFacts {
  phase: 'Start' | 'TrustNew' | 'Reissue';
  /** Why a rotation starts (a new rotate-ca value, the CA nearing its end). */
  why: string;
  /** TrustNew: how much of the overlap (clients reading the two-CA bundle) is left before signing moves; 0 once over. */
  overlapLeftMs?: number;
}

export type Action =
  | { type: 'create-secret' }
  /** Issue the operator-managed CA and/or certificate (`<name>-ca`, `<name>-tls`). */
  | { type: 'issue-tls'; secrets: readonly { name: string; reason: string }[] }
  /** Have an instance load its certificate files again (CONFIG SET tls-cert-file …): a renewed certificate, no restart. */
  | { type: 'reload-tls'; instance: string }
  /** One step of a CA rotation, written to `<name>-ca` (TrustNew, Reissue, DropOld); `detail` says what it does. */
  | { type: 'rotate-ca'; step: 'TrustNew' | 'Reissue' | 'DropOld'; detail: string }
  | { type: 'write-config'; primary: string; reason: 'Bootstrap' | 'PrimaryChanged' | 'ConfigChanged' }
  | { type: 'create-services'; names: readonly string[] }
  | { type: 'create-claim'; instance: string }
  | { type: 'create-pod'; pod: string; component: Component }
  | { type: 'delete-pod'; pod: string; reason: string }
  | { type: 'label-role'; pod: string; role: 'primary' | 'replica' | null }
  | { type: 'promote'; instance: string }
  | { type: 'replicate'; instance: string; primary: string }
  | { type: 'delete-claim'; instance: string; reason: string }
  /** Move the primary away from `from`: Sentinel FAILOVER (writes paused until replicas caught up), or FAILOVER TO `to` without Sentinels. */
  | { type: 'failover'; from: string; to?: string; reason: string }
  | { type: 'reset-sentinel'; sentinel: string; forget: readonly string[] }
  | { type: 'halt-rollout'; instance: string; reason: HaltReason; message: string }
  | { type: 'wait'; reason: string; message: string; requeueAfterMs: number }
  | { type: 'none' };

/** The step an action belongs to, as status.step names it (a wait and the action it waits for share one). */
export function stepName(action: Action): string | undefined {
  switch (action.type) {
    case 'none':
      return undefined;
    case 'wait':
      return action.reason;
    // Asking again and waiting for it are one step, so that its age bounds the whole failover.
    case 'failover':
      return 'PlannedFailover';
    case 'halt-rollout':
      return 'RolloutHalted';
    case 'rotate-ca':
      return `rotate-ca ${action.step}`;
    case 'reset-sentinel':
      return `reset-sentinel ${action.sentinel}`;
    case 'create-pod':
    case 'delete-pod':
    case 'label-role':
      return `${action.type} ${action.pod}`;
    case 'create-claim':
    case 'delete-claim':
    case 'promote':
    case 'replicate':
    case 'reload-tls':
      return `${action.type} ${action.instance}`;
    default:
      return action.type;
  }
}
