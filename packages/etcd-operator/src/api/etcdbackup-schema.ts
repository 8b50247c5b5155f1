// The schemas of the API declared in the module of the same name without -schema (TypeBox): the CRD (crd.ts),
// the reference (reference/api.ts) and the schema as data the operator reads at run time (schema-data.ts,
// generated) are built from them, and the API module takes its types from them with `import type`. Loaded by the
// generators, the installers and tests, not by the operator's process (docs/memory.md).
import { Type } from '@sinclair/typebox';
import { conditionList, stringEnum } from './schema-nodes.ts';
import type { ObjectMeta } from '@quorum/runtime';
import { DestinationSchema } from './destination-schema.ts';
import { MAX_NAME_LENGTH, NAME_PATTERN } from './etcdcluster.ts';
import { BACKUP_PHASES, BACKUP_CONDITION_TYPES, BACKUP_RULES } from './etcdbackup.ts';

export const EtcdBackupSpecSchema = Type.Object(
  {
    clusterName: Type.String({ description: 'The EtcdCluster in the same namespace to back up.', pattern: NAME_PATTERN, minLength: 1, maxLength: MAX_NAME_LENGTH }),
    destination: DestinationSchema,
  },
  { description: 'Which cluster to back up, and where to store the snapshot. Fixed at creation.', 'x-kubernetes-validations': [BACKUP_RULES.specImmutable] },
);

const conditions = conditionList('Complete (True once the snapshot is stored) and Failed (True, with the reason, when it could not be).', BACKUP_CONDITION_TYPES, 'Condition type: Complete or Failed.');

export const EtcdBackupStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the status was computed from.', format: 'int64', minimum: 0 })),
    phase: Type.Optional(stringEnum(BACKUP_PHASES, { description: 'Pending (not started), Running (the backup Job streams the snapshot), Succeeded or Failed (see conditions).' })),
    location: Type.Optional(Type.String({ description: 'Where the snapshot is stored, e.g. s3://bucket/prefix/<cluster>-<timestamp>-rev<revision>.db.' })),
    key: Type.Optional(Type.String({ description: 'The object key (or the file path in the PVC) of the snapshot.' })),
    sizeBytes: Type.Optional(Type.Integer({ description: 'Size of the stored snapshot in bytes.', format: 'int64', minimum: 0 })),
    sha256: Type.Optional(Type.String({ description: 'SHA-256 of the stored snapshot, in hex; a restore checks it before any member starts.' })),
    revision: Type.Optional(Type.Integer({ description: "The member's revision just before the snapshot began: every write up to it is in the snapshot.", format: 'int64', minimum: 0 })),
    etcdVersion: Type.Optional(Type.String({ description: 'etcd version of the member the snapshot was taken from.' })),
    member: Type.Optional(Type.String({ description: 'The member the snapshot was taken from: a healthy follower with the newest applied index, never the leader unless it is the only member.' })),
    job: Type.Optional(Type.String({ description: 'The Job that streams the snapshot (it alone reads the credentials Secret).' })),
    startedAt: Type.Optional(Type.String({ description: 'When the backup Job was created.', format: 'date-time' })),
    completedAt: Type.Optional(Type.String({ description: 'When the backup succeeded or failed.', format: 'date-time' })),
    conditions: Type.Optional(conditions),
  },
  { description: 'Observed state of the backup, written by the operator.' },
);

export const EtcdBackupSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: 'APIVersion of this object: etcd.quorum.dev/v1alpha1.' })),
    kind: Type.Optional(Type.String({ description: 'Kind of this object: EtcdBackup.' })),
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: 'object' })),
    spec: EtcdBackupSpecSchema,
    status: Type.Optional(EtcdBackupStatusSchema),
  },
  { description: 'One backup (snapshot) of an EtcdCluster, taken from a healthy follower and streamed to an object store or a PVC by a Job.' },
);
