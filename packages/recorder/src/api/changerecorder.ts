// The ChangeRecorder API (history.quorum.dev/v1alpha1), declared once: the TypeScript types, the CRD's
// structural schema (crd.ts), the defaults the recorder applies in code (defaults.ts) and the API section of
// docs/recorder.md (docs.ts) all come from the schemas in this file.
import { Type, type Static, type TUnsafe } from '@sinclair/typebox';
import type { Condition, ObjectMeta } from '@quorum/runtime';
import { conditionSchema, type CelRule } from '@quorum/runtime/crd';
import { CREDENTIAL_KEYS, ENDPOINT_PATTERN } from '@quorum/storage';

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

function stringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown>): TUnsafe<T[number]> {
  // An `enum` rather than TypeBox's anyOf-of-consts: structural schemas cannot type a node inside anyOf.
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

function stringMap(options: Record<string, unknown>): TUnsafe<Record<string, string>> {
  // `additionalProperties` rather than TypeBox's patternProperties, which Kubernetes does not accept.
  return Type.Unsafe<Record<string, string>>({ ...options, type: 'object', additionalProperties: { type: 'string', maxLength: 63 } });
}

// ---- spec ----

export const LabelSelectorSchema = Type.Object(
  {
    matchLabels: Type.Optional(stringMap({ description: 'Labels a namespace must have, all of them.', maxProperties: 64 })),
    matchExpressions: Type.Optional(
      Type.Array(
        Type.Object(
          {
            key: Type.String({ description: 'The label key.', minLength: 1, maxLength: 317 }),
            operator: stringEnum(SELECTOR_OPERATORS, { description: 'How the label relates to values.' }),
            values: Type.Optional(
              Type.Array(Type.String({ maxLength: 63 }), { description: 'The values for In and NotIn; none for Exists and DoesNotExist.', maxItems: 64, 'x-kubernetes-list-type': 'atomic' }),
            ),
          },
          { description: 'One label requirement (metav1.LabelSelectorRequirement).', 'x-kubernetes-validations': [RULES.expressionValues] },
        ),
        { description: 'Label requirements a namespace must meet, all of them.', maxItems: 32, 'x-kubernetes-list-type': 'atomic' },
      ),
    ),
  },
  { description: 'Namespaces whose labels match (metav1.LabelSelector); the API server evaluates it, and namespaces that start or stop matching are picked up or dropped as they change.' },
);

export const NamespacesSchema = Type.Object(
  {
    names: Type.Optional(
      Type.Array(Type.String({ pattern: NAMESPACE_PATTERN, maxLength: 63 }), {
        description: 'These namespaces, by name.',
        minItems: 1,
        maxItems: 256,
        'x-kubernetes-list-type': 'set',
      }),
    ),
    selector: Type.Optional(LabelSelectorSchema),
    all: Type.Optional(Type.Boolean({ description: 'Every namespace.' })),
  },
  {
    description: 'Which namespaces to record, exactly one of names, selector or all. Cluster-scoped kinds in spec.resources are recorded whatever this says.',
    'x-kubernetes-validations': [RULES.namespacesExactlyOne, RULES.allIsTrue],
  },
);

export const GroupKindSchema = Type.Object(
  {
    group: Type.Optional(Type.String({ description: 'API group; empty for the core group.', pattern: GROUP_PATTERN, maxLength: 253, default: '' })),
    kind: Type.String({ description: 'Kind, e.g. Deployment.', pattern: KIND_PATTERN, minLength: 1, maxLength: 63 }),
  },
  { description: "A kind to record, by group and kind; the served version is found through discovery (the group's preferred version that serves the kind)." },
);

export const ExcludeSchema = Type.Object(
  {
    group: Type.Optional(Type.String({ description: 'API group (empty for the core group); any group when unset.', pattern: GROUP_PATTERN, maxLength: 253 })),
    kind: Type.Optional(Type.String({ description: 'Kind; any kind when unset.', pattern: KIND_PATTERN, maxLength: 63 })),
    namespace: Type.Optional(Type.String({ description: 'Namespace; any namespace when unset.', pattern: NAMESPACE_PATTERN, maxLength: 63 })),
    name: Type.Optional(Type.String({ description: 'Object name, where * stands for any run of characters (e.g. sh.helm.release.v1.*); any name when unset.', pattern: NAME_GLOB_PATTERN, maxLength: 253 })),
  },
  {
    description: 'Objects not to record: those matching every field this entry sets.',
    'x-kubernetes-validations': [RULES.excludeNotEmpty],
  },
);

export const RetentionSchema = Type.Object(
  {
    maxVersionsPerObject: Type.Optional(
      Type.Integer({
        description: 'Records kept per object; the oldest go first once there are more.',
        format: 'int32',
        minimum: 1,
        maximum: MAX_MAX_VERSIONS_PER_OBJECT,
        default: DEFAULT_MAX_VERSIONS_PER_OBJECT,
      }),
    ),
    maxAge: Type.Optional(
      Type.String({ description: 'Records older than this are removed, e.g. 30d, 12h or 90m; kept whatever their age when unset.', pattern: MAX_AGE_PATTERN, maxLength: 16 }),
    ),
  },
  { description: 'How many records are kept, and for how long.', default: {} },
);

// An object store's folder for one recorder: the same rule as a path on the volume (no `.` or `..` segment,
// no leading or trailing slash), so the two kinds of store name their folders alike.
const objectPrefix = Type.String({
  description: "Folder (key prefix) in the bucket that holds this recorder's records, e.g. `clusters/prod/history`; the ChangeRecorder's name when unset.",
  pattern: STORAGE_PATH_PATTERN,
  maxLength: 512,
});
const objectEndpoint = (what: string): ReturnType<typeof Type.String> => Type.String({ description: what, pattern: ENDPOINT_PATTERN, maxLength: 1024 });
/** The recorder reads credentials from a mounted Secret, which the recorder's pod must mount (recorderManifests' storageSecrets). */
const credentialsSecret = (keys: string): ReturnType<typeof Type.String> =>
  Type.String({
    description: `Secret in the recorder's namespace with ${keys}. It is read from the recorder's pod, which mounts only the Secrets named when the recorder was installed (\`storageSecrets\`).`,
    pattern: SECRET_NAME_PATTERN,
    minLength: 1,
    maxLength: 253,
  });

export const S3StorageSchema = Type.Object(
  {
    bucket: Type.String({ description: 'Bucket name.', minLength: 3, maxLength: 63 }),
    prefix: Type.Optional(objectPrefix),
    endpoint: Type.Optional(objectEndpoint('URL of an S3-compatible server (MinIO, Ceph…); AWS S3 when unset.')),
    region: Type.Optional(Type.String({ description: 'Region of the bucket; us-east-1 when unset.', minLength: 1, maxLength: 64 })),
    forcePathStyle: Type.Optional(Type.Boolean({ description: 'Address the bucket as a path (`endpoint/bucket/key`) rather than a host name, as most S3 servers other than AWS need.' })),
    credentialsSecret: credentialsSecret(`keys ${CREDENTIAL_KEYS.s3.join(' and ')}`),
  },
  { description: 'An S3 or S3-compatible bucket.' },
);

export const GcsStorageSchema = Type.Object(
  {
    bucket: Type.String({ description: 'Bucket name.', minLength: 3, maxLength: 222 }),
    prefix: Type.Optional(objectPrefix),
    endpoint: Type.Optional(objectEndpoint('URL of a GCS-compatible server (an emulator); Google Cloud Storage when unset.')),
    credentialsSecret: credentialsSecret(`key ${CREDENTIAL_KEYS.gcs.join(', ')} (a service account key; an emulator needs none)`),
  },
  { description: 'A Google Cloud Storage bucket.' },
);

export const AzureStorageSchema = Type.Object(
  {
    container: Type.String({ description: 'Blob container name.', minLength: 3, maxLength: 63 }),
    prefix: Type.Optional(objectPrefix),
    endpoint: Type.Optional(objectEndpoint("URL of the Blob service, overriding the connection string's BlobEndpoint.")),
    credentialsSecret: credentialsSecret(`key ${CREDENTIAL_KEYS.azure.join(', ')}`),
  },
  { description: 'An Azure Blob Storage container.' },
);

export const StorageSchema = Type.Object(
  {
    path: Type.Optional(
      Type.String({
        description: "Directory below the recorder's storage root (its volume, typically a PVC) that holds this recorder's records; the ChangeRecorder's name when unset, unless an object store is set.",
        pattern: STORAGE_PATH_PATTERN,
        maxLength: 512,
      }),
    ),
    s3: Type.Optional(S3StorageSchema),
    gcs: Type.Optional(GcsStorageSchema),
    azure: Type.Optional(AzureStorageSchema),
  },
  {
    description:
      "Where records are written: a directory on the recorder's volume (path, the default), or a folder of an object store bucket (one of s3, gcs or azure). Fixed at creation.",
    default: {},
    'x-kubernetes-validations': [RULES.storageImmutable, RULES.storageAtMostOne],
  },
);

export const AttributionSchema = Type.Object(
  {
    users: Type.Optional(
      Type.Boolean({
        description:
          "When true, each record also names the user the API server authenticated for the change (changedBy.user, with groups), as the recorder's validating admission webhook saw it, or says why the user is unknown (changedBy.userUnknown). The webhook must be installed: quorum history install installs it when a ChangeRecorder sets this (Helm: attribution.users). It always allows, and is skipped while the recorder is down.",
        default: false,
      }),
    ),
  },
  { description: 'Who a record names for a change, beyond the field manager from managedFields (always named when the object tells).', default: {} },
);

export const ChangeRecorderSpecSchema = Type.Object(
  {
    namespaces: NamespacesSchema,
    resources: Type.Optional(
      Type.Array(GroupKindSchema, {
        description:
          `Kinds to record. When unset: ${DEFAULT_RESOURCES.map((r) => r.kind).join(', ')}, and ${OPTIONAL_DEFAULT_RESOURCES.map((r) => r.kind).join(' and ')} where the API server serves them; not Secrets, which are recorded only when listed here (the recorder then needs RBAC to read the Secrets of the recorded namespaces). ` +
          'A kind listed here that the API server does not serve (or cannot list and watch) is rejected: the Ready condition is False with reason UnknownKind and names it, and the kinds that are served are recorded meanwhile.',
        minItems: 1,
        maxItems: 64,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['group', 'kind'],
      }),
    ),
    exclude: Type.Optional(Type.Array(ExcludeSchema, { description: 'Objects not to record.', maxItems: 256, 'x-kubernetes-list-type': 'atomic' })),
    ignoreStatusOnly: Type.Optional(
      Type.Boolean({
        description:
          'When true, a change of status alone is not recorded, and records leave status out. When false, status changes are recorded too and records keep status. Metadata churn (resourceVersion, managedFields, generation) is never a change.',
        default: true,
      }),
    ),
    secrets: Type.Optional(
      stringEnum(SECRET_MODES, {
        description:
          "How Secrets are recorded: redact keeps the keys and replaces each value (and the last-applied-configuration annotation) by a keyed hash, so records show which values changed without holding them; full keeps the values.",
        default: 'redact',
      }),
    ),
    retention: Type.Optional(RetentionSchema),
    storage: Type.Optional(StorageSchema),
    attribution: Type.Optional(AttributionSchema),
  },
  { description: 'What to record and where to keep it.' },
);

// ---- status ----

// The runtime's metav1.Condition schema is plain JSON; Unsafe types it as the runtime's Condition, which setCondition() returns.
export const ConditionSchema = Type.Unsafe<Condition>(conditionSchema({ description: 'Condition type: Ready, KindsResolved or UsersAttributed.', maxLength: 316 }));

export const WatchedKindSchema = Type.Object(
  {
    group: Type.String({ description: 'API group; empty for the core group.' }),
    kind: Type.String({ description: 'Kind.' }),
    version: Type.String({ description: "The version watched (the group's preferred version that serves the kind)." }),
    resource: Type.String({ description: 'The resource (plural) watched.' }),
    namespaced: Type.Boolean({ description: 'Whether objects of this kind live in namespaces.' }),
    objects: Type.Integer({ description: 'Objects of this kind being watched now.', format: 'int64', minimum: 0 }),
  },
  { description: 'A kind the recorder watches.' },
);

export const ChangeRecorderStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the status was computed from.', format: 'int64', minimum: 0 })),
    conditions: Type.Optional(
      Type.Array(ConditionSchema, {
        description:
          'Ready (every kind asked for is served and being recorded), KindsResolved (discovery found every kind asked for) and, when spec.attribution.users is true, UsersAttributed (the admission webhook that tells users is serving).',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
    kinds: Type.Optional(
      Type.Array(WatchedKindSchema, { description: 'The kinds being watched, with their object counts.', 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['group', 'kind'] }),
    ),
    objects: Type.Optional(Type.Integer({ description: 'Objects being watched now, all kinds together.', format: 'int64', minimum: 0 })),
    watchingSince: Type.Optional(Type.String({ description: 'When the recorder process now running started recording: changes before it were found at start, by comparison, and recorded as seen late.', format: 'date-time' })),
    recordsWritten: Type.Optional(Type.Integer({ description: 'Records written since watchingSince.', format: 'int64', minimum: 0 })),
    records: Type.Optional(Type.Integer({ description: 'Records kept in storage now, after retention.', format: 'int64', minimum: 0 })),
    lastRecordTime: Type.Optional(Type.String({ description: 'When the newest record was written.', format: 'date-time' })),
    storageBytes: Type.Optional(Type.Integer({ description: 'Bytes the records and the last-seen copies take in storage.', format: 'int64', minimum: 0 })),
  },
  { description: 'What the recorder watches and has recorded, written by the recorder.' },
);

// ---- the object ----

export const ChangeRecorderSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: `APIVersion of this object: ${API_VERSION}.` })),
    kind: Type.Optional(Type.String({ description: `Kind of this object: ${KIND}.` })),
    // Only metadata.name may be restricted in a CRD; the rest of ObjectMeta is the API server's.
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: 'object' })),
    spec: ChangeRecorderSpecSchema,
    status: Type.Optional(ChangeRecorderStatusSchema),
  },
  { description: 'Records the previous version of every changed or deleted object of the chosen kinds and namespaces, so a mistake can be undone from the record.' },
);

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
