// Writing an object's status through `/status`: the whole new status, with every field the old one had and
// the new one lacks removed (nested ones too), and no write at all when nothing changed.
//
// Why a JSON merge patch with explicit nulls, computed from the status the reconcile read (the cache's) and the
// one it built, and not the alternatives:
// - A plain merge patch (RFC 7386) merges objects key by key: a key left out is kept, so a `step` or a
//   `rollout` record that replaces another would keep the old one's keys. Explicit nulls remove them.
// - Server-side apply on `/status` removes only fields its manager owned *through Apply*: every status these
//   operators wrote so far is owned through Update (merge patches), so the first apply after an upgrade would
//   leave exactly the stale fields this is meant to remove; and a CRD's `conditions` list without
//   `x-kubernetes-list-type: map` is atomic, so two writers would fight over it.
// - A JSON patch `remove` of a path the server no longer has is refused (422): a reconcile reading a cache
//   one write behind would fail instead of converging; replacing `/status` whole would also drop fields other
//   writers own.
// A cache one write behind is harmless here: the patch carries the whole new status, and a field the cache
// does not show yet but the server has is seen (and nulled) by the next reconcile, once the watch delivers it.
import type { WriteOptions } from '../client/client.ts';
import type { ResourceType } from '../client/resources.ts';
import { deepEqual, isPlainObject } from '../crd/schema.ts';
import type { KubeObject, ObjectKey } from '../object.ts';
import { conditionsEqual, type Condition } from './conditions.ts';

/** A status as JSON: undefined values count as absent, as they do once serialised. */
export type StatusObject = object;

/**
 * Whether writing `next` over `previous` would change nothing. Key order does not matter; `conditions`
 * compare as conditionsEqual does (any order, times as instants, a missing observedGeneration as 0), so a
 * status rebuilt from the same facts is not written again.
 */
export function sameStatus(previous: StatusObject | undefined, next: StatusObject): boolean {
  const before = defined(previous ?? {});
  const after = defined(next);
  const { conditions: cb, ...restBefore } = before;
  const { conditions: ca, ...restAfter } = after;
  return conditionsEqual(cb as Condition[] | undefined, ca as Condition[] | undefined) && deepEqual(restBefore, restAfter);
}

/**
 * The merge patch that turns `previous` into `next`: all of `next`, and null for every key `previous` has and
 * `next` lacks, in nested objects too (arrays are replaced whole by a merge patch, so they are not descended).
 */
export function statusMergePatch(previous: StatusObject | undefined, next: StatusObject): Record<string, unknown> {
  return replacing(defined(previous ?? {}), defined(next));
}

function replacing(before: Record<string, unknown>, after: Record<string, unknown>): Record<string, unknown> {
  const patch: Record<string, unknown> = {};
  for (const key of Object.keys(before)) if (!(key in after)) patch[key] = null;
  for (const [key, value] of Object.entries(after)) {
    const old = before[key];
    patch[key] = isPlainObject(value) && isPlainObject(old) ? replacing(old, value) : value;
  }
  return patch;
}

/** The object with its undefined values dropped, at every depth (what JSON.stringify would send). */
function defined(value: StatusObject): Record<string, unknown> {
  return JSON.parse(JSON.stringify(value)) as Record<string, unknown>;
}

/** RFC 7386 applied to a JSON value: what the API server makes of a merge patch (for fakes and tests). */
export function applyMergePatch(target: unknown, patch: unknown): unknown {
  if (!isPlainObject(patch)) return patch;
  const result: Record<string, unknown> = isPlainObject(target) ? { ...target } : {};
  for (const [key, value] of Object.entries(patch)) {
    if (value === null) delete result[key];
    else result[key] = applyMergePatch(result[key], value);
  }
  return result;
}

/** The one call writeStatus makes; a Client is one. */
export interface StatusPatchClient {
  mergePatch<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, patch: unknown, options: WriteOptions & { subresource?: string }): Promise<unknown>;
}

export interface WriteStatusOptions extends Omit<WriteOptions, 'dryRun'> {
  fieldManager: string;
}

/**
 * Writes `next` as the status of the object at `key`, given the status the reconcile read (`previous`):
 * nothing when they are the same, else one merge patch to `/status` that removes what `next` lacks.
 * Resolves to whether it wrote.
 */
export async function writeStatus<T extends KubeObject>(
  client: StatusPatchClient,
  type: ResourceType<T>,
  key: ObjectKey,
  previous: StatusObject | undefined,
  next: StatusObject,
  options: WriteStatusOptions,
): Promise<boolean> {
  if (sameStatus(previous, next)) return false;
  await client.mergePatch(type, key, { status: statusMergePatch(previous, next) }, { ...options, subresource: 'status' });
  return true;
}
