// The cluster-wide objects beside the members: the headless peer Service, the client Service and, from three
// members, the PodDisruptionBudget; applied (server-side) only when they differ from what the cache holds.
import { applyIfChanged, NotFoundError, PodDisruptionBudgets, Services, type KubeObject, type ResourceType } from '@quorum/runtime';
import type { ReconcilerDeps } from './deps.ts';
import { clientServiceName, FIELD_MANAGER, pdbName, peerServiceName } from '../names.ts';
import { clientService, peerService, podDisruptionBudget } from './resources.ts';
import type { EtcdCluster } from './spec.ts';

/** The Services and the PDB, applied whenever they differ from what the cache holds. Paused skips them too. */
export async function applyClusterObjects(deps: ReconcilerDeps, cluster: EtcdCluster, replicas: number, signal: AbortSignal): Promise<void> {
  const namespace = cluster.metadata.namespace!;
  const name = cluster.metadata.name!;
  const apply = async (type: ResourceType<KubeObject>, desired: KubeObject, cached: KubeObject | undefined): Promise<void> => {
    const { applied } = await applyIfChanged(deps.client, type, desired, cached, { fieldManager: FIELD_MANAGER, force: true, signal });
    if (applied) await deps.afterWrite?.(`apply ${desired.kind} ${desired.metadata.name}`);
  };
  await apply(Services, peerService(cluster), deps.services.store.get(`${namespace}/${peerServiceName(name)}`));
  await apply(Services, clientService(cluster), deps.services.store.get(`${namespace}/${clientServiceName(name)}`));
  const pdb = deps.pdbs.store.get(`${namespace}/${pdbName(name)}`);
  if (replicas >= 3) await apply(PodDisruptionBudgets, podDisruptionBudget(cluster), pdb);
  else if (pdb) await deps.client.delete(PodDisruptionBudgets, { namespace, name: pdbName(name) }).catch(ignoreNotFound);
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof NotFoundError)) throw err;
}
