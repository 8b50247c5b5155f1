// Finding where a group/kind lives in the API: its served version, its resource (plural) and its scope,
// through the API server's discovery documents. @quorum/runtime has no discovery client (ResourceTypes are
// declared by hand), so this is the recorder's own, and reported as a runtime gap.
import { resource, type Client, type OpenObject, type ResourceType } from '@quorum/runtime';
import type { GroupKind } from '../api/changerecorder.ts';

export interface ResolvedKind extends GroupKind {
  version: string;
  /** The resource name (plural), e.g. deployments. */
  resource: string;
  namespaced: boolean;
  type: ResourceType<OpenObject>;
}

export interface Resolution {
  found: ResolvedKind[];
  /** Kinds no served version of their group has (or whose group is not served at all). */
  missing: GroupKind[];
}

interface APIResource {
  name: string;
  kind: string;
  namespaced: boolean;
  verbs?: string[];
}

interface APIResourceList {
  groupVersion: string;
  resources: APIResource[];
}

interface APIGroupList {
  groups: { name: string; versions: { groupVersion: string; version: string }[]; preferredVersion?: { groupVersion: string; version: string } }[];
}

/** `ConfigMap`, `Deployment.apps`: how kubectl names a kind with its group. */
export function groupKindName({ group, kind }: GroupKind): string {
  return group ? `${kind}.${group}` : kind;
}

export type DiscoveryClient = Pick<Client, 'request'>;

/**
 * Resolves kinds to the resources the recorder can list and watch, preferring each group's preferred
 * version and falling back to its other versions (a kind may exist only in an older one).
 */
export async function resolveKinds(client: DiscoveryClient, kinds: readonly GroupKind[], signal?: AbortSignal): Promise<Resolution> {
  const found: ResolvedKind[] = [];
  const missing: GroupKind[] = [];
  const wantedGroups = new Set(kinds.map((k) => k.group));
  const versionsOf = new Map<string, string[]>();
  if (wantedGroups.has('')) versionsOf.set('', ['v1']);
  if ([...wantedGroups].some((g) => g !== '')) {
    const list = await client.request<APIGroupList>('GET', '/apis', undefined, { signal });
    for (const group of list.groups) {
      if (!wantedGroups.has(group.name)) continue;
      const preferred = group.preferredVersion?.groupVersion;
      const all = group.versions.map((v) => v.groupVersion);
      versionsOf.set(group.name, preferred ? [preferred, ...all.filter((v) => v !== preferred)] : all);
    }
  }
  const resourcesOf = new Map<string, APIResource[]>();
  const resources = async (groupVersion: string): Promise<APIResource[]> => {
    let list = resourcesOf.get(groupVersion);
    if (!list) {
      const path = groupVersion === 'v1' ? '/api/v1' : `/apis/${groupVersion}`;
      list = (await client.request<APIResourceList>('GET', path, undefined, { signal })).resources;
      resourcesOf.set(groupVersion, list);
    }
    return list;
  };
  for (const wanted of kinds) {
    let resolved: ResolvedKind | undefined;
    for (const groupVersion of versionsOf.get(wanted.group) ?? []) {
      // Subresources (deployments/scale) carry their parent's kind too; only the resource itself is watched.
      const match = (await resources(groupVersion)).find((r) => r.kind === wanted.kind && !r.name.includes('/') && watchable(r));
      if (!match) continue;
      const version = groupVersion.includes('/') ? groupVersion.slice(groupVersion.indexOf('/') + 1) : groupVersion;
      resolved = { ...wanted, version, resource: match.name, namespaced: match.namespaced, type: resource<OpenObject>(groupVersion, wanted.kind, match.name, match.namespaced) };
      break;
    }
    if (resolved) found.push(resolved);
    else missing.push(wanted);
  }
  return { found, missing };
}

function watchable(r: APIResource): boolean {
  return r.verbs === undefined || (r.verbs.includes('list') && r.verbs.includes('watch'));
}
