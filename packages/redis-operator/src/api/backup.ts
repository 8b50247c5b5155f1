// The RedisBackup API (redis.quorum.dev/v1alpha1): one RDB of a named Redis, streamed from a replica into a
// storage destination (S3-compatible, GCS, Azure Blob, or a PVC). Declared once, like the Redis kind: the CRD
// (crd.ts), the operator's validation (defaults.ts) and the reference in docs/redis.md (docs.ts) come from here.
// The destination schema is the kit's, shared with the etcd operator's backups.
import { Type, type Static, type TUnsafe } from '@sinclair/typebox';
import type { Condition, ObjectMeta } from '@quorum/runtime';
import { conditionSchema } from '@quorum/runtime/crd';
import { DestinationSchema } from './destination.ts';
import { MAX_NAME_LENGTH, NAME_PATTERN, type CelRule } from './redis.ts';

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

function stringEnum<const T extends readonly string[]>(values: T, options: Record<string, unknown>): TUnsafe<T[number]> {
  return Type.Unsafe<T[number]>({ ...options, type: 'string', enum: [...values] });
}

export const RedisBackupSpecSchema = Type.Object(
  {
    redisName: Type.String({ description: 'The Redis in this namespace to back up.', pattern: NAME_PATTERN, minLength: 1, maxLength: MAX_NAME_LENGTH }),
    destination: DestinationSchema,
  },
  { description: 'Which Redis to back up, and where the RDB goes.', 'x-kubernetes-validations': [BACKUP_RULES.specImmutable] },
);

export const AttemptFailureSchema = Type.Object(
  {
    attempt: Type.Integer({ description: 'Which attempt failed (1 is the first).' }),
    reason: Type.String({ description: 'Machine-readable reason (e.g. SourceUnreachable, StorageForbidden, NotAnRdb).', maxLength: 64 }),
    message: Type.String({ description: 'What failed, in the words of the server or the store.', maxLength: 4096 }),
    at: Type.String({ description: 'When the attempt ended.', format: 'date-time' }),
  },
  { description: 'The last failed attempt.' },
);

export const RedisBackupStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'The generation this status describes.' })),
    phase: Type.Optional(stringEnum(BACKUP_PHASES, { description: 'Pending, Running (a Job streams the RDB), Succeeded or Failed (for good: past its attempts, or refused).' })),
    conditions: Type.Optional(
      Type.Unsafe<Condition[]>({
        description: 'Complete (the RDB is stored), Failed.',
        type: 'array',
        items: conditionSchema({ description: 'The condition type.', enum: [...BACKUP_CONDITION_TYPES] }),
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
    source: Type.Optional(Type.String({ description: 'The instance the RDB is streamed from.', maxLength: 63 })),
    sourceRole: Type.Optional(stringEnum(['replica', 'primary'] as const, { description: 'replica, or primary only for a Redis without replicas (spec.replicas 0): the primary then forks for the snapshot.' })),
    attempts: Type.Optional(Type.Integer({ description: `Attempts so far (at most ${MAX_BACKUP_ATTEMPTS}).` })),
    lastFailure: Type.Optional(AttemptFailureSchema),
    job: Type.Optional(Type.String({ description: 'The Job of the current (or last) attempt.', maxLength: 63 })),
    startedAt: Type.Optional(Type.String({ description: 'When the first attempt began.', format: 'date-time' })),
    completedAt: Type.Optional(Type.String({ description: 'When it succeeded or failed for good.', format: 'date-time' })),
    key: Type.Optional(Type.String({ description: 'The object key in the destination.', maxLength: 1024 })),
    location: Type.Optional(Type.String({ description: 'Where the RDB is: s3://bucket/key, gs://…, azure://container/key or pvc://claim/key.', maxLength: 2048 })),
    sizeBytes: Type.Optional(Type.Integer({ description: 'Bytes stored.' })),
    sha256: Type.Optional(Type.String({ description: 'Hex SHA-256 of the stored RDB, computed as it streamed; also stored beside it as `<key>.sha256`.', maxLength: 64 })),
    serverVersion: Type.Optional(Type.String({ description: 'The version of the server the RDB came from (a restore needs that version or newer).', maxLength: 32 })),
  },
  { description: 'Written by the operator through the /status subresource.' },
);

export const RedisBackupSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    metadata: Type.Optional(Type.Unsafe<ObjectMeta>({ type: 'object' })),
    spec: RedisBackupSpecSchema,
    status: Type.Optional(RedisBackupStatusSchema),
  },
  { description: 'One RDB snapshot of a Redis, streamed from a replica into object storage or a volume, hash-verified.' },
);

export type RedisBackupSpec = Static<typeof RedisBackupSpecSchema>;
export type RedisBackupStatus = Static<typeof RedisBackupStatusSchema>;
export type BackupPhase = (typeof BACKUP_PHASES)[number];
