// The EtcdBackupSchedule decision: the backup-schedule planner of @quorum/kit (planSchedule: the one next step),
// bound here to the EtcdBackupSchedule status and to what it backs up, an EtcdCluster.
import { backupScheduleStatus, type ScheduleAction, type ScheduleObserved } from '@quorum/kit';
import { BACKUP_KIND } from '../api/etcdbackup.ts';
import type { EtcdBackupScheduleStatus } from '../api/etcdbackupschedule.ts';

/** The status to report (backupScheduleStatus), naming the cluster the schedule backs up. */
export function scheduleStatus(o: ScheduleObserved, action: ScheduleAction, previous: EtcdBackupScheduleStatus, context: { generation: number; clusterName: string; createdBackup?: string }): EtcdBackupScheduleStatus {
  const { clusterName, ...rest } = context;
  return backupScheduleStatus(o, action, previous, { ...rest, target: clusterName, backupKind: BACKUP_KIND });
}
