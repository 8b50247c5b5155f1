// Each Redis's NetworkPolicy (issue 23, closed ports), in the kit's shape shared with the etcd operator: ingress to
// the Redis's pods only from whom the spec and the operator need. Redis pods listen on nothing else (no metrics
// port: the operator reads INFO over 6379 and exports the figures itself), so nothing else is admitted.
import { ingressPolicy, operatorPeer, SAME_NAMESPACE, type IngressPolicy, type NetworkPeer } from '@quorum/kit';
import { backupPodLabels } from '../backup/job.ts';
import { names, objectLabels, OPERATOR_POD_LABELS, ownerRef, REDIS_PORT, SENTINEL_PORT, selectorLabels } from '../names.ts';
import type { Rendering } from './objects.ts';

export interface NetworkPolicyOptions {
  /** The operator's own namespace (POD_NAMESPACE): its pods read every instance and Sentinel. */
  operatorNamespace: string;
}

/**
 * Instances (6379): the Redis's own pods (replicas sync from the primary, Sentinels watch the instances), the
 * operator's pods, the Redis's backup Jobs (pods of its namespace labelled as its backup Jobs are) and
 * spec.network.clientsFrom (unset: every pod of the namespace). Sentinels (26379): the Redis's own pods (Sentinels
 * speak to each other), the operator's pods and clientsFrom (Sentinel-aware clients). The policy selects both
 * kinds of pod; each port is admitted only from its own list.
 */
export function networkPolicy(r: Pick<Rendering, 'redis' | 'spec'>, options: NetworkPolicyOptions): IngressPolicy {
  const redis = r.redis.name;
  const own: NetworkPeer = { podSelector: { matchLabels: selectorLabels(redis) } };
  const operator = operatorPeer(options.operatorNamespace, OPERATOR_POD_LABELS);
  const backupJobs: NetworkPeer = { podSelector: { matchLabels: backupPodLabels(redis) } };
  const clients = r.spec.network?.clientsFrom ?? SAME_NAMESPACE;
  return ingressPolicy({
    name: names.networkPolicy(redis),
    namespace: r.redis.namespace,
    labels: objectLabels(redis),
    ownerReferences: [ownerRef(r.redis)],
    podLabels: selectorLabels(redis),
    ingress: [
      { ports: [REDIS_PORT], from: [own, operator, backupJobs, ...clients] },
      { ports: [SENTINEL_PORT], from: [own, operator, ...clients] },
    ],
  });
}
