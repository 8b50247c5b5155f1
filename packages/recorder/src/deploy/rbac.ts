// The recorder's least-privilege RBAC, derived from ChangeRecorder specs: list and watch on exactly the kinds
// they ask for, each resolved through the API server's discovery documents to the resource (plural) the API
// server serves it as and its scope, in exactly the namespaces they name (spec.namespaces.names); a spec that
// chooses namespaces by selector or all needs the cluster-wide install, and says so. manifests.ts turns this
// into a Role per namespace (or ClusterRole rules) beside the rules for the recorder's own calls. Pure apart
// from discovery, so it is tested with recorded documents.
import { groupKindString, type DiscoveryTransport, type MissingKind, type UnavailableKind } from '@quorum/runtime';
import type { ChangeRecorderSpec, GroupKind } from '../api/changerecorder.ts';
import { applyDefaults } from '../api/defaults.ts';
import { pluralOf } from '../kind-names.ts';
import type { RecorderManifestOptions } from './manifests.ts';
import { resolveKinds } from '../recorder/discovery.ts';
import { requestedKinds } from '../recorder/plan.ts';

/** A kind the role grants list and watch on, where its resource name came from, and its scope. */
export interface GrantedKind extends GroupKind {
  resource: string;
  namespaced: boolean;
  /**
   * `discovery`: the API server serves it under this resource. `quorum`: one of Quorum's own kinds in the
   * default, which this API server does not serve (yet): granted under its known resource, so that a recorder
   * picks it up once the etcd operator's CRDs are installed, as it looks again every 10 minutes.
   */
  from: 'discovery' | 'quorum';
}

export interface DerivedKinds {
  granted: GrantedKind[];
  /** Kinds a spec lists that the API server does not serve, or cannot list and watch: the install refuses them. */
  missing: MissingKind[];
  /** Kinds whose discovery documents could not be read: whether they exist is not known, so nothing is granted. */
  unavailable: UnavailableKind[];
  /** True when no spec was given and the default kinds were derived instead. */
  defaulted: boolean;
  /** The namespaces the specs name, sorted: each gets a Role (`default`, the sample's, when no spec was given). */
  namespaces: string[];
  /** The specs that choose namespaces by selector or all, described: they need the cluster-wide install. */
  clusterWideRequiredBy: string[];
}

/** How a spec that needs cluster-wide RBAC chooses its namespaces, for the message that refuses it. */
function clusterWideNeed(spec: ChangeRecorderSpec): string | undefined {
  const ns = spec.namespaces;
  if (ns?.all === true) return 'spec.namespaces.all';
  if (ns?.selector !== undefined) return `spec.namespaces.selector ${JSON.stringify(ns.selector)}`;
  return undefined;
}

const key = (k: GroupKind): string => `${k.group}/${k.kind}`;

/** The namespace granted when no ChangeRecorder is given or found: the sample's (sampleChangeRecorder). */
const DEFAULT_NAMESPACE = 'default';

/**
 * The kinds the specs ask for, resolved through discovery. A spec without resources asks for the default
 * kinds, Quorum's own among them where served (granted by their known names otherwise). No spec at all is
 * taken as one default spec: what the sample ChangeRecorder, or any created later without resources, needs.
 */
export async function deriveRecordedKinds(transport: DiscoveryTransport, specs: readonly ChangeRecorderSpec[]): Promise<DerivedKinds> {
  const requests = specs.length > 0 ? specs.map((s) => requestedKinds(applyDefaults(s))) : [requestedKinds({})];
  const required = new Map<string, GroupKind>();
  const optional = new Map<string, GroupKind>();
  for (const r of requests) {
    for (const k of r.required) required.set(key(k), k);
    for (const k of r.optional) optional.set(key(k), k);
  }
  for (const k of required.keys()) optional.delete(k);
  const resolution = await resolveKinds(transport, [...required.values(), ...optional.values()]);
  const isOptional = (k: GroupKind): boolean => optional.has(key(k));
  const granted: GrantedKind[] = resolution.found.map((k) => ({ group: k.group, kind: k.kind, resource: k.resource, namespaced: k.namespaced, from: 'discovery' }));
  for (const k of [...resolution.missing, ...resolution.unavailable].filter(isOptional)) {
    // Quorum's optional kinds (EtcdClusters, EtcdBackupSchedules) live in namespaces.
    granted.push({ group: k.group, kind: k.kind, resource: pluralOf(k.kind), namespaced: true, from: 'quorum' });
  }
  granted.sort((a, b) => a.group.localeCompare(b.group) || a.kind.localeCompare(b.kind));
  return {
    granted,
    missing: resolution.missing.filter((k) => !isOptional(k)),
    unavailable: resolution.unavailable.filter((k) => !isOptional(k)),
    defaulted: specs.length === 0,
    namespaces: specs.length > 0 ? [...new Set(specs.flatMap((s) => s.namespaces?.names ?? []))].sort() : [DEFAULT_NAMESPACE],
    clusterWideRequiredBy: specs.map(clusterWideNeed).filter((d) => d !== undefined),
  };
}

/** Why an install cannot derive the role, naming each kind; undefined when it can. */
export function derivationProblem(derived: DerivedKinds): string | undefined {
  const lines = [
    ...derived.missing.map((k) => `${groupKindString(k)}: ${k.why}`),
    ...derived.unavailable.map((k) => `${groupKindString(k)}: its discovery documents cannot be read (${k.errors.join('; ')})`),
  ];
  if (lines.length === 0) return undefined;
  return `cannot grant the recorder these kinds:\n  ${lines.join('\n  ')}\n(fix spec.resources, or install the CRDs that serve them, and install again)`;
}

/** What recorderManifests() takes from a derivation: the kinds, their plurals and scopes, and the namespaces. */
export function manifestKinds(derived: DerivedKinds): Required<Pick<RecorderManifestOptions, 'kinds' | 'plurals' | 'recordedNamespaces' | 'clusterWideRequiredBy'>> {
  return {
    kinds: derived.granted.map((k) => ({ group: k.group, kind: k.kind, namespaced: k.namespaced })),
    recordedNamespaces: derived.namespaces,
    clusterWideRequiredBy: derived.clusterWideRequiredBy,
    plurals: Object.fromEntries(derived.granted.map((k) => [key(k), k.resource])),
  };
}
