// Owner references, with controller-runtime's rules: an object has at most one controller, and an owner
// must be cluster-scoped or in the object's own namespace (the garbage collector ignores anything else).
import { groupOf } from '../client/resources.ts';
import type { KubeObject, OwnerReference } from '../object.ts';

/** Thrown by setControllerReference when another object already controls the object. */
export class AlreadyOwnedError extends Error {
  readonly controller: OwnerReference;
  constructor(message: string, controller: OwnerReference) {
    super(message);
    this.name = 'AlreadyOwnedError';
    this.controller = controller;
  }
}

/**
 * A copy of `object` whose controller is `owner` (controller and blockOwnerDeletion set). A reference to the
 * same owner (same API group, kind and name) is replaced in place, so a re-created owner's new uid is taken.
 */
export function setControllerReference<T extends KubeObject>(owner: KubeObject, object: T): T {
  const { apiVersion, kind } = owner;
  const { name, uid, namespace: ownerNamespace } = owner.metadata;
  if (!apiVersion || !kind || !name || !uid) {
    throw new Error(`owner ${kind ?? '(no kind)'} ${name ?? '(no name)'} needs apiVersion, kind, metadata.name and metadata.uid: use the object as read from the server`);
  }
  const objectNamespace = object.metadata.namespace ?? '';
  if (ownerNamespace && ownerNamespace !== objectNamespace) {
    throw new Error(
      objectNamespace
        ? `${describe(object)}: an owner in namespace ${ownerNamespace} cannot own an object in namespace ${objectNamespace}`
        : `${describe(object)}: a cluster-scoped object cannot have a namespaced owner (${kind} ${ownerNamespace}/${name})`,
    );
  }
  const reference: OwnerReference = { apiVersion, kind, name, uid, controller: true, blockOwnerDeletion: true };
  const current = getControllerOf(object);
  if (current && !sameObject(current, reference)) {
    throw new AlreadyOwnedError(`${describe(object)} is already controlled by ${current.kind} ${current.name} (${current.uid})`, current);
  }
  const references = object.metadata.ownerReferences ?? [];
  const index = references.findIndex((r) => sameObject(r, reference));
  const ownerReferences = index < 0 ? [...references, reference] : references.map((r, i) => (i === index ? reference : r));
  return { ...object, metadata: { ...object.metadata, ownerReferences } };
}

/** The reference to the object's controller, if it has one. */
export function getControllerOf(obj: KubeObject): OwnerReference | undefined {
  return obj.metadata.ownerReferences?.find((r) => r.controller === true);
}

/**
 * Whether `owner` controls `obj`: its controlling owner reference carries `owner`'s uid (and kind, when `owner`
 * has one). An object found by a predictable name may be anyone's: only one this holds for may be used, adopted,
 * read for results or deleted on the owner's behalf. Never by name or labels, which anyone may copy.
 */
export function isControlledBy(obj: KubeObject, owner: Pick<KubeObject, 'kind' | 'metadata'>): boolean {
  const uid = owner.metadata.uid;
  const controller = getControllerOf(obj);
  return !!uid && controller?.uid === uid && (owner.kind === undefined || controller.kind === owner.kind);
}

/** Whether any owner reference of `obj` (controller or not) names `owner`'s uid. */
export function isOwnedBy(obj: KubeObject, owner: KubeObject): boolean {
  const uid = owner.metadata.uid;
  return !!uid && (obj.metadata.ownerReferences?.some((r) => r.uid === uid) ?? false);
}

// controller-runtime's referSameObject: the version may differ, the group may not.
function sameObject(a: OwnerReference, b: OwnerReference): boolean {
  return groupOf(a.apiVersion) === groupOf(b.apiVersion) && a.kind === b.kind && a.name === b.name;
}

function describe(obj: KubeObject): string {
  const { namespace, name, generateName } = obj.metadata;
  return `${obj.kind ?? 'object'} ${namespace ? `${namespace}/` : ''}${name ?? `${generateName ?? ''}(unnamed)`}`;
}
