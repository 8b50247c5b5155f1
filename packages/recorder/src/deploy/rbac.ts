// The recorder's least-privilege ClusterRole, derived from ChangeRecorder specs: get, list and watch on
// exactly the kinds they ask for, each resolved through the API server's discovery documents to the resource
// (plural) the API server serves it as, beside the rules for the calls the recorder itself makes
// (manifests.ts's clusterRules, which takes the kinds and resources derived here). Pure apart from discovery, so it is tested with recorded documents.
import { groupKindString, type DiscoveryTransport, type MissingKind, type UnavailableKind } from '@quorum/runtime';
import type { ChangeRecorderSpec, GroupKind } from '../api/changerecorder.ts';
import { applyDefaults } from '../api/defaults.ts';
import { pluralOf } from '../kind-names.ts';
import { resolveKinds } from '../recorder/discovery.ts';
import { requestedKinds } from '../recorder/plan.ts';

/** A kind the role grants get, list and watch on, and where its resource name came from. */
export interface GrantedKind extends GroupKind {
  resource: string;
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
}

const key = (k: GroupKind): string => `${k.group}/${k.kind}`;

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
  const granted: GrantedKind[] = resolution.found.map((k) => ({ group: k.group, kind: k.kind, resource: k.resource, from: 'discovery' }));
  for (const k of [...resolution.missing, ...resolution.unavailable].filter(isOptional)) {
    granted.push({ group: k.group, kind: k.kind, resource: pluralOf(k.kind), from: 'quorum' });
  }
  granted.sort((a, b) => a.group.localeCompare(b.group) || a.kind.localeCompare(b.kind));
  return {
    granted,
    missing: resolution.missing.filter((k) => !isOptional(k)),
    unavailable: resolution.unavailable.filter((k) => !isOptional(k)),
    defaulted: specs.length === 0,
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

/** The kinds and plurals recorderManifests() takes, from a derivation. */
export function manifestKinds(derived: DerivedKinds): { kinds: GroupKind[]; plurals: Record<string, string> } {
  return {
    kinds: derived.granted.map((k) => ({ group: k.group, kind: k.kind })),
    plurals: Object.fromEntries(derived.granted.map((k) => [key(k), k.resource])),
  };
}
