// The RedisBackupSchedule API (redis.quorum.dev/v1alpha1): RedisBackups of a named Redis taken on a cron schedule,
// with retention by count and age, built like the etcd operator's EtcdBackupSchedule on the kit's backup-schedule
// planner. Declared once: the CRD (crd.ts) and the reference in docs/redis.md (docs.ts) come from here.
import type { Static } from '@sinclair/typebox';
import type { CelRule } from './redis.ts';
import type { RedisBackupScheduleSpecSchema, RedisBackupScheduleStatusSchema } from './schedule-schema.ts';

export const SCHEDULE_KIND = 'RedisBackupSchedule';
export const SCHEDULE_LIST_KIND = 'RedisBackupScheduleList';
export const SCHEDULE_PLURAL = 'redisbackupschedules';
export const SCHEDULE_SINGULAR = 'redisbackupschedule';
export const SCHEDULE_SHORT_NAMES: readonly string[] = ['rdsbks'];
export const SCHEDULE_CONDITION_TYPES = ['Ready', 'BackupsFailing', 'RetentionFailing'] as const;
/** A schedule's backups are named `<schedule>-<unix seconds>` (11 characters more): still a label value (63 at most). */
export const MAX_SCHEDULE_NAME_LENGTH = 45;
/** A Go-style duration of hours, minutes and seconds (`168h`, `1h30m`), as the kit's durationMs reads it. */
export const DURATION_PATTERN = '^([0-9]+(\\.[0-9]+)?(h|m|s))+$';

export const SCHEDULE_RULES = {
  // The credentials Secret a destination names is checked against its author at creation (the webhook): a later
  // edit would let whoever may update the schedule point it at another Secret unchecked.
  destinationImmutable: { rule: 'self.destination == oldSelf.destination', message: 'spec.destination cannot change: create another RedisBackupSchedule (its credentials are checked at creation)' },
} as const satisfies Record<string, CelRule>;

export type RedisBackupScheduleSpec = Static<typeof RedisBackupScheduleSpecSchema>;
export type RedisBackupScheduleStatus = Static<typeof RedisBackupScheduleStatusSchema>;
