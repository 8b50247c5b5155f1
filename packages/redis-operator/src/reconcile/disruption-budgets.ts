// Keeps each Redis's PodDisruptionBudgets (render/disruption-budgets.ts) as its spec says (owned-objects.ts):
// applied when the spec changes how many may go, deleted when it no longer asks for one (a scale-down to a lone
// instance), someone else's at a name never touched.
import { PodDisruptionBudgets } from '@quorum/runtime';
import type { DefaultedSpec } from '../api/defaults.ts';
import { names, type RedisRef } from '../names.ts';
import { BUDGETS, disruptionBudget, type BudgetOf } from '../render/disruption-budgets.ts';
import type { ReconcilerDeps } from './deps.ts';
import { keepOwned, type KeepOutcome } from './owned-objects.ts';

const WHAT: Record<BudgetOf, string> = {
  primary: 'the primary is never evicted (the operator moves it off a cordoned node first)',
  replicas: 'one replica at a time',
  sentinel: 'a majority of Sentinels stays',
};

/** Each budget's outcome, in BUDGETS order. */
export async function reconcileDisruptionBudgets(deps: ReconcilerDeps, redis: RedisRef, spec: DefaultedSpec, signal: AbortSignal): Promise<KeepOutcome[]> {
  const outcomes: KeepOutcome[] = [];
  for (const of of BUDGETS) {
    const name = names.disruptionBudget(redis.name, of);
    const desired = disruptionBudget(redis, spec, of);
    outcomes.push(await keepOwned(deps, {
      type: PodDisruptionBudgets,
      namespace: redis.namespace,
      name,
      owner: redis.uid,
      desired,
      cached: deps.disruptionBudgets.store.get(`${redis.namespace}/${name}`),
      said: {
        created: `created the PodDisruptionBudget ${name}: ${WHAT[of]}`,
        updated: `updated the PodDisruptionBudget ${name} to the spec: ${WHAT[of]}`,
        deleted: `deleted the PodDisruptionBudget ${name}: the spec no longer has the pods it kept (${of === 'sentinel' ? 'fewer than 3 Sentinels' : of === 'replicas' ? 'fewer than 2 replicas' : 'no replica'})`,
        conflict: `a PodDisruptionBudget named ${name} that this Redis does not control is in the way: the operator neither changes nor deletes it, so a drain's evictions are not held to ${WHAT[of]}; rename or delete it`,
      },
    }, signal));
  }
  return outcomes;
}
