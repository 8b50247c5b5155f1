// The RedisBackupSchedule schemas (TypeBox), for the CRD (crd.ts) and the reference in docs/redis.md (docs.ts); the
// API module (schedule.ts) takes its types from them with `import type`.
import { Type } from '@sinclair/typebox';
import type { Condition, ObjectMeta } from '@quorum/runtime';
import { conditionSchema } from '@quorum/runtime/crd';
import { DestinationSchema } from './destination-schema.ts';
import { MAX_NAME_LENGTH, NAME_PATTERN } from './redis.ts';
import { DURATION_PATTERN, MAX_SCHEDULE_NAME_LENGTH, SCHEDULE_CONDITION_TYPES, SCHEDULE_RULES } from './schedule.ts';

export const RedisBackupScheduleSpecSchema = Type.Object(
  {
    redisName: Type.String({ description: 'The Redis in this namespace to back up.', pattern: NAME_PATTERN, minLength: 1, maxLength: MAX_NAME_LENGTH }),
    schedule: Type.String({
      description:
        'When to take a backup: a five-field cron expression in UTC (minute hour day-of-month month day-of-week, e.g. `0 3 * * *`), a macro such as `@daily`, or `H` for a minute or hour chosen from the schedule\'s namespace and name (spreads schedules). One that does not parse is refused by the webhook and reported as Ready=False, reason InvalidSchedule. After the operator was down, or the schedule suspended, only the latest missed time is taken; a time at which a backup of the schedule still runs is skipped.',
      minLength: 1,
      maxLength: 256,
    }),
    destination: DestinationSchema,
    retention: Type.Optional(
      Type.Object(
        {
          maxCount: Type.Optional(Type.Integer({ description: 'Keep at most this many successful backups (and this many failed backup records); older ones are deleted, stored RDB first.', format: 'int32', minimum: 1, maximum: 10000 })),
          maxAge: Type.Optional(Type.String({ description: 'Delete backups scheduled longer ago than this duration (e.g. `168h`), except the newest successful one.', pattern: DURATION_PATTERN, maxLength: 32 })),
        },
        { description: 'Which backups of this schedule to keep. Applied after a backup succeeds and as backups age. Unset: all are kept.' },
      ),
    ),
    suspend: Type.Optional(Type.Boolean({ description: 'Take no new backups while true; retention still applies. Running backups finish.', default: false })),
  },
  { description: 'Which Redis to back up, when, where to, and how many backups to keep.', 'x-kubernetes-validations': [SCHEDULE_RULES.destinationImmutable] },
);

export const RedisBackupScheduleStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the status was computed from.', format: 'int64', minimum: 0 })),
    lastScheduleTime: Type.Optional(Type.String({ description: 'The scheduled time of the newest backup this schedule created.', format: 'date-time' })),
    lastSuccessfulTime: Type.Optional(Type.String({ description: 'When the newest successful backup of this schedule completed.', format: 'date-time' })),
    lastFailure: Type.Optional(
      Type.Object(
        {
          time: Type.String({ description: 'When the backup failed.', format: 'date-time' }),
          backup: Type.String({ description: 'The RedisBackup that failed (its record may since have been pruned).' }),
          reason: Type.String({ description: "The backup's failure reason (e.g. SourceUnreachable, StorageForbidden)." }),
          message: Type.String({ description: "The backup's failure message." }),
        },
        { description: 'The most recent failed backup of this schedule.' },
      ),
    ),
    nextScheduleTime: Type.Optional(Type.String({ description: 'The next scheduled time; unset while suspended or invalid.', format: 'date-time' })),
    active: Type.Optional(Type.String({ description: 'The RedisBackup of this schedule that is Pending or Running, if any.' })),
    conditions: Type.Optional(
      Type.Unsafe<Condition[]>({
        description: 'Ready (False, reason InvalidSchedule, when the schedule does not parse), BackupsFailing (True when the newest finished backup failed) and RetentionFailing (True while deleting an expired backup fails, or a Job not its own holds its prune Job\'s name: reason JobNameTaken).',
        type: 'array',
        items: conditionSchema({ description: 'Condition type: Ready, BackupsFailing or RetentionFailing.', enum: [...SCHEDULE_CONDITION_TYPES] }),
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
  },
  { description: 'Observed state of the schedule, written by the operator.' },
);

export const RedisBackupScheduleSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(
      Type.Unsafe<ObjectMeta>({
        type: 'object',
        properties: {
          name: { description: `Schedule name: a DNS-1035 label of at most ${MAX_SCHEDULE_NAME_LENGTH} characters; its backups are named <schedule>-<unix time of the scheduled time>.`, type: 'string', pattern: NAME_PATTERN, maxLength: MAX_SCHEDULE_NAME_LENGTH },
        },
      }),
    ),
    spec: RedisBackupScheduleSpecSchema,
    status: Type.Optional(RedisBackupScheduleStatusSchema),
  },
  { description: 'RedisBackups of a Redis on a cron schedule (UTC), with retention by count and age; expired backups are deleted with their stored RDB.' },
);
