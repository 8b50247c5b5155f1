// The cluster-wide objects beside the members: the headless peer Service, the client Service, from three
// members the PodDisruptionBudget, and unless spec.network.policy is false the NetworkPolicy; applied
// (server-side) only when they differ from what the cache holds.
import { applyIfChanged, NetworkPolicies, NotFoundError, PodDisruptionBudgets, Services, type KubeObject, type ResourceType } from '@quorum/runtime';
import { DEFAULT_METRICS_NAMESPACES, DEFAULT_OPERATOR_NAMESPACE } from '../deploy/constants.ts';
import type { ReconcilerDeps } from './deps.ts';
import { clientServiceName, FIELD_MANAGER, networkPolicyName, pdbName, peerServiceName } from '../names.ts';
import { clientService, networkPolicy, peerService, podDisruptionBudget, type NetworkPolicyOptions } from './resources.ts';
import type { DefaultedSpec, EtcdCluster } from './spec.ts';

/** Without configuration (a reconciler in a test): the defaults of the operator's own configuration (config.ts). */
export const DEFAULT_NETWORK_POLICY_OPTIONS: NetworkPolicyOptions = { operatorNamespace: DEFAULT_OPERATOR_NAMESPACE, metricsNamespaces: DEFAULT_METRICS_NAMESPACES };

/** The Services, the PDB and the NetworkPolicy, applied whenever they differ from what the cache holds. Paused skips them too. */
export async function applyClusterObjects(deps: ReconcilerDeps, cluster: EtcdCluster, spec: DefaultedSpec, signal: AbortSignal): Promise<void> {
  const namespace = cluster.metadata.namespace!;
  const name = cluster.metadata.name!;
  const apply = async (type: ResourceType<KubeObject>, desired: KubeObject, cached: KubeObject | undefined): Promise<void> => {
    const { applied } = await applyIfChanged(deps.client, type, desired, cached, { fieldManager: FIELD_MANAGER, force: true, signal });
    if (applied) await deps.afterWrite?.(`apply ${desired.kind} ${desired.metadata.name}`);
  };
  await apply(Services, peerService(cluster), deps.services.store.get(`${namespace}/${peerServiceName(name)}`));
  await apply(Services, clientService(cluster), deps.services.store.get(`${namespace}/${clientServiceName(name)}`));
  const pdb = deps.pdbs.store.get(`${namespace}/${pdbName(name)}`);
  if (spec.replicas >= 3) await apply(PodDisruptionBudgets, podDisruptionBudget(cluster), pdb);
  else if (pdb) await deps.client.delete(PodDisruptionBudgets, { namespace, name: pdbName(name) }).catch(ignoreNotFound);
  const policy = deps.networkPolicies.store.get(`${namespace}/${networkPolicyName(name)}`);
  if (spec.network?.policy !== false) await apply(NetworkPolicies, networkPolicy(cluster, spec, deps.network ?? DEFAULT_NETWORK_POLICY_OPTIONS), policy);
  // Only the operator's own (the cache holds objects labelled managed-by=quorum, owned by this cluster): a
  // policy of the user's at that name is theirs to keep.
  else if (policy?.metadata.ownerReferences?.some((r) => r.uid === cluster.metadata.uid)) await deps.client.delete(NetworkPolicies, { namespace, name: networkPolicyName(name) }).catch(ignoreNotFound);
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof NotFoundError)) throw err;
}
