// The Redis API (redis.quorum.dev/v1alpha1), declared once: the TypeScript types, the CRD's structural OpenAPI
// schema (crd.ts), the defaults and validation the operator applies (defaults.ts) and the reference in
// docs/redis.md (docs.ts) are all derived from the schemas in redis-schema.ts; this file holds the names, rules and
// types the operator uses at run time (types taken with `import type`), and defaults.ts reads schema-data.ts.
// Every field is built: a field whose
// behaviour does not exist yet is absent, so the API server rejects it instead of accepting it silently.
import type { Static } from '@sinclair/typebox';
import { selectorValuesRule } from '@quorum/kit';
import type { ConfigDirectiveSchema, RedisSpecSchema, InstanceStatusSchema, SentinelStatusSchema, RolloutStatusSchema, PlannedFailoverSchema, BootstrapStatusSchema, TlsStatusSchema, RedisStatusSchema } from './redis-schema.ts';

export const GROUP = 'redis.quorum.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'Redis';
export const LIST_KIND = 'RedisList';
export const PLURAL = 'redises';
export const SINGULAR = 'redis';
export const SHORT_NAMES: readonly string[] = ['rds'];

export const ENGINES = ['redis', 'valkey'] as const;
export type Engine = (typeof ENGINES)[number];
/**
 * The versions the operator runs, per engine: those it has an image for and has been tested with. Valkey's
 * list stays empty until its image (Debian bookworm-backports, valkey-tools) is assembled and tested.
 */
export const SUPPORTED_VERSIONS: Readonly<Record<Engine, readonly string[]>> = { redis: ['7.0.15'], valkey: ['8.0.1'] };
export const DEFAULT_ENGINE: Engine = 'redis';
export const DEFAULT_VERSION = '7.0.15';

export const MAX_REPLICAS = 8;
export const DEFAULT_REPLICAS = 2;
export const MAX_SENTINELS = 7;
export const DEFAULT_SENTINELS = 3;
/** Sentinel's own default: how long an instance must be unreachable before a Sentinel calls it down. */
export const DEFAULT_DOWN_AFTER_MS = 5000;
export const DEFAULT_FAILOVER_TIMEOUT_MS = 10_000;
/** With replicas, a primary refuses writes unless this many replicas acknowledged it within the lag below. */
export const DEFAULT_MIN_REPLICAS_MAX_LAG_S = 10;
export const DEFAULT_STORAGE_SIZE = '1Gi';

/** A name must be a DNS-1035 label (Service names are) short enough for the names derived from it. */
export const NAME_PATTERN = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
export const MAX_NAME_LENGTH = 45;
/** A positive resource.Quantity (`1Gi`, `500M`, `2.5Gi`, `250m` for CPU). */
export const QUANTITY_PATTERN = '^[0-9]+(\\.[0-9]+)?([KMGTPE]i|[kMGTPEm])?$';
/** A byte quantity without fractions or milli, as maxmemory is written (`256Mi`, `1G`, `1048576`). */
export const BYTES_PATTERN = '^[0-9]+([KMGTPE]i|[kMGTPE])?$';
/** One config value: a single line, so that a value cannot smuggle in a second directive. */
export const CONFIG_VALUE_PATTERN = '^[^\\r\\n]*$';

export const MAXMEMORY_POLICIES = ['noeviction', 'allkeys-lru', 'allkeys-lfu', 'allkeys-random', 'volatile-lru', 'volatile-lfu', 'volatile-random', 'volatile-ttl'] as const;
export const RECLAIM_POLICIES = ['Retain', 'Delete'] as const;
export const PHASES = ['Pending', 'Creating', 'Running', 'Updating', 'FailingOver', 'Degraded'] as const;
export const ROLES = ['primary', 'replica', 'unknown'] as const;
export const CONDITION_TYPES = ['Available', 'Progressing', 'Degraded'] as const;

/**
 * The redis.conf directives `spec.config` may set. Everything else is refused: either the operator manages it
 * (replication, ports, files, auth, persistence, memory limits have their own fields or are the operator's), or
 * it could break management (`rename-command`, `include`, `loadmodule`, `enable-debug-command`).
 */
export const ALLOWED_CONFIG = [
  'activedefrag',
  'activerehashing',
  'appendfsync',
  'auto-aof-rewrite-min-size',
  'auto-aof-rewrite-percentage',
  'busy-reply-threshold',
  'client-output-buffer-limit',
  'databases',
  'dynamic-hz',
  'hash-max-listpack-entries',
  'hash-max-listpack-value',
  'hz',
  'io-threads',
  'lazyfree-lazy-eviction',
  'lazyfree-lazy-expire',
  'lazyfree-lazy-server-del',
  'lazyfree-lazy-user-del',
  'latency-monitor-threshold',
  'list-compress-depth',
  'list-max-listpack-size',
  'lua-time-limit',
  'maxclients',
  'maxmemory-samples',
  'notify-keyspace-events',
  'proto-max-bulk-len',
  'repl-backlog-size',
  'repl-backlog-ttl',
  'repl-diskless-sync',
  'repl-diskless-sync-delay',
  'repl-timeout',
  'set-max-intset-entries',
  'slowlog-log-slower-than',
  'slowlog-max-len',
  'stream-node-max-bytes',
  'stream-node-max-entries',
  'tcp-keepalive',
  'timeout',
  'zset-max-listpack-entries',
  'zset-max-listpack-value',
] as const;
/** Directives a structured field sets, so that there is one way to set each: the refusal names the field. */
export const STRUCTURED_CONFIG: Readonly<Record<string, string>> = {
  maxmemory: 'spec.maxmemory',
  'maxmemory-policy': 'spec.maxmemoryPolicy',
  appendonly: 'spec.persistence.aof',
  save: 'spec.persistence.rdb',
  'min-replicas-to-write': 'spec.minReplicasToWrite',
  'min-replicas-max-lag': 'spec.minReplicasMaxLagSeconds',
  requirepass: 'spec.auth',
  masterauth: 'spec.auth',
};

/** A CEL rule (`x-kubernetes-validations` item); defaults.ts mirrors each one under the same message. */
export interface CelRule {
  rule: string;
  message: string;
}

const celList = (values: readonly string[]): string => `[${values.map((v) => `'${v}'`).join(', ')}]`;

// The API server also evaluates the rules on the schema's defaults themselves (`spec: {}` before its fields'
// defaults fill it): each rule passes when the fields it compares are absent.
function versionRule(): string {
  const byEngine = ENGINES.map((e) => `(self.engine == '${e}' && self.version in ${celList(SUPPORTED_VERSIONS[e])})`).join(' || ');
  return `!has(self.engine) || !has(self.version) || ${byEngine}`;
}

function supportedText(): string {
  return ENGINES.map((e) => `${e}: ${SUPPORTED_VERSIONS[e].join(', ') || 'none yet'}`).join('; ');
}

export const RULES = {
  supportedVersion: {
    rule: versionRule(),
    message: `spec.version must be a supported version of spec.engine (${supportedText()})`,
  },
  minReplicasToWrite: {
    rule: '!has(self.minReplicasToWrite) || !has(self.replicas) || self.minReplicasToWrite <= self.replicas',
    message: 'spec.minReplicasToWrite must be at most spec.replicas: a primary would refuse every write',
  },
  engineForward: {
    rule: "!has(self.engine) || !has(oldSelf.engine) || !(oldSelf.engine == 'valkey' && self.engine == 'redis')",
    message: "spec.engine cannot go back from valkey to redis: Redis 7.0 cannot read the RDB files Valkey 8 writes, so its replicas could never sync",
  },
  bootstrapImmutable: {
    rule: 'has(self.bootstrap) == has(oldSelf.bootstrap) && (!has(self.bootstrap) || self.bootstrap == oldSelf.bootstrap)',
    message: 'spec.bootstrap cannot change after creation: it says what a new Redis starts from',
  },
  bootstrapWithoutAof: {
    rule: '!has(self.bootstrap) || !has(self.persistence) || !has(self.persistence.aof) || !self.persistence.aof',
    message: 'spec.persistence.aof must be false with spec.bootstrap.fromBackup: with appendonly on, redis-server starts from its (empty) AOF and ignores the restored RDB',
  },
  tlsStaysOn: {
    rule: '(has(self.tls) && has(self.tls.disabled) && self.tls.disabled) == (has(oldSelf.tls) && has(oldSelf.tls.disabled) && oldSelf.tls.disabled)',
    message: 'spec.tls.disabled cannot change after creation: a Redis with TLS serves and replicates over TLS only (its clients, replicas and Sentinels speak nothing else), so TLS cannot be turned off in place, nor on; create a new Redis from a backup instead',
  },
  userNotDefault: {
    rule: "self.name != 'default'",
    message: 'spec.users[].name cannot be default: the default user is spec.auth\'s (the operator, replicas and Sentinels authenticate as it)',
  },
  userRulesNoPassword: {
    rule: "!self.rules.matches('(^| )(nopass|resetpass|reset|off)( |$)')",
    message: 'spec.users[].rules cannot contain nopass, resetpass, reset or off: the user\'s password comes from its passwordSecret',
  },
  tlsOneSource: {
    rule: '!(has(self.disabled) && self.disabled && has(self.secretName))',
    message: 'spec.tls.secretName cannot be set with spec.tls.disabled',
  },
  // On each spec.network.clientsFrom peer, for both of its selectors (the kit's rule, as the etcd operator's).
  selectorValues: selectorValuesRule('spec.network.clientsFrom'),
  storageImmutable: {
    rule: '(has(self.storageClassName) == has(oldSelf.storageClassName)) && (!has(self.storageClassName) || self.storageClassName == oldSelf.storageClassName) && (!has(self.size) || !has(oldSelf.size) || self.size == oldSelf.size)',
    message: 'spec.storage.size and spec.storage.storageClassName cannot change after creation; spec.storage.reclaimPolicy can',
  },
} as const satisfies Record<string, CelRule>;

/** A user name as ACL takes it on a config line: no spaces, quotes or control characters. */
export const USER_NAME_PATTERN = '^[A-Za-z0-9_.-]{1,64}$';
/**
 * ACL rules without a password (`>…`, `<…`, `#…`, `!…` are refused: the password comes from the Secret) and without
 * quotes: commands (`+@read`, `-flushall`), key patterns (`~app:*`, `%R~…`), channels (`&…`), `allkeys`, `allcommands`.
 */
export const USER_RULES_PATTERN = '^[-+~&%@*?a-zA-Z0-9:_|{}.,/\\[\\]]+( [-+~&%@*?a-zA-Z0-9:_|{}.,/\\[\\]]+)*$';

/** Why a rolling update stopped at an instance (status.rollout.halted.reason). */
export const HALT_REASONS = ['CrashLooping', 'GateTimeout', 'FailoverNotDone'] as const;

export type ConfigDirective = Static<typeof ConfigDirectiveSchema>;
export type RedisSpec = Static<typeof RedisSpecSchema>;
export type RedisStatus = Static<typeof RedisStatusSchema>;
export type InstanceStatus = Static<typeof InstanceStatusSchema>;
export type SentinelStatus = Static<typeof SentinelStatusSchema>;
export type Role = (typeof ROLES)[number];
export type Phase = (typeof PHASES)[number];
export type RolloutStatus = Static<typeof RolloutStatusSchema>;
export type HaltReason = (typeof HALT_REASONS)[number];
export type PlannedFailover = Static<typeof PlannedFailoverSchema>;
export type BootstrapStatus = Static<typeof BootstrapStatusSchema>;
export type TlsStatus = Static<typeof TlsStatusSchema>;
