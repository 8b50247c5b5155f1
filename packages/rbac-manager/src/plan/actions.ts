// From what a definition asks for and what exists, the writes that close the gap. Pure.
//
// An object the cache does not hold as this definition's is created (POST), never applied: an apply would
// overwrite an object of the same name that someone else made. When the create finds the name taken,
// `classifyExisting` says whether the holder is ours after all (the cache lagged), FairwindsOps' object for
// the definition of the same name (adopted: the import's path), or someone else's (left alone, reported).
import { needsApply, type OpenObject } from '@quorum/runtime';
import { keyOfDesired, objectKey, type DesiredObject, type DesiredState, type ObjectKind } from './desired.ts';
import { BINDING_LABEL, madeByFairwinds, MANAGED_PULL_SECRETS_ANNOTATION, ownedBy } from './names.ts';

export type DeleteReason = 'Revoked' | 'Expired';

export type Action =
  /** Not in the cache as ours: POST it. */
  | { type: 'create'; desired: DesiredObject }
  /**
   * Ours and different from the definition (edited by hand, or the definition changed): apply it, after a merge
   * patch removing `remove` (what a ServiceAccount carries that the definition no longer sets: an apply that
   * omits a field leaves it when another field manager set it, and a merge patch removes it whoever did).
   */
  | { type: 'update'; desired: DesiredObject; remove?: ServiceAccountRemoval }
  /** Ours but bound to another role: roleRef is immutable, so delete and create. */
  | { type: 'recreate'; desired: DesiredObject }
  /** Ours and no longer asked for. */
  | { type: 'delete'; kind: ObjectKind; namespace?: string; name: string; reason: DeleteReason; binding?: string };

export type Existing = 'ours' | 'adopt' | 'taken';

/** Who holds a name a create found taken. */
export function classifyExisting(existing: OpenObject, definition: { name: string; uid: string }): Existing {
  if (ownedBy(existing, definition.uid)) return 'ours';
  if (madeByFairwinds(existing, definition.name)) return 'adopt';
  return 'taken';
}

/** `owned`: the objects whose owner reference names this definition's uid, by objectKey. */
export function planActions(desired: DesiredState, owned: ReadonlyMap<string, OpenObject>): Action[] {
  const actions: Action[] = [];
  const wanted = new Set<string>();
  for (const d of desired.objects) {
    const key = keyOfDesired(d);
    wanted.add(key);
    const observed = owned.get(key);
    if (!observed) actions.push({ type: 'create', desired: d });
    else if (roleRefChanged(d.object, observed)) actions.push({ type: 'recreate', desired: d });
    else {
      const remove = d.kind === 'ServiceAccount' ? serviceAccountLeftovers(d.object, observed) : undefined;
      if (remove) actions.push({ type: 'update', desired: d, remove });
      else if (needsApply(d.object, observed)) actions.push({ type: 'update', desired: d });
    }
  }
  const expiredBindings = new Set(desired.bindings.filter((b) => b.window.state === 'Expired').map((b) => b.name));
  for (const [key, observed] of owned) {
    if (wanted.has(key)) continue;
    const kind = observed.kind as ObjectKind;
    const { namespace, name = '' } = observed.metadata;
    const binding = observed.metadata.labels?.[BINDING_LABEL];
    const expired = kind === 'ServiceAccount' ? desired.expiredServiceAccounts.has(`${namespace ?? ''}/${name}`) : binding !== undefined && expiredBindings.has(binding);
    actions.push({ type: 'delete', kind, ...(namespace ? { namespace } : {}), name, reason: expired ? 'Expired' : 'Revoked', ...(binding ? { binding } : {}) });
  }
  return actions;
}

export interface ServiceAccountRemoval {
  metadata?: { annotations: Record<string, null> };
  imagePullSecrets?: null;
  automountServiceAccountToken?: null;
}

/** The pull secrets, automount setting and pull-secrets annotation a ServiceAccount of ours has and should not. */
export function serviceAccountLeftovers(desired: OpenObject, observed: OpenObject): ServiceAccountRemoval | undefined {
  const remove: ServiceAccountRemoval = {};
  const has = (o: OpenObject, key: string): boolean => o[key] !== undefined && !(Array.isArray(o[key]) && o[key].length === 0);
  if (has(observed, 'imagePullSecrets') && !has(desired, 'imagePullSecrets')) remove.imagePullSecrets = null;
  if (has(observed, 'automountServiceAccountToken') && !has(desired, 'automountServiceAccountToken')) remove.automountServiceAccountToken = null;
  const annotated = (o: OpenObject): boolean => o.metadata.annotations?.[MANAGED_PULL_SECRETS_ANNOTATION] !== undefined;
  if (annotated(observed) && !annotated(desired)) remove.metadata = { annotations: { [MANAGED_PULL_SECRETS_ANNOTATION]: null } };
  return Object.keys(remove).length > 0 ? remove : undefined;
}

function roleRefChanged(desired: OpenObject, observed: OpenObject): boolean {
  const want = desired['roleRef'] as { kind: string; name: string } | undefined;
  const have = observed['roleRef'] as { kind: string; name: string } | undefined;
  return want !== undefined && have !== undefined && (want.kind !== have.kind || want.name !== have.name);
}

/** The owned map from cached objects: those of this definition, keyed as the planner keys them. */
export function ownedObjects(objects: Iterable<OpenObject>, definitionUid: string): Map<string, OpenObject> {
  const owned = new Map<string, OpenObject>();
  for (const obj of objects) if (ownedBy(obj, definitionUid)) owned.set(objectKey(obj.kind as ObjectKind, obj.metadata.namespace, obj.metadata.name ?? ''), obj);
  return owned;
}
