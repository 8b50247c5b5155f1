// What the planner needs from the caches: the namespaces with their labels, which roles exist, and the
// objects this definition owns.
import { OWNER_UID_INDEX, type Informer, type OpenObject } from '@quorum/runtime';
import { ownedObjects } from '../plan/actions.ts';
import type { World } from '../plan/desired.ts';

export interface Caches {
  namespaces: Informer<OpenObject>;
  clusterRoles: Informer<OpenObject>;
  roles: Informer<OpenObject>;
  /** The objects the manager made (its managed-by label), one informer per kind. */
  made: readonly Informer<OpenObject>[];
}

export function worldOf(caches: Caches): World {
  const namespaces = new Map(
    caches.namespaces.store.list().map((ns) => [ns.metadata.name ?? '', { labels: ns.metadata.labels ?? {}, terminating: ns.metadata.deletionTimestamp !== undefined }]),
  );
  return {
    namespaces,
    clusterRoleExists: (name) => caches.clusterRoles.store.get(name) !== undefined,
    roleExists: (namespace, name) => caches.roles.store.get(`${namespace}/${name}`) !== undefined,
  };
}

export function ownedFromCaches(caches: Caches, definitionUid: string): Map<string, OpenObject> {
  return ownedObjects(caches.made.flatMap((informer) => informer.store.byIndex(OWNER_UID_INDEX, definitionUid)), definitionUid);
}
