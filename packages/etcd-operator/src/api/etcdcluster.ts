// The EtcdCluster API (etcd.quorum.dev/v1alpha1), declared once: the TypeScript types, the CRD's structural
// OpenAPI schema (crd.ts), the defaults and validation the operator and webhooks apply (defaults.ts) and the
// reference in docs/api.md (reference/api.ts) are all derived from the schemas in etcdcluster-schema.ts. This file
// holds the names, rules and types the operator uses at run time (the types taken from the schemas with
// `import type`, free at run time); defaulting reads schema-data.ts, the schema as data: the operator's process
// loads no TypeBox (docs/memory.md).
//
// Every spec field in the schema is built; RESERVED_SPEC_FIELDS lists any planned one, absent from the schema
// until implemented, so that the API server rejects it instead of accepting a setting that would silently do nothing.
import type { Static } from '@sinclair/typebox';
import type { V1PodSecurityContext, V1ResourceRequirements, V1SecurityContext } from '@kubernetes/client-node';
import { restrictedContainerSecurity, restrictedPodSecurity, ROTATE_WHEN_REMAINING_FRACTION } from '@quorum/kit';
import type { ObjectMeta } from '@quorum/runtime';
import { DESTINATION_EXACTLY_ONE, ENDPOINT_RULE } from './destination.ts';
import type { VolumeClaimTemplateSchema, EmptyDirSchema, StorageSchema, PodTemplateSchema, EtcdOptionsSchema, FromBackupSchema, DefragSchema, TlsSchema, EtcdClusterSpecSchema, ConditionSchema, MemberSchema, RecoverySchema, RolloutSchema, DefragRecordSchema, MaintenanceStatusSchema, TlsStatusSchema, EtcdClusterStatusSchema } from './etcdcluster-schema.ts';

export const GROUP = 'etcd.quorum.dev';
export const VERSION = 'v1alpha1';
export const API_VERSION = `${GROUP}/${VERSION}`;
export const KIND = 'EtcdCluster';
export const LIST_KIND = 'EtcdClusterList';
export const PLURAL = 'etcdclusters';
export const SINGULAR = 'etcdcluster';
export const SHORT_NAMES: readonly string[] = ['etcd'];

export const MIN_REPLICAS = 1;
export const MAX_REPLICAS = 9;
export const DEFAULT_REPLICAS = 3;

/** etcd minor versions the operator can run, oldest first: upgrades move along this list one step at a time. */
export const SUPPORTED_MINOR_VERSIONS: readonly string[] = ['3.4', '3.5', '3.6'];
/** The newest supported release: what `spec.version` defaults to. */
export const DEFAULT_VERSION = '3.6.16';
export const VERSION_PATTERN = `^3\\.(${SUPPORTED_MINOR_VERSIONS.map((m) => m.slice(2)).join('|')})\\.\\d+$`;

export const DEFAULT_REPOSITORY = 'gcr.io/etcd-development/etcd';
export const DEFAULT_STORAGE_SIZE = '1Gi';

/** A cluster name must be a DNS-1035 label (Service names are) short enough for the names derived from it. */
export const NAME_PATTERN = '^[a-z]([-a-z0-9]*[a-z0-9])?$';
export const MAX_NAME_LENGTH = 50;

/** A positive resource.Quantity, as a volume size is written (`1Gi`, `500M`, `2.5Gi`). */
export const QUANTITY_PATTERN = '^[0-9]+(\\.[0-9]+)?([KMGTPE]i|[kMGTPE])?$';
/** An etcd retention: hours or revisions as an integer, or a Go duration such as `30m` or `1h30m`. */
export const RETENTION_PATTERN = '^([0-9]+|([0-9]+(\\.[0-9]+)?(ns|us|ms|s|m|h))+)$';

/** The shape of one extraArgs item: `--flag` or `--flag=value` (one dash would dodge the managed-flag check). */
export const EXTRA_ARG_PATTERN = '^--[a-z0-9][a-z0-9.-]*(=.*)?$';
/** etcd flags the operator sets itself; `*` stands for any suffix. */
export const MANAGED_FLAGS: readonly string[] = [
  'name',
  'data-dir',
  'wal-dir',
  'config-file',
  'force-new-cluster',
  'initial-cluster*',
  'initial-advertise-*',
  'advertise-*',
  'listen-*',
  'discovery*',
  'cert-file',
  'key-file',
  'trusted-ca-file',
  'client-cert-auth',
  'auto-tls',
  'peer-*',
];
/** etcd flags that have a field in spec.etcd, so there is one way to set each. */
export const STRUCTURED_FLAGS: readonly string[] = [
  'quota-backend-bytes',
  'auto-compaction-mode',
  'auto-compaction-retention',
  'snapshot-count',
  'heartbeat-interval',
  'election-timeout',
];

/**
 * The only other etcd flags extraArgs may set (issue 23): an allowlist, because a denylist let through flags that
 * give up durability (--unsafe-no-fsync), membership safety (--strict-reconfig-check=false), or open debug
 * endpoints (--enable-pprof). These tune logging, limits, keepalives, the backend, compaction, corruption checks
 * and watch progress: each names the 3.6 flag and, where 3.4/3.5 spelt it `--experimental-…`, that one too.
 * --enable-v2 and --experimental-enable-v2v3 exist up to 3.5 (refused for 3.6 by FLAGS_REMOVED_IN's check).
 */
export const ALLOWED_FLAGS: readonly string[] = [
  'log-level',
  'logger',
  'log-format',
  'log-outputs',
  'metrics',
  'max-request-bytes',
  'max-txn-ops',
  'max-concurrent-streams',
  'max-snapshots',
  'max-wals',
  'grpc-keepalive-min-time',
  'grpc-keepalive-interval',
  'grpc-keepalive-timeout',
  'backend-batch-interval',
  'backend-batch-limit',
  'backend-bbolt-freelist-type',
  'bcrypt-cost',
  'auth-token-ttl',
  'feature-gates',
  'enable-v2',
  ...[
    'snapshot-catchup-entries',
    'compaction-batch-limit',
    'compaction-sleep-interval',
    'corrupt-check-time',
    'compact-hash-check-time',
    'watch-progress-notify-interval',
    'warning-apply-duration',
    'warning-unary-request-duration',
    'downgrade-check-time',
    'max-learners',
  ].flatMap((flag) => [flag, `experimental-${flag}`]),
  'experimental-initial-corrupt-check',
  'experimental-compact-hash-check-enabled',
  'experimental-enable-lease-checkpoint',
  'experimental-enable-lease-checkpoint-persist',
  'experimental-txn-mode-write-with-shared-buffer',
  'experimental-stop-grpc-service-on-defrag',
  'experimental-backend-bbolt-freelist-type',
  'experimental-enable-v2v3',
];

function flagPattern(flags: readonly string[]): string {
  const alternatives = flags.map((f) => f.replaceAll('.', '\\.').replaceAll('*', '[a-z0-9.-]*'));
  return `^--(${alternatives.join('|')})(=.*)?$`;
}
export const MANAGED_FLAG_PATTERN = flagPattern(MANAGED_FLAGS);
export const STRUCTURED_FLAG_PATTERN = flagPattern(STRUCTURED_FLAGS);
/** Every flag some rule speaks for: an item none of them matches is refused as not allowed (RULES.allowedFlags). */
export const KNOWN_FLAG_PATTERN = flagPattern([...ALLOWED_FLAGS, ...MANAGED_FLAGS, ...STRUCTURED_FLAGS]);
/** What the allowlist's error says after the refused item (RULES.allowedFlags' messageExpression). */
export const NOT_ALLOWED_TEXT = 'is not an etcd flag the operator allows in spec.etcd.extraArgs (docs/api.md lists them)';

// etcd refuses to start unless the election timeout is at least five heartbeats, and caps it at 50 s.
export const ETCD_DEFAULT_HEARTBEAT_MS = 100;
export const ETCD_DEFAULT_ELECTION_MS = 1000;
export const MAX_ELECTION_TIMEOUT_MS = 50000;
/** etcd warns above 8 GiB; a larger backend makes recovery and defragmentation slow. */
export const MAX_QUOTA_BACKEND_BYTES = 8 * 1024 * 1024 * 1024;
/** etcd's --quota-backend-bytes default (3.4, 3.5, 3.6): what a cluster without spec.etcd.quotaBackendBytes runs with. */
export const ETCD_DEFAULT_QUOTA_BYTES = 2 * 1024 * 1024 * 1024;

// Numbers the field descriptions state and the controllers act on, declared here so that each description takes
// its number from the constant the code uses (the planner and tls/issue.ts import them).
/** Free pages worth a defragmentation by threshold: below this, rewriting the file gains nothing that matters. */
export const DEFRAG_MIN_FREE_BYTES = 1024 * 1024;
/** A member is not defragmented by threshold again this soon: a file that stays fragmented must not make a loop. */
export const DEFRAG_COOLDOWN_MS = 10 * 60_000;
/** Restarts for a stale peer view per refused change; past them the change stays refused, Degraded, for a person. */
export const MAX_STALE_PEER_RESTARTS = 2;
/** A certificate is renewed when less than this share of its validity is left (4 months of a 1-year leaf): the kit's needsRotation rule. */
export const RENEW_WHEN_REMAINING_FRACTION = ROTATE_WHEN_REMAINING_FRACTION;
/** A user-supplied certificate this close to its end is reported, so the user has time to update the Secret. */
export const EXPIRY_WARNING_DAYS = 30;

export const ANTI_AFFINITIES = ['Required', 'Preferred', 'None'] as const;
export const DISASTER_RECOVERY_POLICIES = ['Manual', 'Restore'] as const;
export const RECLAIM_POLICIES = ['Retain', 'Delete'] as const;
export const AUTO_COMPACTION_MODES = ['periodic', 'revision'] as const;
export const ACCESS_MODES = ['ReadWriteOnce', 'ReadWriteOncePod', 'ReadWriteMany', 'ReadOnlyMany'] as const;
export const EMPTY_DIR_MEDIA = ['', 'Memory'] as const;
export const PHASES = ['Pending', 'Creating', 'Running', 'Scaling', 'Healing', 'Updating', 'Degraded', 'Paused', 'Failed'] as const;
/** Why a rolling update stopped at a member (status.rollout.halted.reason). */
export const HALT_REASONS = ['CrashLooping', 'CannotStart', 'GateTimeout', 'VersionMismatch', 'BackupFailed'] as const;
export const BEFORE_VERSION_CHANGE = ['Always', 'Never'] as const;
export const CONDITION_STATUSES = ['True', 'False', 'Unknown'] as const;
/** Condition types the operator sets; the list is open (conditions are keyed by type). */
export const CONDITION_TYPES = ['Available', 'Progressing', 'Degraded'] as const;

/** A CEL rule (`x-kubernetes-validations` item); defaults.ts mirrors each one under the same message. */
export interface CelRule {
  rule: string;
  message: string;
  /** The error when the rule fails, naming what it refused; `message` is the fallback and what docs/api.md shows. */
  messageExpression?: string;
}

/**
 * Whether a `spec.version` change is one the operator may make: within a minor version, one minor up, or one
 * minor back. CEL sees only the spec, so one minor back is allowed here: it is a rollback of an upgrade that
 * has not finished, which is safe only while etcd's cluster version has not moved (status.clusterVersion).
 * The validating webhook and the operator check that (versionPath() in defaults.ts).
 */
function versionChangeRule(): string {
  // Built from the supported minors so the CEL rule, versionChangeAllowed() and the docs cannot drift apart.
  const steps = SUPPORTED_MINOR_VERSIONS.map((minor, i) => {
    const targets = [SUPPORTED_MINOR_VERSIONS[i - 1], minor, SUPPORTED_MINOR_VERSIONS[i + 1]].filter((m) => m !== undefined).map((m) => `self.startsWith('${m}.')`);
    return `(oldSelf.startsWith('${minor}.') && (${targets.join(' || ')}))`;
  });
  return ['self == oldSelf', ...steps].join(' || ');
}

/**
 * Flags an etcd minor version no longer has: etcd exits at once with "flag provided but not defined". 3.6
 * dropped the v2 store (checked against etcd 3.6.16).
 */
export const FLAGS_REMOVED_IN: Readonly<Record<string, readonly string[]>> = {
  '3.6': ['enable-v2', 'experimental-enable-v2v3'],
};

/**
 * The oldest 3.5 patch release a member may run when the cluster moves to 3.6: 3.5.1–3.5.19 did not persist
 * learner promotions to the v3 store, which 3.6 trusts (etcd-io/etcd#19557; etcd's upgrade guide asks for
 * 3.5.32 or later), and this operator promotes a learner on every scale-up.
 */
export const MIN_35_FOR_36 = '3.5.32';

export const RULES = {
  versionChange: {
    rule: versionChangeRule(),
    message:
      'spec.version may change within a minor version, move up to the next minor version (e.g. 3.5.x to 3.6.y), or go back one minor version to roll back an upgrade that has not finished; skipping a minor version is not supported',
  },
  imageOrRepository: {
    rule: '!(has(self.image) && has(self.repository))',
    message: 'spec.image and spec.repository are mutually exclusive: spec.image replaces the whole image reference',
  },
  storageExactlyOne: {
    rule: 'has(self.volumeClaimTemplate) != has(self.emptyDir)',
    message: 'spec.storage must set exactly one of volumeClaimTemplate or emptyDir',
  },
  storageImmutable: {
    rule: [
      'has(self.volumeClaimTemplate) == has(oldSelf.volumeClaimTemplate)',
      'has(self.emptyDir) == has(oldSelf.emptyDir)',
      '(!has(self.volumeClaimTemplate) || self.volumeClaimTemplate == oldSelf.volumeClaimTemplate)',
      '(!has(self.emptyDir) || self.emptyDir == oldSelf.emptyDir)',
    ].join(' && '),
    message: 'storage is immutable: spec.storage cannot change after creation, except spec.storage.reclaimPolicy',
  },
  electionTimeout: {
    rule: `(has(self.electionTimeoutMs) ? self.electionTimeoutMs : ${ETCD_DEFAULT_ELECTION_MS}) >= 5 * (has(self.heartbeatIntervalMs) ? self.heartbeatIntervalMs : ${ETCD_DEFAULT_HEARTBEAT_MS})`,
    message: `spec.etcd.electionTimeoutMs must be at least 5 times spec.etcd.heartbeatIntervalMs (etcd defaults: ${ETCD_DEFAULT_ELECTION_MS} and ${ETCD_DEFAULT_HEARTBEAT_MS})`,
  },
  revisionRetention: {
    rule: `!has(self.autoCompactionMode) || self.autoCompactionMode != 'revision' || !has(self.autoCompactionRetention) || self.autoCompactionRetention.matches('^[0-9]+$')`,
    message: 'spec.etcd.autoCompactionRetention must be a whole number of revisions when spec.etcd.autoCompactionMode is revision',
  },
  managedFlags: {
    // r'' is a CEL raw string: the pattern's backslashes reach RE2 unescaped.
    rule: `self.all(arg, !arg.matches(r'${MANAGED_FLAG_PATTERN}'))`,
    message: `spec.etcd.extraArgs must not set flags the operator manages: ${MANAGED_FLAGS.map((f) => `--${f}`).join(', ')}`,
  },
  structuredFlags: {
    rule: `self.all(arg, !arg.matches(r'${STRUCTURED_FLAG_PATTERN}'))`,
    message: `spec.etcd.extraArgs must not set flags that have a field in spec.etcd: ${STRUCTURED_FLAGS.map((f) => `--${f}`).join(', ')}`,
  },
  // The allowlist. Managed and structured flags are left to the two rules above, whose messages say why; the
  // error names the first refused item. Not mirrored by validateSpec: the API server ratchets it (a flag stored
  // before the allowlist stays while extraArgs is unchanged), which the operator, seeing no previous spec, could
  // not: it would stop managing such a cluster.
  allowedFlags: {
    rule: `self.all(arg, arg.matches(r'${KNOWN_FLAG_PATTERN}'))`,
    message: `spec.etcd.extraArgs may set only these etcd flags: ${ALLOWED_FLAGS.map((f) => `--${f}`).join(', ')}`,
    messageExpression: `'spec.etcd.extraArgs: ' + self.filter(arg, !arg.matches(r'${KNOWN_FLAG_PATTERN}'))[0] + ' ${NOT_ALLOWED_TEXT}'`,
  },
  // Pod security (issue 23): the operator's identity creates the member pods, so an EtcdCluster author must not
  // get privileged or root pods through podTemplate where the namespace enforces no Pod Security. Only these two
  // fields reach a pod's security; the schema has no host namespaces or volumes to set. Each rule reads a
  // fixed number of fields (no list is walked), so its CEL cost is constant. Not mirrored by validateSpec: the
  // API server ratchets them for clusters stored before (docs/operations.md once advised root for storage
  // that ignores fsGroup), which the operator, seeing no previous spec, could not.
  podNotRoot: {
    rule: '!(has(self.runAsUser) && self.runAsUser == 0) && !(has(self.runAsNonRoot) && self.runAsNonRoot == false)',
    message: 'spec.podTemplate.spec.securityContext must not run members as root (runAsUser: 0 or runAsNonRoot: false)',
  },
  podSeccompConfined: {
    rule: "!has(self.seccompProfile) || !has(self.seccompProfile.type) || self.seccompProfile.type != 'Unconfined'",
    message: 'spec.podTemplate.spec.securityContext.seccompProfile must not be Unconfined',
  },
  containerNotPrivileged: {
    rule: '!(has(self.privileged) && self.privileged == true) && !(has(self.allowPrivilegeEscalation) && self.allowPrivilegeEscalation == true)',
    message: 'spec.podTemplate.spec.containerSecurityContext must not set privileged: true or allowPrivilegeEscalation: true',
  },
  // The container's rules say what the pod's do, written in another order: each rule's text is its own key.
  containerNotRoot: {
    rule: '!(has(self.runAsNonRoot) && self.runAsNonRoot == false) && !(has(self.runAsUser) && self.runAsUser == 0)',
    message: 'spec.podTemplate.spec.containerSecurityContext must not run the etcd container as root (runAsUser: 0 or runAsNonRoot: false)',
  },
  containerNoAddedCapabilities: {
    rule: '!has(self.capabilities) || !has(self.capabilities.add) || size(self.capabilities.add) == 0',
    message: 'spec.podTemplate.spec.containerSecurityContext.capabilities.add must be empty: members need no capability',
  },
  containerSeccompConfined: {
    rule: "!has(self.seccompProfile) || !has(self.seccompProfile.type) || !(self.seccompProfile.type == 'Unconfined')",
    message: 'spec.podTemplate.spec.containerSecurityContext.seccompProfile must not be Unconfined',
  },
  /** Shared by every destination (EtcdBackup's too), so its message names the field by its last part. */
  destinationExactlyOne: DESTINATION_EXACTLY_ONE,
  /**
   * Shared by every destination's endpoints, like destinationExactlyOne. Not mirrored by validateSpec: the API
   * server ratchets it (an endpoint stored before the rule stays valid while unchanged), which the operator,
   * seeing no previous spec, could not; the operator turning such a cluster InvalidSpec would stop managing it.
   */
  endpointInCluster: ENDPOINT_RULE,
  backupSource: {
    rule: 'has(self.backupName) ? !has(self.destination) && !has(self.key) && !has(self.sha256) : has(self.destination) && has(self.key)',
    message: 'spec.bootstrap.fromBackup must set either backupName, or destination and key (and sha256)',
  },
  /**
   * Not mirrored by validateSpec: the API server ratchets it (a cluster stored before the rule keeps its spec,
   * and bootstrap is immutable), which the operator, seeing no previous spec, could not; a cluster that is not
   * restored yet and names no sha256 waits instead (observe.ts restoreSource, SnapshotHashMissing).
   */
  restoreHash: {
    rule: 'has(self.backupName) || has(self.sha256)',
    message: 'spec.bootstrap.fromBackup with destination and key must set sha256: members check the snapshot against it before etcd starts',
  },
  bootstrapImmutable: {
    rule: 'has(self.bootstrap) == has(oldSelf.bootstrap) && (!has(self.bootstrap) || self.bootstrap == oldSelf.bootstrap)',
    message: 'spec.bootstrap is immutable: it says how the cluster was first created, and cannot be added, changed or removed later',
  },
  tlsPeerFixed: {
    // A transition rule: checked only on update, when spec.tls existed before. Switching between operator-managed
    // and a Secret would change every member's trust at once (etcd loads its CAs only at start), and turning TLS
    // off in place is not built. Adding it is: members move to TLS one at a time (docs/tls.md).
    rule: '!has(oldSelf.peer) || (has(self.peer) && self.peer == oldSelf.peer)',
    message: 'spec.tls.peer cannot be removed or switched between operator-managed and a Secret once set (it can be added to a running cluster)',
  },
  tlsClientFixed: {
    rule: '!has(oldSelf.client) || (has(self.client) && self.client == oldSelf.client)',
    message: 'spec.tls.client cannot be removed or switched between operator-managed and a Secret once set (it can be added to a running cluster)',
  },
  tlsDisabledAlone: {
    rule: '!has(self.disabled) || !self.disabled || (!has(self.peer) && !has(self.client))',
    message: 'spec.tls.disabled: true asks for plaintext, so spec.tls.peer and spec.tls.client must be unset with it',
  },
  tlsFixed: {
    rule: '!has(oldSelf.tls) || has(self.tls)',
    message: 'spec.tls cannot be removed: turning TLS off in place is not built (it can be added to a running plaintext cluster)',
  },
  selectorValues: {
    // On the peer, for both of its selectors (each rule is used once in the schema).
    rule: [
      "(!has(self.namespaceSelector) || !has(self.namespaceSelector.matchExpressions) || self.namespaceSelector.matchExpressions.all(e, (e.operator == 'In' || e.operator == 'NotIn') == (has(e.values) && size(e.values) > 0)))",
      "(!has(self.podSelector) || !has(self.podSelector.matchExpressions) || self.podSelector.matchExpressions.all(e, (e.operator == 'In' || e.operator == 'NotIn') == (has(e.values) && size(e.values) > 0)))",
    ].join(' && '),
    message: 'spec.network.clientsFrom[]: a matchExpressions entry with operator In or NotIn needs values, and one with Exists or DoesNotExist takes none',
  },
  defragTrigger: {
    rule: 'has(self.thresholdPercent) || has(self.schedule)',
    message: 'spec.maintenance.defrag must set thresholdPercent, schedule, or both: without either it would never run',
  },
  restoreVersion: {
    rule: "!has(self.bootstrap) || !self.version.startsWith('3.4.')",
    message: 'spec.bootstrap.fromBackup needs etcd 3.5 or newer (members are restored with etcdutl, which 3.4 lacks)',
  },
} as const satisfies Record<string, CelRule>;

/** Spec fields planned but not yet in the schema: listed in docs/api.md, rejected by the API server for now. */
export const RESERVED_SPEC_FIELDS: readonly { field: string; description: string }[] = [
];

/**
 * Pod-level defaults (the kit's restricted ones); each field the user sets in podTemplate.spec.securityContext replaces one. No etcd image
 * declares a USER, so the numeric runAsUser is what satisfies runAsNonRoot (the kubelet checks the effective
 * uid). fsGroup makes the data volume the group's (the kubelet chgrps it and adds g+rw), including a volume
 * written by root before; OnRootMismatch walks it only when its root is not the group's yet.
 */
export const MEMBER_POD_SECURITY: Readonly<V1PodSecurityContext> = restrictedPodSecurity({ fsGroupChangePolicy: 'OnRootMismatch' });

/**
 * Every container's defaults (the kit's restricted ones); for the etcd container, each field set in podTemplate.spec.containerSecurityContext
 * replaces one. The root filesystem can be read-only: etcd and etcdutl write only under the data directory,
 * and every init container writes only to its volumes.
 */
export const MEMBER_CONTAINER_SECURITY: Readonly<V1SecurityContext> = restrictedContainerSecurity();

/**
 * The etcd container's requests when podTemplate.spec.resources is unset: enough to make the pod Burstable
 * rather than BestEffort (the first evicted under node pressure), and small, because one node may run dozens
 * of members. No limits: a CPU limit throttles etcd into missed heartbeats, and a memory limit would kill a
 * member whose database grows.
 */
export const DEFAULT_ETCD_RESOURCES: Readonly<V1ResourceRequirements> = { requests: { cpu: '50m', memory: '128Mi' } };

/** A Kubernetes-typed value (Affinity, Toleration, …) passed through to the pod as is. */
export type KubeValue = Record<string, unknown>;

/** Why a member was defragmented (status.maintenance.lastDefrag[].reason). */
export const DEFRAG_REASONS = ['Threshold', 'Schedule', 'NoSpace'] as const;

export const TLS_MODES = ['Operator', 'Secret'] as const;

export const SELECTOR_OPERATORS = ['In', 'NotIn', 'Exists', 'DoesNotExist'] as const;

export const RECOVERY_METHODS = ['ForceNewCluster', 'Backup'] as const;

// ---- the object ----

/** Standard object metadata, as the runtime types it. */
export type EtcdClusterMetadata = ObjectMeta;

export type EtcdClusterSpec = Static<typeof EtcdClusterSpecSchema>;
export type EtcdClusterStatus = Static<typeof EtcdClusterStatusSchema>;
export type Member = Static<typeof MemberSchema>;
/** The same as Member, by the name the status code uses. */
export type MemberStatus = Member;
export type EtcdClusterCondition = Static<typeof ConditionSchema>;
export type StorageSpec = Static<typeof StorageSchema>;
export type VolumeClaimTemplate = Static<typeof VolumeClaimTemplateSchema>;
export type EmptyDirSpec = Static<typeof EmptyDirSchema>;
export type PodTemplate = Static<typeof PodTemplateSchema>;
export type EtcdOptions = Static<typeof EtcdOptionsSchema>;
export type FromBackup = Static<typeof FromBackupSchema>;
export type Recovery = Static<typeof RecoverySchema>;
export type RolloutRecord = Static<typeof RolloutSchema>;
export type HaltReason = (typeof HALT_REASONS)[number];
export type TlsSpec = Static<typeof TlsSchema>;
export type DefragSpec = Static<typeof DefragSchema>;
export type DefragRecord = Static<typeof DefragRecordSchema>;
export type DefragReason = (typeof DEFRAG_REASONS)[number];
export type MaintenanceStatus = Static<typeof MaintenanceStatusSchema>;
export type TlsStatus = Static<typeof TlsStatusSchema>;
export type TlsMode = (typeof TLS_MODES)[number];
export type AntiAffinity = (typeof ANTI_AFFINITIES)[number];
export type ReclaimPolicy = (typeof RECLAIM_POLICIES)[number];
export type AutoCompactionMode = (typeof AUTO_COMPACTION_MODES)[number];
export type Phase = (typeof PHASES)[number];

/** An EtcdCluster as read from the API server, where `spec` is always present (the schema defaults it). */
export interface EtcdCluster {
  apiVersion?: string;
  kind?: string;
  metadata: EtcdClusterMetadata;
  spec: EtcdClusterSpec;
  status?: EtcdClusterStatus;
}

export interface EtcdClusterList {
  apiVersion?: string;
  kind?: string;
  metadata: { resourceVersion?: string; continue?: string; remainingItemCount?: number };
  items: EtcdCluster[];
}
