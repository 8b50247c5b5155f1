// The EtcdBackupSchedule API (etcd.quorum.dev/v1alpha1): EtcdBackups of one EtcdCluster taken on a cron
// schedule, with retention by count and age. The CRD, the types and its section of docs/api.md all come
// from the schemas in etcdbackupschedule-schema.ts; this file holds the names and types used at run time.
import type { Static } from '@sinclair/typebox';
import type { Condition } from '@quorum/runtime';
import type { ObjectMeta } from '@quorum/runtime';
import type { Destination } from './destination.ts';
import { GROUP, VERSION } from './etcdcluster.ts';
import type { RetentionSchema, EtcdBackupScheduleSpecSchema, EtcdBackupScheduleStatusSchema } from './etcdbackupschedule-schema.ts';

export const SCHEDULE_KIND = 'EtcdBackupSchedule';
export const SCHEDULE_LIST_KIND = 'EtcdBackupScheduleList';
export const SCHEDULE_PLURAL = 'etcdbackupschedules';
export const SCHEDULE_SINGULAR = 'etcdbackupschedule';
export const SCHEDULE_SHORT_NAMES: readonly string[] = ['etcdbackupschedule'];
export const SCHEDULE_API_VERSION = `${GROUP}/${VERSION}`;

export const CONCURRENCY_POLICIES = ['Forbid'] as const;
export type ConcurrencyPolicy = (typeof CONCURRENCY_POLICIES)[number];

/**
 * Condition types of an EtcdBackupSchedule: Ready (False with reason InvalidSchedule when the cron
 * expression does not parse), BackupsFailing (True when the newest finished backup failed) and
 * RetentionFailing (True while deleting an expired stored backup fails).
 */
export const SCHEDULE_CONDITION_TYPES = ['Ready', 'BackupsFailing', 'RetentionFailing'] as const;

/** A duration as Go writes it, in hours, minutes and seconds: `168h`, `90m`, `1h30m`. */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(h|m|s))+$';

/** The longest schedule name whose backups' names (`<schedule>-<unix seconds>`) still fit a cluster-like name. */
export const MAX_SCHEDULE_NAME_LENGTH = 52;

export type EtcdBackupScheduleSpec = Static<typeof EtcdBackupScheduleSpecSchema>;
export type EtcdBackupScheduleStatus = Static<typeof EtcdBackupScheduleStatusSchema>;
export type Retention = Static<typeof RetentionSchema>;
export type ScheduleCondition = Condition;

export interface EtcdBackupSchedule {
  apiVersion?: string;
  kind?: string;
  metadata: ObjectMeta;
  spec: Omit<EtcdBackupScheduleSpec, 'destination'> & { destination: Destination };
  status?: EtcdBackupScheduleStatus;
}
