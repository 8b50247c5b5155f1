// Finalizer edits that cannot clobber another writer: each JSON patch first tests metadata.resourceVersion,
// so if the object changed since `obj` was read the server rejects the patch (ConflictError or InvalidError,
// depending on the server) instead of writing a finalizer list built from a stale view. Callers re-read and
// retry, usually by requeueing the reconcile.
import type { Client, JsonPatchOp } from '../client/client.ts';
import type { ResourceType } from '../client/resources.ts';
import type { KubeObject } from '../object.ts';

/** The one client method these helpers use, so tests can pass a fake. */
export type FinalizerClient = Pick<Client, 'jsonPatch'>;

export function hasFinalizer(obj: KubeObject, finalizer: string): boolean {
  return obj.metadata.finalizers?.includes(finalizer) ?? false;
}

/**
 * Adds `finalizer` and resolves with the updated object, or with `obj` itself (no request) if it is already
 * there. Throws for an object being deleted: the API forbids new finalizers then.
 */
export async function addFinalizer<T extends KubeObject>(client: FinalizerClient, type: ResourceType<T>, obj: T, finalizer: string): Promise<T> {
  if (hasFinalizer(obj, finalizer)) return obj;
  if (obj.metadata.deletionTimestamp) throw new Error(`${describe(type, obj)}: cannot add finalizer ${finalizer} to an object being deleted`);
  const finalizers = obj.metadata.finalizers ?? [];
  // The server omits an empty list, so `/finalizers/-` would have no array to append to.
  const add: JsonPatchOp =
    finalizers.length === 0 ? { op: 'add', path: '/metadata/finalizers', value: [finalizer] } : { op: 'add', path: '/metadata/finalizers/-', value: finalizer };
  return client.jsonPatch(type, keyFor(type, obj), [guard(type, obj), add]);
}

/** Removes every occurrence of `finalizer`; resolves with the updated object, or `obj` (no request) if absent. */
export async function removeFinalizer<T extends KubeObject>(client: FinalizerClient, type: ResourceType<T>, obj: T, finalizer: string): Promise<T> {
  const finalizers = obj.metadata.finalizers ?? [];
  const indexes = finalizers.flatMap((f, i) => (f === finalizer ? [i] : []));
  if (indexes.length === 0) return obj;
  const ops: JsonPatchOp[] = [guard(type, obj)];
  // Highest index first, so each removal leaves the earlier indexes valid.
  for (const i of indexes.reverse()) {
    const path = `/metadata/finalizers/${i}`;
    ops.push({ op: 'test', path, value: finalizer }, { op: 'remove', path });
  }
  return client.jsonPatch(type, keyFor(type, obj), ops);
}

function guard(type: ResourceType, obj: KubeObject): JsonPatchOp {
  const resourceVersion = obj.metadata.resourceVersion;
  if (!resourceVersion) throw new Error(`${describe(type, obj)}: no metadata.resourceVersion, so a finalizer edit cannot be guarded against concurrent writers`);
  return { op: 'test', path: '/metadata/resourceVersion', value: resourceVersion };
}

function keyFor(type: ResourceType, obj: KubeObject): { namespace: string; name: string } {
  if (!obj.metadata.name) throw new Error(`${type.kind}: a finalizer edit needs metadata.name`);
  return { namespace: obj.metadata.namespace ?? '', name: obj.metadata.name };
}

function describe(type: ResourceType, obj: KubeObject): string {
  const { namespace, name } = obj.metadata;
  return `${type.kind} ${namespace ? `${namespace}/` : ''}${name ?? '(unnamed)'}`;
}
