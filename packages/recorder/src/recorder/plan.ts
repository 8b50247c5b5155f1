// What to watch, from the spec and what the cluster has: pure, so it is tested without an API server.
import type { MissingKind, UnavailableKind } from '@quorum/runtime';
import { DEFAULT_RESOURCES, OPTIONAL_DEFAULT_RESOURCES, type ChangeRecorder, type GroupKind, type NamespacesSpec } from '../api/changerecorder.ts';
import type { DefaultedSpec } from '../api/defaults.ts';
import { targetsOverlap, type StorageTarget } from '../store/target.ts';
import type { Resolution, ResolvedKind } from './discovery.ts';
import type { WatchTarget } from './kind-watch.ts';

/** The kinds a spec asks for: those it must have, and those it takes only where the API server serves them. */
export interface KindRequest {
  required: GroupKind[];
  optional: GroupKind[];
}

/** spec.resources when set (every kind required); else the default kinds, Quorum's own ones optional. */
export function requestedKinds(spec: Pick<DefaultedSpec, 'resources'>): KindRequest {
  if (spec.resources !== undefined) return { required: spec.resources.map((r) => ({ ...r })), optional: [] };
  return { required: DEFAULT_RESOURCES.map((r) => ({ ...r })), optional: OPTIONAL_DEFAULT_RESOURCES.map((r) => ({ ...r })) };
}

/** Every kind of a request, to resolve at once. */
export function allKinds(request: KindRequest): GroupKind[] {
  return [...request.required, ...request.optional];
}

/** What discovery's answer means for a recorder. */
export interface KindVerdict {
  /** Served, listable and watchable: watched. */
  watch: ResolvedKind[];
  /** Asked for and not served: rejected (Ready False, UnknownKind), looked up again every minute. */
  unknown: MissingKind[];
  /** Default kinds the API server does not serve: not recorded, and not an error. */
  absent: MissingKind[];
  /** Neither found nor known to be missing: their discovery documents could not be read. */
  unavailable: UnavailableKind[];
}

const same = (a: { group: string; kind: string }, b: { group: string; kind: string }): boolean => a.group === b.group && a.kind === b.kind;

export function kindVerdict(request: KindRequest, resolution: Resolution): KindVerdict {
  const optional = (k: { group: string; kind: string }): boolean => request.optional.some((o) => same(o, k)) && !request.required.some((r) => same(r, k));
  return {
    watch: resolution.found,
    unknown: resolution.missing.filter((k) => !optional(k)),
    absent: resolution.missing.filter(optional),
    unavailable: resolution.unavailable,
  };
}

/** Kinds asked for but not served, or whose discovery failed, are looked up again this often. */
export const MISSING_KINDS_RETRY_MS = 60_000;
/** Default kinds the API server does not serve are looked up again this often (a CRD installed later). */
export const ABSENT_DEFAULTS_RETRY_MS = 600_000;

/** How long a resolution holds before discovery is asked again (undefined: until the spec changes). */
export function resolutionLifetimeMs(verdict: KindVerdict): number | undefined {
  if (verdict.unknown.length > 0 || verdict.unavailable.length > 0) return MISSING_KINDS_RETRY_MS;
  if (verdict.absent.length > 0) return ABSENT_DEFAULTS_RETRY_MS;
  return undefined;
}

/** A resolution made for `generation` at `atMs`, and what it meant. */
export interface CachedResolution {
  generation: number;
  atMs: number;
  resolution: Resolution;
  verdict: KindVerdict;
}

/** Whether discovery must be asked again: the spec changed, or a kind was not found and its lifetime passed. */
export function resolutionDue(cached: CachedResolution, generation: number, nowMs: number): boolean {
  if (cached.generation !== generation) return true;
  const lifetime = resolutionLifetimeMs(cached.verdict);
  return lifetime !== undefined && nowMs - cached.atMs >= lifetime;
}

/** A stable key of the kinds a verdict rejects or could not look up: a change of it is news for the log. */
export function verdictKey(verdict: KindVerdict): string {
  const names = (kinds: readonly { group: string; kind: string }[]): string => kinds.map((k) => `${k.group}/${k.kind}`).sort().join(',');
  return `${names(verdict.unknown)}|${names(verdict.unavailable)}`;
}

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

/**
 * The recorder that keeps a store when several ask for overlapping ones (directories, or folders of one
 * bucket): the oldest (by creation time, then name), so a new recorder can never take over an existing one's
 * records. Returns the rival that `recorder` must yield to, with its target, if any.
 */
export function storageRival(
  recorder: ChangeRecorder,
  target: StorageTarget,
  others: readonly { recorder: ChangeRecorder; target: StorageTarget }[],
): { recorder: ChangeRecorder; target: StorageTarget } | undefined {
  const rank = (r: ChangeRecorder): [number, string] => [Date.parse(r.metadata.creationTimestamp ?? '') || 0, r.metadata.name ?? ''];
  const [time, name] = rank(recorder);
  return others.find(({ recorder: other, target: otherTarget }) => {
    if (other.metadata.name === recorder.metadata.name || other.metadata.deletionTimestamp || !targetsOverlap(target, otherTarget)) return false;
    const [t, n] = rank(other);
    return t < time || (t === time && n < name);
  });
}
