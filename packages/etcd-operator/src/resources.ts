// Where the operator's own kinds live in the API, for the runtime's typed client and informers.
import { resource } from '@quorum/runtime';
import { API_VERSION, GROUP, KIND, PLURAL, type EtcdCluster } from './api/etcdcluster.ts';
import { BACKUP_KIND, BACKUP_PLURAL, type EtcdBackup } from './api/etcdbackup.ts';
import { SCHEDULE_KIND, SCHEDULE_PLURAL, type EtcdBackupSchedule } from './api/etcdbackupschedule.ts';
import { RESTORE_KIND, RESTORE_PLURAL, type EtcdRestore } from './api/etcdrestore.ts';

export { GROUP };
export const EtcdClusters = resource<EtcdCluster>(API_VERSION, KIND, PLURAL, true);
export const EtcdBackups = resource<EtcdBackup>(API_VERSION, BACKUP_KIND, BACKUP_PLURAL, true);
export const EtcdBackupSchedules = resource<EtcdBackupSchedule>(API_VERSION, SCHEDULE_KIND, SCHEDULE_PLURAL, true);
export const EtcdRestores = resource<EtcdRestore>(API_VERSION, RESTORE_KIND, RESTORE_PLURAL, true);
/** batch/v1 Jobs (the runtime's, typed): backups, and the deletion of expired stored backups, run in them. */
export { Jobs } from '@quorum/runtime';
