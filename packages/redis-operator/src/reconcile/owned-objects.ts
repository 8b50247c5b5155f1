// Objects a Redis keeps beside the planner's one step (its NetworkPolicy, its PodDisruptionBudgets): made when
// missing (as on an upgrade that brings a new kind of them), applied when they differ, deleted when the spec no
// longer asks for them. Only one this Redis controls (its controlling owner reference) is changed or deleted: one
// of someone else's at that name is left alone and reported.
import { AlreadyExistsError, applyIfChanged, isControlledBy, NotFoundError, type KubeObject, type ResourceType } from '@quorum/runtime';
import { KIND } from '../api/redis.ts';
import { FIELD_MANAGER, type ReconcilerDeps } from './deps.ts';

/** What was done (for the Normal event), an object of someone else's in the way, or nothing. */
export type KeepOutcome = { done: string } | { conflict: string } | undefined;

export interface OwnedObject<T extends KubeObject> {
  type: ResourceType<T>;
  namespace: string;
  name: string;
  /** The Redis's uid: whose controlling owner reference makes the object its own. */
  owner: string;
  /** What the spec asks for; undefined: none (one of the Redis's own is deleted). */
  desired: T | undefined;
  /** The cache's copy (the cache holds the operator's own labels only: another at the name is found by the create). */
  cached: T | undefined;
  /** The words of each outcome. */
  said: { created: string; updated: string; deleted: string; conflict: string };
}

export async function keepOwned<T extends KubeObject>(deps: Pick<ReconcilerDeps, 'client'>, o: OwnedObject<T>, signal: AbortSignal): Promise<KeepOutcome> {
  const owner = { kind: KIND, metadata: { uid: o.owner } };
  const key = { namespace: o.namespace, name: o.name };
  if (o.desired === undefined) {
    if (o.cached === undefined || !isControlledBy(o.cached, owner)) return undefined;
    await deps.client.delete(o.type, key, { signal }).catch(ignoreNotFound);
    return { done: o.said.deleted };
  }
  let current = o.cached;
  if (current === undefined) {
    try {
      await deps.client.create(o.type, o.desired, { fieldManager: FIELD_MANAGER, signal });
      return { done: o.said.created };
    } catch (err) {
      if (!(err instanceof AlreadyExistsError)) throw err;
      current = await deps.client.get(o.type, key, { signal });
    }
  }
  if (!isControlledBy(current, owner)) return { conflict: o.said.conflict };
  const { applied } = await applyIfChanged(deps.client, o.type, o.desired, current, { fieldManager: FIELD_MANAGER, force: true, signal });
  return applied ? { done: o.said.updated } : undefined;
}

function ignoreNotFound(err: unknown): void {
  if (!(err instanceof NotFoundError)) throw err;
}
