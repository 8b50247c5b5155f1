// Where a group/kind lives in the API, for the recorder: the runtime's discovery client, asked for kinds that
// can be listed and watched (what an informer needs). What the recorder keeps of each kind is the part it
// watches and reports in status.
import { DiscoveryClient, groupKindString, type DiscoveredKind, type DiscoveryTransport, type GroupKind, type MissingKind, type UnavailableKind } from '@quorum/runtime';

/** A kind the recorder can watch: its served version, resource (plural), scope and ResourceType. */
export type ResolvedKind = Pick<DiscoveredKind, 'group' | 'kind' | 'version' | 'resource' | 'namespaced' | 'type'>;

export interface Resolution {
  found: ResolvedKind[];
  /** Kinds the API server does not serve (or not with list and watch), each with why. */
  missing: MissingKind[];
  /** Kinds whose discovery documents could not be read: neither found nor known to be missing. */
  unavailable: UnavailableKind[];
}

/** `ConfigMap`, `Deployment.apps`: how kubectl names a kind with its group. */
export function groupKindName(kind: GroupKind): string {
  return groupKindString(kind);
}

/** The verbs an informer needs. */
export const WATCH_VERBS: readonly string[] = ['list', 'watch'];

/** Resolves kinds to the resources the recorder can list and watch (the group's preferred version first). */
export async function resolveKinds(client: DiscoveryTransport, kinds: readonly GroupKind[], signal?: AbortSignal): Promise<Resolution> {
  return new DiscoveryClient(client).resolveKinds(kinds, { verbs: WATCH_VERBS, ...(signal ? { signal } : {}) });
}
