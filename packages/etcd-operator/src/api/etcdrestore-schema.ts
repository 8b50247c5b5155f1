// The schemas of the API declared in the module of the same name without -schema (TypeBox): the CRD (crd.ts),
// the reference (reference/api.ts) and the schema as data the operator reads at run time (schema-data.ts,
// generated) are built from them, and the API module takes its types from them with `import type`. Loaded by the
// generators, the installers and tests, not by the operator's process (docs/memory.md).
import { Type, type TSchema } from '@sinclair/typebox';
import { conditionList, stringEnum } from './schema-nodes.ts';
import type { ObjectMeta } from '@quorum/runtime';
import { DestinationSchema } from './destination-schema.ts';
import { MAX_NAME_LENGTH, NAME_PATTERN } from './etcdcluster.ts';
import { EtcdClusterSpecSchema } from './etcdcluster-schema.ts';
import { RESTORE_PHASES, RESTORE_CONDITION_TYPES, RESTORE_RULES, DEFAULT_BACKUP_WAIT_SECONDS, RESTORE_CLUSTER_SPEC_FIELDS } from './etcdrestore.ts';

/**
 * A property of EtcdClusterSpecSchema without its transition rules (those comparing with oldSelf, such as
 * "version may move up one minor version"): an EtcdRestore spec is immutable as a whole, so they add nothing.
 */
function clusterSpecProperty(field: (typeof RESTORE_CLUSTER_SPEC_FIELDS)[number]): TSchema {
  const property = EtcdClusterSpecSchema.properties[field] as TSchema & { 'x-kubernetes-validations'?: { rule: string }[] };
  const { 'x-kubernetes-validations': rules, ...rest } = property;
  const kept = (rules ?? []).filter((r) => !r.rule.includes('oldSelf'));
  // EtcdCluster's description of version is about changing it on a running cluster; here it is set once.
  const described = field === 'version' ? { ...rest, description: "etcd version of the new cluster's members (3.MINOR.PATCH)." } : rest;
  return (kept.length > 0 ? { ...described, 'x-kubernetes-validations': kept } : described);
}

export const RestoreClusterSpecSchema = Type.Object(
  Object.fromEntries(RESTORE_CLUSTER_SPEC_FIELDS.map((f) => [f, Type.Optional(clusterSpecProperty(f))])) as Record<(typeof RESTORE_CLUSTER_SPEC_FIELDS)[number], TSchema>,
  { description: 'The new EtcdCluster\'s spec (EtcdCluster defaults apply to what is unset); spec.bootstrap.fromBackup is set by the restore.' },
);

export const EtcdRestoreSpecSchema = Type.Object(
  {
    clusterName: Type.String({ description: 'The new EtcdCluster to create in the same namespace. An existing EtcdCluster of that name that this restore did not create is never touched: the restore reports ClusterExists.', pattern: NAME_PATTERN, minLength: 1, maxLength: MAX_NAME_LENGTH }),
    backupName: Type.Optional(Type.String({ description: 'An EtcdBackup in the same namespace; the restore waits until it has Succeeded, and fails if it Failed.', minLength: 1, maxLength: 253 })),
    destination: Type.Optional(DestinationSchema),
    key: Type.Optional(Type.String({ description: 'Object key (or file path under the PVC destination) of the snapshot, with destination.', minLength: 1, maxLength: 1024 })),
    sha256: Type.Optional(Type.String({ description: "SHA-256 of the snapshot file, in hex: required with destination and key (the members refuse a snapshot that does not match it); etcd's own hash check runs too.", pattern: '^[0-9a-f]{64}$' })),
    clusterSpec: Type.Optional(RestoreClusterSpecSchema),
    backupWaitSeconds: Type.Optional(
      Type.Integer({
        description:
          'How long, counted from the restore\'s creation, it waits for the EtcdBackup named by backupName to exist and succeed; past it the restore is Failed (BackupWaitExceeded) and no cluster is created. A backup being taken ends on its own bound (5 minutes plus its database at 2 MiB/s), so the default covers databases up to about 6 GiB. Unused with destination and key.',
        format: 'int32',
        minimum: 10,
        maximum: 604800,
        default: DEFAULT_BACKUP_WAIT_SECONDS,
      }),
    ),
  },
  {
    description: 'The cluster to create, and the backup to start it from: either backupName, or destination and key. Fixed at creation.',
    'x-kubernetes-validations': [RESTORE_RULES.specImmutable, RESTORE_RULES.source, RESTORE_RULES.version],
  },
);

const conditions = conditionList('Complete (True once the new cluster is Available; False with what it waits for) and Failed (True, with the reason, when the restore cannot succeed).', RESTORE_CONDITION_TYPES, 'Condition type: Complete or Failed.');

export const EtcdRestoreStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the status was computed from.', format: 'int64', minimum: 0 })),
    phase: Type.Optional(
      stringEnum(RESTORE_PHASES, {
        description: 'Pending (waiting for the backup, or refused: see conditions), Restoring (the EtcdCluster exists and its members restore the snapshot), Succeeded (the cluster is Available) or Failed (the backup failed or did not succeed within backupWaitSeconds, or the cluster refused the snapshot).',
      }),
    ),
    clusterUID: Type.Optional(Type.String({ description: 'UID of the EtcdCluster this restore created.' })),
    startedAt: Type.Optional(Type.String({ description: 'When the EtcdCluster was created.', format: 'date-time' })),
    completedAt: Type.Optional(Type.String({ description: 'When the restore succeeded or failed.', format: 'date-time' })),
    conditions: Type.Optional(conditions),
  },
  { description: 'Observed state of the restore, written by the operator.' },
);

export const EtcdRestoreSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: 'APIVersion of this object: etcd.quorum.dev/v1alpha1.' })),
    kind: Type.Optional(Type.String({ description: 'Kind of this object: EtcdRestore.' })),
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: 'object' })),
    spec: EtcdRestoreSpecSchema,
    status: Type.Optional(EtcdRestoreStatusSchema),
  },
  { description: 'A new EtcdCluster started from a backup (spec.bootstrap.fromBackup). The cluster is not owned by the EtcdRestore: deleting the restore record keeps the cluster.' },
);
