// Why the PodDisruptionBudget refuses an eviction, when the reason is not a member that is down. Kubernetes'
// disruption controller lists each pod it let be evicted in status.disruptedPods until it sees that pod
// deleted. When it misses the deletion (its watch broke while kube-apiserver restarted, say), the pod that
// replaced it under the same name stays listed, counted as unavailable, until two minutes after the eviction
// (the controller's DeletionTimeout): every member is Ready, and the next eviction of a rolling update is
// still refused. That wait ends by itself, so the operator retries it; this says why it waits.
import type { PodObject } from './observe-members.ts';

/** The disruption controller's DeletionTimeout (pkg/controller/disruption): how long a listed pod counts. */
export const DISRUPTED_POD_TIMEOUT_MS = 120_000;

/** What is read of a PodDisruptionBudget (the cache's CachedPDB is one): status.disruptedPods, pod name → eviction time. */
export interface BudgetStatus {
  status?: { disruptedPods?: Record<string, string> };
}

function disruptedPods(pdb: BudgetStatus | undefined): [string, string][] {
  return Object.entries(pdb?.status?.disruptedPods ?? {});
}

/**
 * The pods the budget still counts as evicted although they have been made again since (a creation after the
 * eviction time), with when Kubernetes stops counting each; undefined when there are none.
 */
export function staleDisruptions(pdb: BudgetStatus | undefined, pods: readonly PodObject[]): string | undefined {
  const listed = disruptedPods(pdb);
  const stale = listed.filter(([name, evictedAt]) => {
    const pod = pods.find((p) => p.metadata.name === name);
    const created = Date.parse(pod?.metadata.creationTimestamp ?? '');
    return pod !== undefined && !pod.metadata.deletionTimestamp && created >= Date.parse(evictedAt);
  });
  if (stale.length === 0) return undefined;
  const until = (evictedAt: string): string => new Date(Date.parse(evictedAt) + DISRUPTED_POD_TIMEOUT_MS).toISOString();
  return `Kubernetes still counts ${stale.map(([name, at]) => `${name} (evicted at ${at}, made again since; counted until ${until(at)})`).join(', ')} as disrupted: its disruption controller missed the old pod's deletion (as after a kube-apiserver restart) and keeps such a pod listed for 2 min`;
}
