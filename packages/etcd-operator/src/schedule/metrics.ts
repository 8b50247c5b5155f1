// An EtcdBackupSchedule's metrics are the kit's backup-schedule metrics (times, skipped times), under the labels
// the etcd operator gives each schedule: its namespace, name and cluster. The operator backs them with its registry.
import type { BackupScheduleMetrics } from '@quorum/kit';

export type ScheduleLabels = {
  namespace: string;
  schedule: string;
  cluster: string;
};

export type ScheduleMetrics = BackupScheduleMetrics<ScheduleLabels>;
