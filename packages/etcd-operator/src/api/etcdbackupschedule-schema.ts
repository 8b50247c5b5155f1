// The schemas of the API declared in the module of the same name without -schema (TypeBox): the CRD (crd.ts),
// the reference (reference/api.ts) and the schema as data the operator reads at run time (schema-data.ts,
// generated) are built from them, and the API module takes its types from them with `import type`. Loaded by the
// generators, the installers and tests, not by the operator's process (docs/memory.md).
import { Type } from '@sinclair/typebox';
import { conditionList, stringEnum } from './schema-nodes.ts';
import type { ObjectMeta } from '@quorum/runtime';
import { DestinationSchema } from './destination-schema.ts';
import { MAX_NAME_LENGTH, NAME_PATTERN } from './etcdcluster.ts';
import { CONCURRENCY_POLICIES, SCHEDULE_CONDITION_TYPES, DURATION_PATTERN, MAX_SCHEDULE_NAME_LENGTH } from './etcdbackupschedule.ts';

export const RetentionSchema = Type.Object(
  {
    maxCount: Type.Optional(Type.Integer({ description: 'Keep at most this many successful backups (and this many failed backup records); older ones are deleted, stored object first.', format: 'int32', minimum: 1, maximum: 10000 })),
    maxAge: Type.Optional(Type.String({ description: 'Delete backups scheduled longer ago than this duration (e.g. `168h`), except the newest successful one.', pattern: DURATION_PATTERN, maxLength: 32 })),
  },
  { description: 'Which backups of this schedule to keep. Applied after a backup succeeds and as backups age. Unset: all are kept.' },
);

export const EtcdBackupScheduleSpecSchema = Type.Object(
  {
    clusterName: Type.String({ description: 'The EtcdCluster in the same namespace to back up.', pattern: NAME_PATTERN, minLength: 1, maxLength: MAX_NAME_LENGTH }),
    schedule: Type.String({
      description:
        'When to take a backup: a five-field cron expression in UTC (minute hour day-of-month month day-of-week, e.g. `0 3 * * *`), or a macro such as `@daily`. The operator parses it (cron-parser) and reports one that does not parse as Ready=False, reason InvalidSchedule. After the operator was down, or the schedule suspended, only the latest missed time is taken.',
      minLength: 1,
      maxLength: 256,
    }),
    destination: DestinationSchema,
    retention: Type.Optional(RetentionSchema),
    suspend: Type.Optional(Type.Boolean({ description: 'Take no new backups while true; retention still applies. Running backups finish.', default: false })),
    concurrencyPolicy: Type.Optional(
      stringEnum(CONCURRENCY_POLICIES, {
        description: 'Forbid: a scheduled time is skipped while a backup of this schedule is still Running (it is not taken later).',
        default: 'Forbid',
      }),
    ),
  },
  { description: 'Which cluster to back up, when, where to, and how many backups to keep.' },
);

const conditions = conditionList('Ready (False, reason InvalidSchedule, when the schedule does not parse), BackupsFailing (True when the newest finished backup failed) and RetentionFailing (True while deleting an expired backup fails).', SCHEDULE_CONDITION_TYPES, 'Condition type: Ready, BackupsFailing or RetentionFailing.');

export const LastFailureSchema = Type.Object(
  {
    time: Type.String({ description: 'When the backup failed.', format: 'date-time' }),
    backup: Type.String({ description: 'The EtcdBackup that failed (its record may since have been pruned).' }),
    reason: Type.String({ description: "The backup's failure reason (e.g. NoQuorum, AccessDenied)." }),
    message: Type.String({ description: "The backup's failure message." }),
  },
  { description: 'The most recent failed backup of this schedule.' },
);

export const EtcdBackupScheduleStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the status was computed from.', format: 'int64', minimum: 0 })),
    lastScheduleTime: Type.Optional(Type.String({ description: 'The scheduled time of the newest backup this schedule created.', format: 'date-time' })),
    lastSuccessfulTime: Type.Optional(Type.String({ description: 'When the newest successful backup of this schedule completed.', format: 'date-time' })),
    lastFailure: Type.Optional(LastFailureSchema),
    nextScheduleTime: Type.Optional(Type.String({ description: 'The next scheduled time; unset while suspended or invalid.', format: 'date-time' })),
    active: Type.Optional(Type.String({ description: 'The EtcdBackup of this schedule that is Pending or Running, if any.' })),
    conditions: Type.Optional(conditions),
  },
  { description: 'Observed state of the schedule, written by the operator.' },
);

export const EtcdBackupScheduleSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: 'APIVersion of this object: etcd.quorum.dev/v1alpha1.' })),
    kind: Type.Optional(Type.String({ description: 'Kind of this object: EtcdBackupSchedule.' })),
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({
      type: 'object',
      properties: {
        name: {
          description: `Schedule name: a DNS-1035 label of at most ${MAX_SCHEDULE_NAME_LENGTH} characters; its backups are named <schedule>-<unix time of the scheduled time>.`,
          type: 'string',
          pattern: NAME_PATTERN,
          maxLength: MAX_SCHEDULE_NAME_LENGTH,
        },
      },
    })),
    spec: EtcdBackupScheduleSpecSchema,
    status: Type.Optional(EtcdBackupScheduleStatusSchema),
  },
  { description: 'EtcdBackups of an EtcdCluster taken on a cron schedule, with retention by count and age: expired backups are deleted from the store, then their EtcdBackup records.' },
);
