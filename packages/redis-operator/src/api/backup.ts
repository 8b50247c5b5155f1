// The RedisBackup API (redis.quorum.dev/v1alpha1): one RDB of a named Redis, streamed from a replica into a
// storage destination (S3-compatible, GCS, Azure Blob, or a PVC). Declared once, like the Redis kind: the CRD
// (crd.ts), the operator's validation (defaults.ts) and the reference in docs/redis.md (docs.ts) come from here.
// The destination schema is the kit's, shared with the etcd operator's backups.
import type { Static } from '@sinclair/typebox';
import type { CelRule } from './redis.ts';
import type { RedisBackupSpecSchema, RedisBackupStatusSchema } from './backup-schema.ts';

export const BACKUP_KIND = 'RedisBackup';
export const BACKUP_LIST_KIND = 'RedisBackupList';
export const BACKUP_PLURAL = 'redisbackups';
export const BACKUP_SINGULAR = 'redisbackup';
export const BACKUP_SHORT_NAMES: readonly string[] = ['rdsbk'];

export const BACKUP_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;
export const BACKUP_CONDITION_TYPES = ['Complete', 'Failed'] as const;
/** Attempts of one backup (a Job each) before it fails: a transient refusal (a replica restarting) is retried. */
export const MAX_BACKUP_ATTEMPTS = 3;
/** The label (value "true") that marks a Secret as storage credentials the Redis operator may mount. */
export const REDIS_BACKUP_CREDENTIALS_LABEL = 'redis.quorum.dev/backup-credentials';

export const BACKUP_RULES = {
  specImmutable: { rule: 'self == oldSelf', message: 'spec is immutable: a RedisBackup is taken once (create another to take another)' },
} as const satisfies Record<string, CelRule>;

export type RedisBackupSpec = Static<typeof RedisBackupSpecSchema>;
export type RedisBackupStatus = Static<typeof RedisBackupStatusSchema>;
export type BackupPhase = (typeof BACKUP_PHASES)[number];
