// The EtcdBackupSchedule reconciler: the kit's backup-schedule reconciler (as the Redis operator's), bound to
// EtcdBackups of a cluster and to their prune Jobs (prune-job.ts). It observes the schedule, its EtcdBackups and
// the Jobs deleting expired stored backups, plans one step, acts (create a backup, start or retry a delete Job,
// delete a record), reports (the status, written only when it changed, and the metrics), then requeues at the
// next scheduled time.
import { backupScheduleReconciler, type BackupScheduleKind, type BackupScheduleReconcilerDeps } from '@quorum/kit';
import type { Client, Job, Reconciler } from '@quorum/runtime';
import { BACKUP_KIND, type EtcdBackup } from '../api/etcdbackup.ts';
import { SCHEDULE_API_VERSION, type EtcdBackupSchedule } from '../api/etcdbackupschedule.ts';
import { podsOfJob } from '../backup/job.ts';
import { FIELD_MANAGER } from '../names.ts';
import { EtcdBackupSchedules, EtcdBackups, Jobs } from '../resources.ts';
import type { ScheduleLabels } from './metrics.ts';
import { isOwnPruneJob, observePruneJob, pruneJob, pruneJobName, SCHEDULE_LABEL, SCHEDULED_AT_ANNOTATION } from './prune-job.ts';

/** What the reconciler reads and writes through: the kit's, for EtcdBackupSchedules. */
export type ScheduleReconcilerDeps = BackupScheduleReconcilerDeps<EtcdBackupSchedule, EtcdBackup, ScheduleLabels>;

export { scheduledBackupName } from '@quorum/kit';

/** The Job of that name, asked of the API by a list with a name field selector: the operator's role lists Jobs, it does not get them. */
async function jobNamed(client: Client, key: { namespace: string; name: string }, signal: AbortSignal): Promise<Job | undefined> {
  const list = await client.list(Jobs, { namespace: key.namespace, fieldSelector: `metadata.name=${key.name}`, signal });
  return list.items[0];
}

export const ETCD_BACKUP_SCHEDULES: BackupScheduleKind<EtcdBackupSchedule, EtcdBackup, ScheduleLabels> = {
  schedules: EtcdBackupSchedules,
  backups: EtcdBackups,
  backupKind: BACKUP_KIND,
  scheduleLabel: SCHEDULE_LABEL,
  scheduledAtAnnotation: SCHEDULED_AT_ANNOTATION,
  fieldManager: FIELD_MANAGER,
  storedNoun: 'object',
  target: (schedule) => schedule.spec.clusterName,
  labels: (schedule) => ({ namespace: schedule.metadata.namespace ?? '', schedule: schedule.metadata.name ?? '', cluster: schedule.spec.clusterName }),
  backup: (schedule, metadata) => ({ apiVersion: SCHEDULE_API_VERSION, kind: BACKUP_KIND, metadata, spec: { clusterName: schedule.spec.clusterName, destination: schedule.spec.destination } }),
  pruneJobName,
  pruneJob,
  isOwnPruneJob,
  podsOfPruneJob: podsOfJob,
  observePruneJob,
  findJob: jobNamed,
};

export function etcdBackupScheduleReconciler(deps: ScheduleReconcilerDeps): Reconciler {
  return backupScheduleReconciler(ETCD_BACKUP_SCHEDULES, deps);
}
