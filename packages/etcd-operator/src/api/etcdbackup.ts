// The EtcdBackup API (etcd.quorum.dev/v1alpha1): one snapshot of one EtcdCluster, stored in an object store
// bucket or on a PVC. The CRD, the types and docs/api-backup.md all come from the schemas in
// etcdbackup-schema.ts; this file holds the names and types the operator uses at run time.
import type { Static } from '@sinclair/typebox';
import type { Condition } from '@quorum/runtime';
import type { ObjectMeta } from '@quorum/runtime';
import type { Destination } from './destination.ts';
import { GROUP, VERSION } from './etcdcluster.ts';
import type { EtcdBackupSpecSchema, EtcdBackupStatusSchema } from './etcdbackup-schema.ts';

export const BACKUP_KIND = 'EtcdBackup';
export const BACKUP_LIST_KIND = 'EtcdBackupList';
export const BACKUP_PLURAL = 'etcdbackups';
export const BACKUP_SINGULAR = 'etcdbackup';
export const BACKUP_SHORT_NAMES: readonly string[] = ['etcdbackup'];

export const BACKUP_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;
export type BackupPhase = (typeof BACKUP_PHASES)[number];

/** Condition types of an EtcdBackup: Complete (True once stored) and Failed (True with the reason). */
export const BACKUP_CONDITION_TYPES = ['Complete', 'Failed'] as const;

export const BACKUP_RULES = {
  specImmutable: { rule: 'self == oldSelf', message: 'an EtcdBackup spec is immutable: create a new EtcdBackup for another backup' },
} as const;

export type EtcdBackupSpec = Static<typeof EtcdBackupSpecSchema>;
export type EtcdBackupStatus = Static<typeof EtcdBackupStatusSchema>;
export type BackupCondition = Condition;

export interface EtcdBackup {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: { clusterName: string; destination: Destination };
  status?: EtcdBackupStatus;
}

export const BACKUP_API_VERSION = `${GROUP}/${VERSION}`;
