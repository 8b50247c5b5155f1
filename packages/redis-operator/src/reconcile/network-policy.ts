// Keeps each Redis's NetworkPolicy as its spec says, beside the planner's one step (like the etcd operator's
// cluster objects): made before the first pod, so no pod is ever open; applied to a Redis made before this release
// at its first reconcile after the upgrade; deleted with spec.network.policy false. Only a policy this Redis
// controls (its controlling owner reference) is changed or deleted: one of someone else's at that name is left
// alone and reported.
import { AlreadyExistsError, applyIfChanged, isControlledBy, NetworkPolicies, NotFoundError, type KubeObject } from '@quorum/runtime';
import { KIND } from '../api/redis.ts';
import type { DefaultedSpec } from '../api/defaults.ts';
import { names, type RedisRef } from '../names.ts';
import { networkPolicy, type NetworkPolicyOptions } from '../render/network-policy.ts';
import { FIELD_MANAGER, type ReconcilerDeps } from './deps.ts';

/** Where the operator runs unless told (POD_NAMESPACE): a reconciler in a test admits the installed operator's pods. */
export const DEFAULT_NETWORK_POLICY_OPTIONS: NetworkPolicyOptions = { operatorNamespace: 'quorum-system' };

/** What was done (for the Normal event), a policy of someone else's in the way, or nothing. */
export type PolicyOutcome = { done: string } | { conflict: string } | undefined;

export async function reconcileNetworkPolicy(deps: ReconcilerDeps, redis: RedisRef, spec: DefaultedSpec, signal: AbortSignal): Promise<PolicyOutcome> {
  const name = names.networkPolicy(redis.name);
  const owner = { kind: KIND, metadata: { uid: redis.uid } };
  const cached = deps.networkPolicies.store.get(`${redis.namespace}/${name}`);
  if (spec.network?.policy === false) {
    if (cached === undefined || !isControlledBy(cached, owner)) return undefined;
    await deps.client.delete(NetworkPolicies, { namespace: redis.namespace, name }, { signal }).catch(ignoreNotFound);
    return { done: `deleted the NetworkPolicy ${name} (spec.network.policy is false)` };
  }
  const desired = networkPolicy({ redis, spec }, deps.network ?? DEFAULT_NETWORK_POLICY_OPTIONS) as KubeObject;
  // The cache holds the operator's own labels only: a policy without them at that name is found by the create.
  let current: KubeObject | undefined = cached;
  if (current === undefined) {
    try {
      await deps.client.create(NetworkPolicies, desired, { fieldManager: FIELD_MANAGER, signal });
      return { done: `created the NetworkPolicy ${name}: ingress to the pods only from the Redis's own pods, the operator, its backup Jobs and spec.network.clientsFrom` };
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      current = await deps.client.get(NetworkPolicies, { namespace: redis.namespace, name }, { signal });
    }
  }
  if (!isControlledBy(current, owner)) return { conflict: `a NetworkPolicy named ${name} that this Redis does not control is in the way: the operator neither changes nor deletes it, so this Redis's pods are admitted by that policy instead of the one spec.network asks for; rename or delete it` };
  const { applied } = await applyIfChanged(deps.client, NetworkPolicies, desired, current, { fieldManager: FIELD_MANAGER, force: true, signal });
  return applied ? { done: `updated the NetworkPolicy ${name} to spec.network` } : undefined;
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof NotFoundError)) throw err;
}
