// The ChangeRecorder's schemas (TypeBox): the CRD's structural schema (crd.ts), the API section of
// docs/recorder.md (docs.ts) and the spec's schema as data (schema-data.ts, generated, which the recorder's
// defaulting reads) come from them; changerecorder.ts takes its types from them. Loaded by the generators, the
// installers and tests, not by the recorder's process.
import { Type } from '@sinclair/typebox';
import type { Condition, ObjectMeta } from '@quorum/runtime';
import { conditionSchema } from '@quorum/runtime/crd';
import { labelMap, stringEnum } from '@quorum/kit/schema';
import { CREDENTIAL_KEYS, ENDPOINT_PATTERN } from '@quorum/storage';
import { API_VERSION, DEFAULT_MAX_VERSIONS_PER_OBJECT, DEFAULT_RESOURCES, GROUP_PATTERN, KIND, KIND_PATTERN, MAX_AGE_PATTERN, MAX_MAX_VERSIONS_PER_OBJECT, NAMESPACE_PATTERN, NAME_GLOB_PATTERN, OPTIONAL_DEFAULT_RESOURCES, RULES, SECRET_MODES, SECRET_NAME_PATTERN, SELECTOR_OPERATORS, STORAGE_PATH_PATTERN } from './changerecorder.ts';

// ---- spec ----

export const LabelSelectorSchema = Type.Object(
  {
    matchLabels: Type.Optional(labelMap({ description: 'Labels a namespace must have, all of them.', maxProperties: 64 })),
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
