// Each Redis's PodDisruptionBudgets: what a node drain's evictions (kubectl drain, a cluster upgrade) may take.
// The primary is never evicted while it is the primary: the operator moves it away from a cordoned node first
// (plan/drain.ts), and the pod, a replica by then, goes under the replicas' budget. Budgets use an integer
// minAvailable, the only form Kubernetes' disruption controller computes for pods whose controller (a Redis) has
// no scale subresource. The three select disjoint pods: the eviction API refuses a pod that two budgets select.
import type { PodDisruptionBudget } from '@quorum/runtime';
import type { DefaultedSpec } from '../api/defaults.ts';
import { LABELS, names, objectLabels, ownerRef, selectorLabels, type RedisRef } from '../names.ts';

type Budget = PodDisruptionBudget & { apiVersion: 'policy/v1'; kind: 'PodDisruptionBudget' };

export type BudgetOf = 'primary' | 'replicas' | 'sentinel';
export const BUDGETS: readonly BudgetOf[] = ['primary', 'replicas', 'sentinel'];

/** A Sentinel majority: the fewest Sentinels that can still elect a leader and fail over. */
export const sentinelMajority = (sentinels: number): number => Math.floor(sentinels / 2) + 1;

/**
 * The budget `of` as the spec asks for it, or undefined where none is kept:
 * - primary (role=primary, minAvailable 1): only with a replica to move the primary to. A lone instance keeps no
 *   budget, so a drain restarts it rather than wait forever (docs/redis.md says so).
 * - replicas (role=replica, minAvailable replicas-1): one at a time, from two replicas up; a replica that is not
 *   Ready serves nobody and may always go (AlwaysAllow).
 * - sentinel (minAvailable a majority): from three Sentinels up, so that a failover stays possible; with one or
 *   two, any loss already ends failovers, and a budget would only block the drain.
 */
export function disruptionBudget(redis: RedisRef, spec: Pick<DefaultedSpec, 'replicas' | 'sentinel'>, of: BudgetOf): Budget | undefined {
  const base = (minAvailable: number, selector: Record<string, string>, alwaysAllowUnhealthy: boolean): Budget => ({
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: names.disruptionBudget(redis.name, of), namespace: redis.namespace, labels: objectLabels(redis.name), ownerReferences: [ownerRef(redis)] },
    spec: { minAvailable, selector: { matchLabels: selector }, ...(alwaysAllowUnhealthy ? { unhealthyPodEvictionPolicy: 'AlwaysAllow' } : {}) },
  });
  switch (of) {
    case 'primary':
      // A primary that is not Ready may still be the one the Sentinels name: it moves first, like a Ready one.
      return spec.replicas >= 1 ? base(1, { ...selectorLabels(redis.name, 'redis'), [LABELS.role]: 'primary' }, false) : undefined;
    case 'replicas':
      return spec.replicas >= 2 ? base(spec.replicas - 1, { ...selectorLabels(redis.name, 'redis'), [LABELS.role]: 'replica' }, true) : undefined;
    case 'sentinel':
      return spec.sentinel.replicas >= 3 ? base(sentinelMajority(spec.sentinel.replicas), selectorLabels(redis.name, 'sentinel'), true) : undefined;
  }
}
