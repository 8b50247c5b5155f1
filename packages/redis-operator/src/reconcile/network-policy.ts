// Keeps each Redis's NetworkPolicy as its spec says (owned-objects.ts): made before the first pod, so no pod is
// ever open; applied to a Redis made before this release at its first reconcile after the upgrade; deleted with
// spec.network.policy false; one of someone else's at the name is never touched.
import { NetworkPolicies } from '@quorum/runtime';
import type { DefaultedSpec } from '../api/defaults.ts';
import { names, type RedisRef } from '../names.ts';
import { networkPolicy, type NetworkPolicyOptions } from '../render/network-policy.ts';
import type { ReconcilerDeps } from './deps.ts';
import { keepOwned, type KeepOutcome } from './owned-objects.ts';

/** Where the operator runs unless told (POD_NAMESPACE): a reconciler in a test admits the installed operator's pods. */
export const DEFAULT_NETWORK_POLICY_OPTIONS: NetworkPolicyOptions = { operatorNamespace: 'quorum-system' };

export type PolicyOutcome = KeepOutcome;

export async function reconcileNetworkPolicy(deps: ReconcilerDeps, redis: RedisRef, spec: DefaultedSpec, signal: AbortSignal): Promise<PolicyOutcome> {
  const name = names.networkPolicy(redis.name);
  return keepOwned(deps, {
    type: NetworkPolicies,
    namespace: redis.namespace,
    name,
    owner: redis.uid,
    desired: spec.network?.policy === false ? undefined : networkPolicy({ redis, spec }, deps.network ?? DEFAULT_NETWORK_POLICY_OPTIONS),
    cached: deps.networkPolicies.store.get(`${redis.namespace}/${name}`),
    said: {
      created: `created the NetworkPolicy ${name}: ingress to the pods only from the Redis's own pods, the operator, its backup Jobs and spec.network.clientsFrom`,
      updated: `updated the NetworkPolicy ${name} to spec.network`,
      deleted: `deleted the NetworkPolicy ${name} (spec.network.policy is false)`,
      conflict: `a NetworkPolicy named ${name} that this Redis does not control is in the way: the operator neither changes nor deletes it, so this Redis's pods are admitted by that policy instead of the one spec.network asks for; rename or delete it`,
    },
  }, signal);
}
