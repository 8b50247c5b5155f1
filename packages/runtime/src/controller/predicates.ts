// Predicates filter events before they enqueue anything. They see the event only to decide whether to
// enqueue; the reconcile never sees it (level-based: it reads the current state instead).
import type { KubeObject } from '../object.ts';

export type ObjectEvent<T extends KubeObject = KubeObject> =
  | { type: 'create'; object: T }
  | { type: 'update'; object: T; oldObject: T }
  | { type: 'delete'; object: T };

export type Predicate<T extends KubeObject = KubeObject> = (event: ObjectEvent<T>) => boolean;

/** Updates pass only when metadata.generation changed (spec edits); creates and deletes always pass. */
export const generationChanged: Predicate = (e) => e.type !== 'update' || e.object.metadata.generation !== e.oldObject.metadata.generation;

/** Updates pass only when the resourceVersion changed: drops the informer's periodic resync replays. */
export const resourceVersionChanged: Predicate = (e) => e.type !== 'update' || e.object.metadata.resourceVersion !== e.oldObject.metadata.resourceVersion;

export const labelsChanged: Predicate = (e) => e.type !== 'update' || !sameRecord(e.object.metadata.labels, e.oldObject.metadata.labels);

export const annotationsChanged: Predicate = (e) => e.type !== 'update' || !sameRecord(e.object.metadata.annotations, e.oldObject.metadata.annotations);

/** Passes objects whose labels include every `selector` pair. */
export function hasLabels(selector: Record<string, string>): Predicate {
  return (e) => Object.entries(selector).every(([k, v]) => e.object.metadata.labels?.[k] === v);
}

export function or<T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return (e) => predicates.some((p) => p(e));
}

export function and<T extends KubeObject>(...predicates: Predicate<T>[]): Predicate<T> {
  return (e) => predicates.every((p) => p(e));
}

function sameRecord(a: Record<string, string> | undefined, b: Record<string, string> | undefined): boolean {
  const ka = Object.keys(a ?? {});
  if (ka.length !== Object.keys(b ?? {}).length) return false;
  return ka.every((k) => a?.[k] === b?.[k]);
}
