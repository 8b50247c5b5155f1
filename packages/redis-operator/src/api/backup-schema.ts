// The schemas of the API declared in the module of the same name without -schema (TypeBox): the CRD (crd.ts),
// the reference in docs/redis.md (docs.ts) and the schemas as data the operator reads at run time (schema-data.ts,
// generated) are built from them, and the API module takes its types from them with `import type`. Loaded by the
// generators, the installers and tests, not by the operator's process (docs/memory.md).
import { Type } from '@sinclair/typebox';
import type { Condition, ObjectMeta } from '@quorum/runtime';
import { conditionSchema } from '@quorum/runtime/crd';
import { stringEnum } from '@quorum/kit/schema';
import { DestinationSchema } from './destination-schema.ts';
import { MAX_NAME_LENGTH, NAME_PATTERN } from './redis.ts';
import { BACKUP_PHASES, BACKUP_CONDITION_TYPES, MAX_BACKUP_ATTEMPTS, BACKUP_RULES } from './backup.ts';

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
