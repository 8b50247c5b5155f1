// The EtcdRestore API (etcd.quorum.dev/v1alpha1): the imperative twin of spec.bootstrap.fromBackup, as
// CoreOS's operator had it. It creates a new EtcdCluster that starts from a backup, and reports how that
// restore goes. The CRD, the types and its section of docs/api.md all come from the schemas in this file.
import { Type, type Static, type TSchema } from '@sinclair/typebox';
import type { Condition } from '@quorum/runtime';
import { conditionList, stringEnum } from './schema-nodes.ts';
import type { ObjectMeta } from '@quorum/runtime';
import { DestinationSchema, type Destination } from './destination.ts';
import { EtcdClusterSpecSchema, GROUP, MAX_NAME_LENGTH, NAME_PATTERN, VERSION, type EtcdClusterSpec } from './etcdcluster.ts';

export const RESTORE_KIND = 'EtcdRestore';
export const RESTORE_LIST_KIND = 'EtcdRestoreList';
export const RESTORE_PLURAL = 'etcdrestores';
export const RESTORE_SINGULAR = 'etcdrestore';
export const RESTORE_SHORT_NAMES: readonly string[] = ['etcdrestore'];
export const RESTORE_API_VERSION = `${GROUP}/${VERSION}`;

export const RESTORE_PHASES = ['Pending', 'Restoring', 'Succeeded', 'Failed'] as const;
export type RestorePhase = (typeof RESTORE_PHASES)[number];

/** Condition types of an EtcdRestore: Complete (True once the new cluster is Available) and Failed (True with the reason). */
export const RESTORE_CONDITION_TYPES = ['Complete', 'Failed'] as const;

export const RESTORE_RULES = {
  specImmutable: { rule: 'self == oldSelf', message: 'an EtcdRestore spec is immutable: create a new EtcdRestore for another restore' },
  source: {
    // sha256 with destination and key: the members check the snapshot against it (an EtcdBackup records its own).
    rule: 'has(self.backupName) ? !has(self.destination) && !has(self.key) && !has(self.sha256) : has(self.destination) && has(self.key) && has(self.sha256)',
    message: 'an EtcdRestore must set either backupName, or destination, key and sha256 (the snapshot is checked against it before any member starts)',
  },
  version: {
    rule: "!has(self.clusterSpec) || !has(self.clusterSpec.version) || !self.clusterSpec.version.startsWith('3.4.')",
    message: 'a restore needs etcd 3.5 or newer (members are restored with etcdutl, which 3.4 lacks)',
  },
} as const;

/** spec.backupWaitSeconds when unset: an hour (the CRD defaults it; the operator's own code does too). */
export const DEFAULT_BACKUP_WAIT_SECONDS = 3600;

/** The EtcdCluster spec fields a restore may set for the new cluster, with EtcdCluster's own schemas. */
export const RESTORE_CLUSTER_SPEC_FIELDS = ['replicas', 'version', 'repository', 'image', 'storage', 'podTemplate', 'antiAffinity', 'etcd', 'tls'] as const;

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

export type EtcdRestoreStatus = Static<typeof EtcdRestoreStatusSchema>;
export type RestoreCondition = Condition;
export type RestoreClusterSpec = Pick<EtcdClusterSpec, (typeof RESTORE_CLUSTER_SPEC_FIELDS)[number]>;

export interface EtcdRestore {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: { clusterName: string; backupName?: string; destination?: Destination; key?: string; sha256?: string; clusterSpec?: RestoreClusterSpec; backupWaitSeconds?: number };
  status?: EtcdRestoreStatus;
}
