// The ChangeRecorder API (history.quorum.dev/v1alpha1), declared once: the TypeScript types, the CRD's
// structural schema (crd.ts), the defaults the recorder applies in code (defaults.ts) and the API section of
// docs/recorder.md (docs.ts) all come from the schemas in schema.ts. This file holds the names, rules and types
// the recorder uses at run time, the types taken from the schemas with `import type` (free at run time); the
// defaults are read from schema-data.ts, the spec's schema as data, generated: the recorder's process loads no
// TypeBox (docs/memory.md).
import type { Static } from '@sinclair/typebox';
import type { ObjectMeta } from '@quorum/runtime';
import type { CelRule } from '@quorum/runtime/crd';
import type { AttributionSchema, ChangeRecorderSpecSchema, ChangeRecorderStatusSchema, ExcludeSchema, LabelSelectorSchema, NamespacesSchema, RetentionSchema, StorageSchema, WatchedKindSchema } from './schema.ts';

export const GROUP = 'history.quorum.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'ChangeRecorder';
export const LIST_KIND = 'ChangeRecorderList';
export const PLURAL = 'changerecorders';
export const SINGULAR = 'changerecorder';
export const SHORT_NAMES: readonly string[] = ['recorder'];

/** A group/kind the recorder can watch; `group` is empty for the core group (ConfigMap, Secret, Service). */
export interface GroupKind {
  group: string;
  kind: string;
}

/**
 * What is recorded when `spec.resources` is not set: the common workload and configuration kinds, and
 * Quorum's own kinds where the API server serves them (OPTIONAL_DEFAULT_RESOURCES). The default is applied by
 * the recorder at each reconcile, not by the API server, since which of Quorum's kinds exist is a question
 * for discovery: a ChangeRecorder created before the etcd operator was installed records its EtcdClusters
 * once their CRD appears. Secrets are not in it: recording them is opt-in (list `{group: '', kind: Secret}` in
 * spec.resources), since it lets the recorder read every Secret of the recorded namespaces.
 */
export const DEFAULT_RESOURCES: readonly GroupKind[] = [
  { group: 'apps', kind: 'Deployment' },
  { group: 'apps', kind: 'StatefulSet' },
  { group: 'apps', kind: 'DaemonSet' },
  { group: '', kind: 'Service' },
  { group: '', kind: 'ConfigMap' },
  { group: 'networking.k8s.io', kind: 'Ingress' },
  { group: 'batch', kind: 'CronJob' },
];

/**
 * Quorum's own kinds in the default, each only where discovery finds it. The etcd operator's declarations
 * (clusters and backup schedules); not EtcdBackup and EtcdRestore, one-shot requests whose history is their
 * own status, and which schedules create and delete by the hundred (each deletion would leave a record).
 */
export const OPTIONAL_DEFAULT_RESOURCES: readonly GroupKind[] = [
  { group: 'etcd.quorum.dev', kind: 'EtcdCluster' },
  { group: 'etcd.quorum.dev', kind: 'EtcdBackupSchedule' },
];

export const DEFAULT_MAX_VERSIONS_PER_OBJECT = 10;
export const MAX_MAX_VERSIONS_PER_OBJECT = 10_000;

export const SECRET_MODES = ['redact', 'full'] as const;
export const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

/** A namespace name (DNS-1123 label). */
export const NAMESPACE_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?$';
/** An API group: a DNS subdomain, or empty for the core group. */
export const GROUP_PATTERN = '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$';
/** A kind as Kubernetes spells it (UpperCamelCase). */
export const KIND_PATTERN = '^[A-Z][A-Za-z0-9]*$';
/** An object name, where `*` stands for any run of characters. */
export const NAME_GLOB_PATTERN = '^[a-z0-9*]([-a-z0-9.:*]*[a-z0-9*])?$';
/** How long a record is kept: a whole number of minutes, hours or days, at least one. */
export const MAX_AGE_PATTERN = '^[1-9][0-9]*(m|h|d)$';
/**
 * A relative path below the recorder's storage root: segments that cannot be `.` or `..` (a segment starts
 * with neither a dot nor a slash), so a ChangeRecorder cannot point the recorder outside its volume.
 */
export const STORAGE_PATH_PATTERN = '^[A-Za-z0-9_-][A-Za-z0-9._-]*(/[A-Za-z0-9_-][A-Za-z0-9._-]*)*$';
/** A Secret name (a DNS-1123 subdomain). */
export const SECRET_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/** The CRD's CEL rules; defaults.ts mirrors each one under the same message. */
export const RULES = {
  namespacesExactlyOne: {
    rule: '(has(self.names) ? 1 : 0) + (has(self.selector) ? 1 : 0) + (has(self.all) ? 1 : 0) == 1',
    message: 'spec.namespaces must set exactly one of names, selector or all',
  },
  allIsTrue: {
    rule: '!has(self.all) || self.all',
    message: 'spec.namespaces.all must be true when set (use names or selector to watch fewer namespaces)',
  },
  expressionValues: {
    rule: "self.operator in ['In', 'NotIn'] ? has(self.values) && size(self.values) > 0 : !has(self.values) || size(self.values) == 0",
    message: 'a matchExpressions entry needs values with In and NotIn, and none with Exists and DoesNotExist',
  },
  excludeNotEmpty: {
    rule: 'has(self.group) || has(self.kind) || has(self.namespace) || has(self.name)',
    message: 'an exclude entry must set at least one of group, kind, namespace or name',
  },
  storageImmutable: {
    rule: 'self == oldSelf',
    message: 'spec.storage is immutable: records already written stay where they are',
  },
  storageAtMostOne: {
    rule: '(has(self.path) ? 1 : 0) + (has(self.s3) ? 1 : 0) + (has(self.gcs) ? 1 : 0) + (has(self.azure) ? 1 : 0) <= 1',
    message: 'spec.storage sets at most one of path, s3, gcs or azure',
  },
} as const satisfies Record<string, CelRule>;

export type ChangeRecorderSpec = Static<typeof ChangeRecorderSpecSchema>;
export type ChangeRecorderStatus = Static<typeof ChangeRecorderStatusSchema>;
export type NamespacesSpec = Static<typeof NamespacesSchema>;
export type LabelSelector = Static<typeof LabelSelectorSchema>;
export type ExcludeRule = Static<typeof ExcludeSchema>;
export type RetentionSpec = Static<typeof RetentionSchema>;
export type StorageSpec = Static<typeof StorageSchema>;
export type AttributionSpec = Static<typeof AttributionSchema>;
export type WatchedKind = Static<typeof WatchedKindSchema>;
export type SecretMode = (typeof SECRET_MODES)[number];

/** A ChangeRecorder as read from the API server. */
export interface ChangeRecorder {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: ChangeRecorderSpec;
  status?: ChangeRecorderStatus;
}
