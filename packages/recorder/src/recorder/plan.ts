// What to watch, from the spec and what the cluster has: pure, so it is tested without an API server.
import type { ChangeRecorder, NamespacesSpec } from '../api/changerecorder.ts';
import type { ResolvedKind } from './discovery.ts';
import type { WatchTarget } from './kind-watch.ts';

/**
 * One watch per kind and namespace when the spec names namespaces (or a selector picks them), one per kind
 * across all namespaces otherwise; cluster-scoped kinds are always watched whole. `selected` is what the
 * selector picks now (undefined until known: the namespaced kinds wait).
 */
export function planTargets(kinds: readonly ResolvedKind[], namespaces: NamespacesSpec, selected: readonly string[] | undefined): WatchTarget[] {
  const targets: WatchTarget[] = [];
  for (const kind of kinds) {
    if (!kind.namespaced || namespaces.all === true) {
      targets.push({ kind });
      continue;
    }
    for (const namespace of namespaces.names ?? selected ?? []) targets.push({ kind, namespace });
  }
  return targets;
}

/** Whether two storage paths would mix their records: the same directory, or one inside the other. */
export function pathsOverlap(a: string, b: string): boolean {
  return a === b || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/**
 * The recorder that keeps a storage path when several ask for overlapping ones: the oldest (by creation
 * time, then name), so a new recorder can never take over an existing one's records. Returns the rival that
 * `recorder` must yield to, if any.
 */
export function storageRival(recorder: ChangeRecorder, path: string, others: readonly { recorder: ChangeRecorder; path: string }[]): ChangeRecorder | undefined {
  const rank = (r: ChangeRecorder): [number, string] => [Date.parse(r.metadata.creationTimestamp ?? '') || 0, r.metadata.name ?? ''];
  const [time, name] = rank(recorder);
  return others.find(({ recorder: other, path: otherPath }) => {
    if (other.metadata.name === recorder.metadata.name || other.metadata.deletionTimestamp || !pathsOverlap(path, otherPath)) return false;
    const [t, n] = rank(other);
    return t < time || (t === time && n < name);
  })?.recorder;
}
