// A ChangeRecorder spec as the recorder uses it: the schema's defaults applied in code (the object may predate
// a default), each CEL rule of the CRD mirrored under the same message (the CRD may be older than this code),
// and the spec's values turned into what the recorder needs: maxAge in milliseconds, the namespace selector as
// the API server's selector string, and the exclude matcher. Where records go is store/target.ts's.
import { applySchemaDefaults } from '@quorum/runtime/crd';
import {
  MAX_AGE_PATTERN,
  RULES,
  STORAGE_PATH_PATTERN,
  type ChangeRecorderSpec,
  type ExcludeRule,
  type GroupKind,
  type LabelSelector,
  type SecretMode,
  type StorageSpec,
} from './changerecorder.ts';
import { ChangeRecorderSpecSchemaData } from './schema-data.ts';

/**
 * A spec after defaulting: every field the recorder reads has a value, but `resources`, whose default depends
 * on what the API server serves (plan.ts, `requestedKinds`); each of its entries has its group.
 */
export type DefaultedSpec = Omit<ChangeRecorderSpec, 'resources' | 'ignoreStatusOnly' | 'secrets' | 'retention' | 'storage' | 'attribution'> & {
  resources?: GroupKind[];
  ignoreStatusOnly: boolean;
  secrets: SecretMode;
  retention: { maxVersionsPerObject: number; maxAge?: string };
  storage: StorageSpec;
  attribution: { users: boolean };
};

export function applyDefaults(spec: ChangeRecorderSpec): DefaultedSpec {
  const defaulted = applySchemaDefaults(ChangeRecorderSpecSchemaData, spec) as DefaultedSpec;
  const { resources, ...rest } = defaulted;
  return resources === undefined ? rest : { ...rest, resources: resources.map((r) => ({ group: r.group ?? '', kind: r.kind })) };
}

/**
 * The CRD's CEL rules, as messages for the fields they fail on, and the patterns whose breach would do harm
 * rather than fail (a storage path leaving the storage root, an object store prefix whose `..` would hide an
 * overlap with another recorder's, a maxAge the recorder cannot read). The rest of the OpenAPI part (types,
 * ranges) is left to the API server.
 */
export function validateSpec(spec: DefaultedSpec): string[] {
  const errors: string[] = [];
  const ns = spec.namespaces;
  const set = [ns.names !== undefined, ns.selector !== undefined, ns.all !== undefined].filter(Boolean).length;
  if (set !== 1) errors.push(RULES.namespacesExactlyOne.message);
  if (ns.all === false) errors.push(RULES.allIsTrue.message);
  for (const e of ns.selector?.matchExpressions ?? []) {
    const needsValues = e.operator === 'In' || e.operator === 'NotIn';
    if (needsValues !== (e.values !== undefined && e.values.length > 0)) errors.push(RULES.expressionValues.message);
  }
  for (const x of spec.exclude ?? []) {
    if (x.group === undefined && x.kind === undefined && x.namespace === undefined && x.name === undefined) errors.push(RULES.excludeNotEmpty.message);
  }
  const { path, s3, gcs, azure } = spec.storage;
  if ([path, s3, gcs, azure].filter((s) => s !== undefined).length > 1) errors.push(RULES.storageAtMostOne.message);
  if (path !== undefined && !new RegExp(STORAGE_PATH_PATTERN).test(path)) {
    errors.push(`spec.storage.path ${JSON.stringify(path)} must be a relative path without . or .. segments`);
  }
  for (const [field, prefix] of [['s3', s3?.prefix], ['gcs', gcs?.prefix], ['azure', azure?.prefix]] as const) {
    if (prefix !== undefined && !new RegExp(STORAGE_PATH_PATTERN).test(prefix)) {
      errors.push(`spec.storage.${field}.prefix ${JSON.stringify(prefix)} must be a relative path without . or .. segments`);
    }
  }
  const maxAge = spec.retention.maxAge;
  if (maxAge !== undefined && !new RegExp(MAX_AGE_PATTERN).test(maxAge)) {
    errors.push(`spec.retention.maxAge ${JSON.stringify(maxAge)} must be a whole number of minutes, hours or days (e.g. 30d)`);
  }
  return [...new Set(errors)];
}

const UNIT_MS = { m: 60_000, h: 3_600_000, d: 86_400_000 } as const;

/** `30d` → milliseconds; undefined for no limit. */
export function maxAgeMs(maxAge: string | undefined): number | undefined {
  if (maxAge === undefined) return undefined;
  const match = /^([1-9][0-9]*)(m|h|d)$/.exec(maxAge);
  if (!match) throw new Error(`retention.maxAge ${JSON.stringify(maxAge)} is not a whole number of m, h or d`);
  return Number(match[1]) * UNIT_MS[match[2] as keyof typeof UNIT_MS];
}

/** A metav1.LabelSelector as the `labelSelector` query parameter, so the API server does the matching. */
export function selectorString(selector: LabelSelector): string {
  const parts = Object.entries(selector.matchLabels ?? {}).map(([k, v]) => `${k}=${v}`);
  for (const e of selector.matchExpressions ?? []) {
    const values = (e.values ?? []).join(',');
    if (e.operator === 'In') parts.push(`${e.key} in (${values})`);
    else if (e.operator === 'NotIn') parts.push(`${e.key} notin (${values})`);
    else if (e.operator === 'Exists') parts.push(e.key);
    else parts.push(`!${e.key}`);
  }
  return parts.join(',');
}

/** What an exclude rule is matched against. */
export interface ObjectIdentity {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

/** A predicate that is true for objects one of the rules excludes. */
export function excluder(rules: readonly ExcludeRule[] | undefined): (id: ObjectIdentity) => boolean {
  const compiled = (rules ?? []).map((r) => ({ ...r, name: r.name === undefined ? undefined : globRegExp(r.name) }));
  if (compiled.length === 0) return () => false;
  return (id) =>
    compiled.some(
      (r) =>
        (r.group === undefined || r.group === id.group) &&
        (r.kind === undefined || r.kind === id.kind) &&
        (r.namespace === undefined || r.namespace === id.namespace) &&
        (r.name === undefined || r.name.test(id.name)),
    );
}

function globRegExp(glob: string): RegExp {
  const escaped = glob.split('*').map((part) => part.replace(/[.*+?^${}()|[\]\\]/g, '\\$&'));
  return new RegExp(`^${escaped.join('.*')}$`);
}
