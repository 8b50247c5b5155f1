// Where the operator's kinds live in the API, for the runtime's typed client and informers.
import { resource, type KubeObject } from '@quorum/runtime';
import { BACKUP_KIND, BACKUP_PLURAL, type RedisBackupSpec, type RedisBackupStatus } from './api/backup.ts';
import { API_VERSION, KIND, PLURAL, type RedisStatus } from './api/redis.ts';
import { SCHEDULE_KIND, SCHEDULE_PLURAL, type RedisBackupScheduleSpec, type RedisBackupScheduleStatus } from './api/schedule.ts';

export { Jobs } from '@quorum/runtime';

/** A Redis as read from the API: the spec is defaulted and validated in code before use (api/defaults.ts). */
export type RedisObject = KubeObject & { spec?: unknown; status?: RedisStatus };
/** A RedisBackup: the API server validated the spec against the CRD (the operator checks again: api/defaults.ts). */
export type RedisBackupObject = KubeObject & { spec: RedisBackupSpec; status?: RedisBackupStatus };

export const Redises = resource<RedisObject>(API_VERSION, KIND, PLURAL, true);
export const RedisBackups = resource<RedisBackupObject>(API_VERSION, BACKUP_KIND, BACKUP_PLURAL, true);
/** A RedisBackupSchedule: the API server validated the spec against the CRD; the schedule is parsed in code (kit). */
export type RedisBackupScheduleObject = KubeObject & { spec: RedisBackupScheduleSpec; status?: RedisBackupScheduleStatus };
export const RedisBackupSchedules = resource<RedisBackupScheduleObject>(API_VERSION, SCHEDULE_KIND, SCHEDULE_PLURAL, true);
