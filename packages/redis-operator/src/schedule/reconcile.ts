// The RedisBackupSchedule reconciler: the kit's backup-schedule reconciler (as the etcd operator's), bound to
// RedisBackups of a Redis and to their prune Jobs (prune-job.ts). It observes the schedule, its RedisBackups and
// the Jobs deleting expired stored RDBs, plans one step, acts (create a RedisBackup, start or retry a prune Job,
// delete a record), reports (the status, written only when it changed), then requeues at the next scheduled time.
import { FIELD_MANAGER } from '../names.ts';
import { backupScheduleReconciler, type BackupScheduleKind, type BackupScheduleReconcilerDeps } from '@quorum/kit';
import type { Reconciler } from '@quorum/runtime';
import { BACKUP_KIND } from '../api/backup.ts';
import { API_VERSION } from '../api/redis.ts';
import { Jobs, RedisBackups, RedisBackupSchedules, type RedisBackupObject, type RedisBackupScheduleObject } from '../resources.ts';
import { isOwnPruneJob, observePruneJob, podsOfPruneJob, pruneJob, pruneJobName, SCHEDULE_LABEL, SCHEDULED_AT_ANNOTATION } from './prune-job.ts';

/** A schedule's labels on its series and log lines. */
export type ScheduleLabels = { namespace: string; schedule: string; redis: string };

/** What the reconciler reads and writes through: the kit's, for RedisBackupSchedules. */
export type ScheduleReconcilerDeps = BackupScheduleReconcilerDeps<RedisBackupScheduleObject, RedisBackupObject, ScheduleLabels>;

export const REDIS_BACKUP_SCHEDULES: BackupScheduleKind<RedisBackupScheduleObject, RedisBackupObject, ScheduleLabels> = {
  schedules: RedisBackupSchedules,
  backups: RedisBackups,
  backupKind: BACKUP_KIND,
  scheduleLabel: SCHEDULE_LABEL,
  scheduledAtAnnotation: SCHEDULED_AT_ANNOTATION,
  fieldManager: FIELD_MANAGER,
  storedNoun: 'RDB',
  target: (schedule) => `Redis ${schedule.spec.redisName}`,
  labels: (schedule) => ({ namespace: schedule.metadata.namespace ?? '', schedule: schedule.metadata.name ?? '', redis: schedule.spec.redisName }),
  backup: (schedule, metadata) => ({ apiVersion: API_VERSION, kind: BACKUP_KIND, metadata, spec: { redisName: schedule.spec.redisName, destination: schedule.spec.destination } }),
  pruneJobName,
  pruneJob,
  isOwnPruneJob,
  podsOfPruneJob,
  observePruneJob,
  // The operator's role may get Jobs: a Job without its labels (not in the cache) is asked for by name.
  findJob: (client, key) => client.find(Jobs, key),
};

export function redisBackupScheduleReconciler(deps: ScheduleReconcilerDeps): Reconciler {
  return backupScheduleReconciler(REDIS_BACKUP_SCHEDULES, deps);
}
