// What every peer's members share with Quorum's defaults, so that the peers differ only in how they manage
// etcd: the same requests, the same volume size on the default StorageClass, the same preferred spreading.
import type { V1Affinity, V1ResourceRequirements } from '@kubernetes/client-node';
import { DEFAULT_STORAGE_SIZE } from '../../src/api/etcdcluster.ts';
import { DEFAULT_ETCD_RESOURCES } from '../../src/cluster/resources.ts';

export const PEER_RESOURCES: V1ResourceRequirements = structuredClone(DEFAULT_ETCD_RESOURCES);
export const PEER_STORAGE_SIZE = DEFAULT_STORAGE_SIZE;

/** Quorum's default `antiAffinity: Preferred`: one member per node when the nodes allow it. */
export function preferredAntiAffinity(matchLabels: Record<string, string>): V1Affinity {
  return { podAntiAffinity: { preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels }, topologyKey: 'kubernetes.io/hostname' } }] } };
}

export { labelSelector as selectorOf } from '../../src/names.ts';
