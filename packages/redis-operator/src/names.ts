// Every name and label the operator derives from a Redis, in one place. Names are deterministic, so that the
// operator finds what it made after a restart: instances `<name>-0` … `<name>-<replicas>`, Sentinels
// `<name>-sentinel-0` …, each instance's claim `data-<instance>`.
import type { OwnerReference } from '@quorum/runtime';
import { API_VERSION, KIND } from './api/redis.ts';

export const REDIS_PORT = 6379;
export const SENTINEL_PORT = 26379;

export const LABELS = {
  name: 'app.kubernetes.io/name',
  instance: 'app.kubernetes.io/instance',
  component: 'app.kubernetes.io/component',
  managedBy: 'app.kubernetes.io/managed-by',
  /** The role the operator follows from the authority (Sentinel, or itself without Sentinels): primary or replica. */
  role: 'redis.quorum.dev/role',
} as const;
export const MANAGED_BY = 'quorum-redis-operator';
/** The field manager of every write the operator makes (server-side apply owns fields by it). */
export const FIELD_MANAGER = 'quorum-redis-operator';
/** The operator's own pods (its Deployment's selector): each Redis's NetworkPolicy admits them. */
export const OPERATOR_POD_LABELS: Readonly<Record<string, string>> = { 'app.kubernetes.io/name': 'quorum-redis-operator' };
/** A Redis annotation: setting it to a new value retries a halted rolling update (docs/redis.md). */
export const RETRY_ROLLOUT_ANNOTATION = 'redis.quorum.dev/retry-rollout';
export const APP = 'redis';

export type Component = 'redis' | 'sentinel';

export const names = {
  instance: (redis: string, ordinal: number): string => `${redis}-${ordinal}`,
  sentinel: (redis: string, ordinal: number): string => `${redis}-sentinel-${ordinal}`,
  claim: (instance: string): string => `data-${instance}`,
  /** Selects the current primary: what clients write to. */
  primaryService: (redis: string): string => redis,
  replicasService: (redis: string): string => `${redis}-replicas`,
  sentinelService: (redis: string): string => `${redis}-sentinel`,
  /** Headless, publishing not-ready addresses: every pod's stable name `<pod>.<name>-headless.<ns>.svc`. */
  headlessService: (redis: string): string => `${redis}-headless`,
  config: (redis: string): string => `${redis}-config`,
  generatedSecret: (redis: string): string => `${redis}-auth`,
  /** The operator-managed CA (signs `<name>-tls` only; its key never leaves this Secret). */
  caSecret: (redis: string): string => `${redis}-ca`,
  /** The certificate every instance and Sentinel serves, with the CA bundle clients verify it by (ca.crt). */
  tlsSecret: (redis: string): string => `${redis}-tls`,
  /** Who may reach the Redis's pods (spec.network). */
  networkPolicy: (redis: string): string => redis,
  /** The PodDisruptionBudgets a drain's evictions meet: the primary, the replicas, the Sentinels. */
  disruptionBudget: (redis: string, of: 'primary' | 'replicas' | 'sentinel'): string => `${redis}-${of}`,
};

/** A pod's stable DNS name (the headless Service's record); survives restarts, unlike its IP. */
export function podHost(redis: string, namespace: string, pod: string): string {
  return `${pod}.${names.headlessService(redis)}.${namespace}.svc`;
}

/** The instance a host names, when it is one of this Redis's (`<pod>.<name>-headless.<ns>.svc`, or a pod name). */
export function instanceOfHost(redis: string, host: string): string | undefined {
  const pod = host.split('.')[0] ?? '';
  return new RegExp(`^${redis}-(0|[1-9][0-9]*)$`).test(pod) ? pod : undefined;
}

export function selectorLabels(redis: string, component?: Component): Record<string, string> {
  return { [LABELS.name]: APP, [LABELS.instance]: redis, ...(component ? { [LABELS.component]: component } : {}) };
}

export function objectLabels(redis: string, component?: Component): Record<string, string> {
  return { ...selectorLabels(redis, component), [LABELS.managedBy]: MANAGED_BY };
}

export interface RedisRef {
  name: string;
  namespace: string;
  uid: string;
}

export function ownerRef(redis: RedisRef): OwnerReference {
  return { apiVersion: API_VERSION, kind: KIND, name: redis.name, uid: redis.uid, controller: true, blockOwnerDeletion: true };
}
