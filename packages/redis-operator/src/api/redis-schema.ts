// The schemas of the API declared in the module of the same name without -schema (TypeBox): the CRD (crd.ts),
// the reference in docs/redis.md (docs.ts) and the schemas as data the operator reads at run time (schema-data.ts,
// generated) are built from them, and the API module takes its types from them with `import type`. Loaded by the
// generators, the installers and tests, not by the operator's process (docs/memory.md).
import { Type } from '@sinclair/typebox';
import type { Condition, ObjectMeta } from '@quorum/runtime';
import { conditionSchema } from '@quorum/runtime/crd';
import { stringEnum, stringMap } from '@quorum/kit/schema';
import { networkPeerJsonSchema, type NetworkPeer } from '@quorum/kit';
import { DestinationSchema } from './destination-schema.ts';
import { ENGINES, DEFAULT_ENGINE, DEFAULT_VERSION, MAX_REPLICAS, DEFAULT_REPLICAS, MAX_SENTINELS, DEFAULT_SENTINELS, DEFAULT_DOWN_AFTER_MS, DEFAULT_FAILOVER_TIMEOUT_MS, DEFAULT_MIN_REPLICAS_MAX_LAG_S, DEFAULT_STORAGE_SIZE, NAME_PATTERN, MAX_NAME_LENGTH, QUANTITY_PATTERN, BYTES_PATTERN, CONFIG_VALUE_PATTERN, MAXMEMORY_POLICIES, RECLAIM_POLICIES, PHASES, ROLES, CONDITION_TYPES, ALLOWED_CONFIG, RULES, USER_NAME_PATTERN, USER_RULES_PATTERN, HALT_REASONS } from './redis.ts';

// ---- spec ----

export const SentinelSchema = Type.Object(
  {
    replicas: Type.Integer({
      description: `Sentinels watching the primary, each its own pod; a majority of them decides a failover. 0 runs no Sentinel: the operator alone decides who is primary (for tiny setups; a failover then waits for the operator, and a partitioned operator cannot fail over).`,
      minimum: 0,
      maximum: MAX_SENTINELS,
      default: DEFAULT_SENTINELS,
    }),
    downAfterMilliseconds: Type.Integer({
      description: 'How long the primary must be unreachable before a Sentinel considers it down (Sentinel `down-after-milliseconds`).',
      minimum: 1000,
      maximum: 60_000,
      default: DEFAULT_DOWN_AFTER_MS,
    }),
    failoverTimeoutMilliseconds: Type.Integer({
      description: 'Sentinel `failover-timeout`: how long a failover may take before another Sentinel may try again.',
      minimum: 5000,
      maximum: 600_000,
      default: DEFAULT_FAILOVER_TIMEOUT_MS,
    }),
  },
  { description: 'The Sentinels that decide failovers.', default: {} },
);

export const PersistenceSchema = Type.Object(
  {
    rdb: Type.Boolean({ description: 'Periodic RDB snapshots (Redis `save 3600 1 300 100 60 10000`); off sets `save ""`.', default: true }),
    aof: Type.Boolean({ description: 'The append-only file (`appendonly yes`, `appendfsync everysec` unless spec.config sets it).', default: false }),
  },
  { description: 'How each instance keeps its data on its volume across restarts.', default: {} },
);

export const StorageSchema = Type.Object(
  {
    size: Type.String({ description: 'Size of each instance\'s PersistentVolumeClaim.', pattern: QUANTITY_PATTERN, maxLength: 32, default: DEFAULT_STORAGE_SIZE }),
    storageClassName: Type.Optional(Type.String({ description: 'StorageClass of the claims; the cluster\'s default class when unset.', maxLength: 253 })),
    reclaimPolicy: stringEnum(RECLAIM_POLICIES, {
      description: 'What happens to the claims when the Redis is deleted: Retain keeps them (and the data), Delete removes them with it.',
      default: 'Retain',
    }),
  },
  { description: 'One PersistentVolumeClaim per instance (`data-<name>-<n>`); fixed at creation but for reclaimPolicy.', default: {}, 'x-kubernetes-validations': [RULES.storageImmutable] },
);

export const ResourcesSchema = Type.Object(
  {
    requests: Type.Optional(stringMap({ description: 'Requested cpu and memory.', maxProperties: 8 }, { pattern: QUANTITY_PATTERN, maxLength: 32 })),
    limits: Type.Optional(stringMap({ description: 'Limits of cpu and memory.', maxProperties: 8 }, { pattern: QUANTITY_PATTERN, maxLength: 32 })),
  },
  { description: 'Compute resources of each Redis container (Sentinels take a small fixed amount).' },
);

export const AuthSchema = Type.Object(
  {
    secretName: Type.Optional(
      Type.String({
        description: 'A Secret of yours in the same namespace holding the password under `key`. Unset: the operator generates `<name>-auth` (once, kept while the Redis exists).',
        minLength: 1,
        maxLength: 253,
      }),
    ),
    key: Type.String({ description: 'The key of the password in the Secret.', minLength: 1, maxLength: 253, default: 'password' }),
  },
  { description: 'The password clients, replicas and Sentinels authenticate with (`requirepass`, `masterauth`).', default: {} },
);

export const TlsSchema = Type.Object(
  {
    disabled: Type.Optional(Type.Boolean({ description: 'No TLS: plaintext on port 6379, for clients and replication. Only at creation: TLS cannot be turned off (or on) in place.' })),
    secretName: Type.Optional(
      Type.String({
        description:
          'A kubernetes.io/tls Secret of yours in the same namespace (`ca.crt`, `tls.crt`, `tls.key`) that every instance and Sentinel serves; its certificate must cover `*.<name>-headless.<ns>.svc` and the Services\' names. Unset: the operator issues a CA (`<name>-ca`) and a certificate (`<name>-tls`) and renews the certificate when a third of its validity is left.',
        minLength: 1,
        maxLength: 253,
      }),
    ),
  },
  {
    description: 'TLS for clients, replication and Sentinels (on by default): port 6379 (and 26379) speak TLS only. Clients verify the server with `ca.crt` of the Secret status.tls.secretName names; the password still authenticates them.',
    default: {},
    'x-kubernetes-validations': [RULES.tlsOneSource],
  },
);

export const UserSchema = Type.Object(
  {
    name: Type.String({ description: 'The user name clients AUTH with (not `default`).', pattern: USER_NAME_PATTERN }),
    passwordSecret: Type.Object(
      {
        name: Type.String({ description: 'A Secret of yours in the same namespace.', minLength: 1, maxLength: 253 }),
        key: Type.String({ description: 'The key of the password in it.', minLength: 1, maxLength: 253, default: 'password' }),
      },
      { description: 'Where the user\'s password is. It is read when an instance starts: a new password takes effect as the pods restart (a rollout, or a change of spec.users).' },
    ),
    rules: Type.String({
      description: 'Its ACL rules (`ACL SETUSER` syntax without passwords), e.g. `~app:* +@read +@write -@dangerous`.',
      pattern: USER_RULES_PATTERN,
      maxLength: 1024,
    }),
  },
  { description: 'An ACL user of every instance (`user <name> on >password <rules>`).', 'x-kubernetes-validations': [RULES.userNotDefault, RULES.userRulesNoPassword] },
);

export const ConfigDirectiveSchema = Type.Object(
  {
    name: stringEnum(ALLOWED_CONFIG, { description: 'The directive.' }),
    value: Type.String({ description: 'Its value, as redis.conf writes it after the name (one line).', pattern: CONFIG_VALUE_PATTERN, maxLength: 1024 }),
  },
  { description: 'One redis.conf directive.' },
);

export const BootstrapSchema = Type.Object(
  {
    fromBackup: Type.Object(
      {
        backupName: Type.String({ description: 'A Succeeded RedisBackup in this namespace. Its RDB is downloaded and checked against its sha256 before redis-server starts; its credentials Secret must still carry the redis.quorum.dev/backup-credentials=true label.', pattern: '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$', minLength: 1, maxLength: 253 }),
      },
      { description: 'Start the primary from a backup; the replicas sync from it.' },
    ),
  },
  { description: 'What a new Redis starts from; fixed at creation. Unset: empty.' },
);

export const NetworkSchema = Type.Object(
  {
    policy: Type.Optional(
      Type.Boolean({
        description:
          "Whether the operator keeps a NetworkPolicy `<name>` for the Redis's pods (docs/redis.md): instances (6379) from the Redis's own pods, the operator's pods, the Redis's backup Jobs and clientsFrom; Sentinels (26379) from the Redis's own pods, the operator's pods and clientsFrom; every other ingress to them is refused where the network enforces NetworkPolicy. Unset: true. false: no policy (the operator deletes the one it made).",
      }),
    ),
    clientsFrom: Type.Optional(
      Type.Array(Type.Unsafe<NetworkPeer>(networkPeerJsonSchema('Redis', RULES.selectorValues)), {
        description: "Who may connect to the instances (6379) and the Sentinels (26379), besides the Redis's own pods, the operator and the Redis's backup Jobs. Unset: every pod of the Redis's namespace. []: no one else.",
        maxItems: 32,
      }),
    ),
  },
  { description: "Who may reach the Redis over the network. On by default: a NetworkPolicy admitting clients from the Redis's namespace only." },
);

export const RedisSpecSchema = Type.Object(
  {
    engine: stringEnum(ENGINES, { description: 'Which server runs: Redis, or Valkey (its BSD-licensed continuation). Changing it from redis to valkey is a rolling update, like a version change; back from valkey to redis is refused.', default: DEFAULT_ENGINE }),
    version: Type.String({ description: 'The server version.', minLength: 1, maxLength: 32, default: DEFAULT_VERSION }),
    replicas: Type.Integer({ description: 'Replicas of the primary, each its own pod and volume: instances `<name>-0` … `<name>-<replicas>`.', minimum: 0, maximum: MAX_REPLICAS, default: DEFAULT_REPLICAS }),
    sentinel: SentinelSchema,
    persistence: PersistenceSchema,
    storage: StorageSchema,
    resources: Type.Optional(ResourcesSchema),
    maxmemory: Type.Optional(Type.String({ description: 'Redis `maxmemory` as a byte quantity (`256Mi`); unlimited when unset.', pattern: BYTES_PATTERN, maxLength: 32 })),
    maxmemoryPolicy: stringEnum(MAXMEMORY_POLICIES, { description: 'What Redis evicts once maxmemory is reached (`maxmemory-policy`).', default: 'noeviction' }),
    minReplicasToWrite: Type.Optional(
      Type.Integer({
        description: 'The primary refuses writes unless this many replicas are connected and lag at most minReplicasMaxLagSeconds (`min-replicas-to-write`), which bounds what an isolated old primary can accept. Default: 1 when replicas > 0, else 0.',
        minimum: 0,
        maximum: MAX_REPLICAS,
      }),
    ),
    minReplicasMaxLagSeconds: Type.Integer({ description: 'Redis `min-replicas-max-lag`.', minimum: 1, maximum: 600, default: DEFAULT_MIN_REPLICAS_MAX_LAG_S }),
    config: Type.Optional(
      Type.Array(ConfigDirectiveSchema, {
        description: 'Further redis.conf directives, each from an allowlist: the others are the operator\'s (replicaof, port, dir, …), have a field of their own, or could break management (rename-command, include, loadmodule).',
        maxItems: 64,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    ),
    auth: AuthSchema,
    tls: TlsSchema,
    users: Type.Optional(
      Type.Array(UserSchema, {
        description: 'ACL users besides the default one (spec.auth), each with its password from a Secret and its rules. A change rolls the instances.',
        maxItems: 32,
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    ),
    bootstrap: Type.Optional(BootstrapSchema),
    network: Type.Optional(NetworkSchema),
  },
  { description: 'The desired Redis: one primary, its replicas and its Sentinels.', default: {}, 'x-kubernetes-validations': [RULES.supportedVersion, RULES.minReplicasToWrite, RULES.engineForward, RULES.bootstrapImmutable, RULES.bootstrapWithoutAof, RULES.tlsStaysOn] },
);

// ---- status ----

export const InstanceStatusSchema = Type.Object(
  {
    name: Type.String({ description: 'The instance (its pod and claim are named after it).' }),
    role: stringEnum(ROLES, { description: 'What the instance says it is (`ROLE`); unknown when it did not answer.' }),
    ready: Type.Boolean({ description: 'Its pod is Ready.' }),
    offset: Type.Optional(Type.Integer({ description: 'Its replication offset (`master_repl_offset`, or `slave_repl_offset` on a replica).' })),
    lagBytes: Type.Optional(Type.Integer({ description: 'How far a replica is behind the primary, in bytes of the replication stream.' })),
    linkStatus: Type.Optional(stringEnum(['up', 'down'] as const, { description: 'A replica\'s link to its primary (`master_link_status`).' })),
    version: Type.Optional(Type.String({ description: 'The server version it runs (`redis_version`).' })),
  },
  { description: 'One instance as last read.' },
);

export const SentinelStatusSchema = Type.Object(
  {
    primary: Type.Optional(Type.String({ description: 'The instance a majority of Sentinels names as primary (`SENTINEL get-master-addr-by-name`).' })),
    reporting: Type.Integer({ description: 'Sentinels that answered.' }),
    agreeing: Type.Integer({ description: 'Sentinels that named the majority\'s primary.' }),
    ableToFailOver: Type.Integer({ description: 'Sentinels that could fail the primary over now: they name the majority\'s primary, know every other Sentinel, and see a replica they would promote. A Sentinel learns the replicas only from the primary, so one that has not yet learned them can never fail it over once it is gone.' }),
    quorum: Type.Integer({ description: 'Sentinels needed to agree a primary is down (a majority).' }),
  },
  { description: 'The Sentinels\' view.' },
);

export const StepSchema = Type.Object(
  {
    name: Type.String({ description: 'The step under way.' }),
    startedAt: Type.String({ description: 'When it began.', format: 'date-time' }),
    lastError: Type.Optional(Type.String({ description: 'The last refusal, in its own words.' })),
    lastErrorReason: Type.Optional(Type.String({ description: 'The kind of the last refusal (e.g. Forbidden).' })),
    failures: Type.Optional(Type.Integer({ description: 'Failed attempts so far.' })),
    warned: Type.Optional(Type.Boolean({ description: 'A Warning event was recorded for it.' })),
    stalled: Type.Optional(Type.Boolean({ description: 'It passed its bound.' })),
  },
  { description: 'The step the operator is waiting on, with its age and last refusal.' },
);

export const RolloutStatusSchema = Type.Object(
  {
    target: Type.String({ description: 'Hash of what shapes the pods (server and Sentinel configuration, image, resources) as the rollout moves them to.', maxLength: 64 }),
    updated: Type.Integer({ description: 'Pods (instances and Sentinels) already on the target.' }),
    total: Type.Integer({ description: 'Pods the spec asks for.' }),
    retryToken: Type.Optional(Type.String({ description: 'The redis.quorum.dev/retry-rollout annotation when the rollout began; a different value retries a halted rollout.', maxLength: 256 })),
    halted: Type.Optional(
      Type.Object(
        {
          instance: Type.String({ description: 'The pod the rollout stopped at.', maxLength: 63 }),
          reason: stringEnum(HALT_REASONS, {
            description: 'CrashLooping: its container keeps exiting; GateTimeout: it did not become Ready and synced within the bound; FailoverNotDone: the planned failover away from the old primary did not happen within the bound.',
          }),
          message: Type.String({ description: "What failed, in the server's or the kubelet's words.", maxLength: 4096 }),
          at: Type.String({ description: 'When the rollout halted.', format: 'date-time' }),
        },
        { description: 'Set when the rollout stopped: nothing more is rolled until the spec changes (a revert) or the redis.quorum.dev/retry-rollout annotation gets a new value.' },
      ),
    ),
  },
  { description: 'The rolling update under way; removed once every pod runs the spec.' },
);

export const PlannedFailoverSchema = Type.Object(
  {
    from: Type.String({ description: 'The primary being moved away from (a rollout or a scale-down).', maxLength: 63 }),
    askedAt: Type.String({ description: 'When the failover was last asked for.', format: 'date-time' }),
  },
  { description: 'A failover the operator asked for and waits on (Sentinel FAILOVER, or FAILOVER TO without Sentinels).' },
);

export const BootstrapStatusSchema = Type.Object(
  {
    backup: Type.String({ description: 'The RedisBackup the Redis started from.', maxLength: 253 }),
    destination: DestinationSchema,
    key: Type.String({ description: 'Its object key.', maxLength: 1024 }),
    sha256: Type.String({ description: 'The SHA-256 the downloaded RDB must have.', maxLength: 64 }),
    sizeBytes: Type.Integer({ description: 'Its size.' }),
  },
  { description: 'The backup spec.bootstrap.fromBackup named, as resolved before the first pod was made: the pods are made from this record, so deleting the RedisBackup later changes nothing.' },
);

export const TlsStatusSchema = Type.Object(
  {
    mode: stringEnum(['Operator', 'Secret'] as const, { description: 'Operator: the operator issues and renews the certificates; Secret: spec.tls.secretName\'s.' }),
    secretName: Type.String({ description: 'The Secret whose `ca.crt` clients verify the servers with (`<name>-tls`, or spec.tls.secretName).', maxLength: 253 }),
    notAfter: Type.Optional(Type.String({ description: 'When the served certificate ends.', format: 'date-time' })),
    caRotation: Type.Optional(
      Type.Object(
        {
          phase: stringEnum(['TrustNew', 'Reissue'] as const, {
            description: 'TrustNew: `ca.crt` holds the old and the new CA, the certificate is still signed by the old one; Reissue: the certificate is signed by the new CA, and the old one leaves `ca.crt` once every instance and Sentinel serves it.',
          }),
          since: Type.Optional(Type.String({ description: 'When this phase began.', format: 'date-time' })),
          reissueAfter: Type.Optional(Type.String({ description: 'TrustNew: when the overlap ends (clients have until then to read the two-CA `ca.crt`), and the servers move to certificates of the new CA.', format: 'date-time' })),
        },
        { description: 'An operator-managed CA rotation under way (redis.quorum.dev/rotate-ca, or the CA nearing its end; docs/redis.md "Rotating the CA").' },
      ),
    ),
  },
  { description: 'TLS as served; absent without TLS.' },
);

export const RedisStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'The generation this status describes.' })),
    phase: Type.Optional(stringEnum(PHASES, { description: 'A summary: Pending, Creating, Running, Updating (a rollout or a scale-down under way), FailingOver or Degraded.' })),
    conditions: Type.Optional(
      Type.Unsafe<Condition[]>({
        description: 'Available (a primary accepts writes), Progressing, Degraded.',
        type: 'array',
        items: conditionSchema({ description: 'The condition type.', enum: [...CONDITION_TYPES] }),
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
    primary: Type.Optional(Type.String({ description: 'The instance that is primary, which the `<name>` Service selects.' })),
    replicas: Type.Optional(Type.Integer({ description: 'Instances that exist (primary included).' })),
    readyReplicas: Type.Optional(Type.Integer({ description: 'Instances whose pod is Ready.' })),
    instances: Type.Optional(Type.Array(InstanceStatusSchema, { description: 'Every instance, in name order.' })),
    sentinel: Type.Optional(SentinelStatusSchema),
    step: Type.Optional(StepSchema),
    rollout: Type.Optional(RolloutStatusSchema),
    plannedFailover: Type.Optional(PlannedFailoverSchema),
    bootstrap: Type.Optional(BootstrapStatusSchema),
    tls: Type.Optional(TlsStatusSchema),
  },
  { description: 'Written by the operator through the /status subresource.' },
);

export const RedisSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String()),
    kind: Type.Optional(Type.String()),
    // Only metadata.name may be restricted in a CRD; the rest of ObjectMeta is the API server's.
    metadata: Type.Optional(
      Type.Unsafe<ObjectMeta>({
        type: 'object',
        properties: {
          name: { description: `The name of the Redis: a DNS-1035 label of at most ${MAX_NAME_LENGTH} characters, so that every name derived from it is valid.`, type: 'string', pattern: NAME_PATTERN, maxLength: MAX_NAME_LENGTH },
        },
      }),
    ),
    spec: Type.Optional(RedisSpecSchema),
    status: Type.Optional(RedisStatusSchema),
  },
  { description: 'A Redis: one primary, its replicas and the Sentinels that fail over between them.' },
);
