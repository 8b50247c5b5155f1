// The schemas of the API declared in the module of the same name without -schema (TypeBox): the CRD (crd.ts),
// the reference (reference/api.ts) and the schema as data the operator reads at run time (schema-data.ts,
// generated) are built from them, and the API module takes its types from them with `import type`. Loaded by the
// generators, the installers and tests, not by the operator's process (docs/memory.md).
import { Type, type TSchema, type TUnsafe } from '@sinclair/typebox';
import type { V1Affinity, V1PodSecurityContext, V1ResourceRequirements, V1SecurityContext, V1Toleration, V1TopologySpreadConstraint } from '@kubernetes/client-node';
import { DestinationSchema } from './destination-schema.ts';
import { stringEnum } from './schema-nodes.ts';
import { stringMap } from '@quorum/kit/schema';
import type { EtcdClusterMetadata, KubeValue } from './etcdcluster.ts';
import { MIN_REPLICAS, MAX_REPLICAS, DEFAULT_REPLICAS, DEFAULT_VERSION, VERSION_PATTERN, DEFAULT_REPOSITORY, DEFAULT_STORAGE_SIZE, NAME_PATTERN, MAX_NAME_LENGTH, QUANTITY_PATTERN, RETENTION_PATTERN, EXTRA_ARG_PATTERN, ALLOWED_FLAGS, ETCD_DEFAULT_HEARTBEAT_MS, ETCD_DEFAULT_ELECTION_MS, MAX_ELECTION_TIMEOUT_MS, MAX_QUOTA_BACKEND_BYTES, ETCD_DEFAULT_QUOTA_BYTES, DEFRAG_MIN_FREE_BYTES, DEFRAG_COOLDOWN_MS, MAX_STALE_PEER_RESTARTS, RENEW_WHEN_REMAINING_FRACTION, EXPIRY_WARNING_DAYS, ANTI_AFFINITIES, DISASTER_RECOVERY_POLICIES, RECLAIM_POLICIES, AUTO_COMPACTION_MODES, ACCESS_MODES, EMPTY_DIR_MEDIA, PHASES, HALT_REASONS, BEFORE_VERSION_CHANGE, CONDITION_STATUSES, RULES, MEMBER_POD_SECURITY, MEMBER_CONTAINER_SECURITY, DEFAULT_ETCD_RESOURCES, DEFRAG_REASONS, TLS_MODES, SELECTOR_OPERATORS, RECOVERY_METHODS } from './etcdcluster.ts';

/** A byte count as a description writes it: `1 MiB`, `2 GiB`. */
function bytesText(bytes: number): string {
  const units = ['bytes', 'KiB', 'MiB', 'GiB', 'TiB'];
  let value = bytes;
  let unit = 0;
  while (value >= 1024 && value % 1024 === 0 && unit < units.length - 1) {
    value /= 1024;
    unit += 1;
  }
  return `${value} ${units[unit]}`;
}

/** A share as a description writes it: 1/3 is `a third`. */
function fractionText(fraction: number): string {
  const names: Record<number, string> = { 2: 'half', 3: 'a third', 4: 'a quarter' };
  return names[Math.round(1 / fraction)] ?? `${Math.round(fraction * 100)} %`;
}

// ---- helpers for schema nodes TypeBox does not express in a structural form ----

/** A default object as a description writes it: `runAsNonRoot true, capabilities drop ALL`. */
function fieldsText(value: object): string {
  return Object.entries(value)
    .map(([key, v]: [string, unknown]) => `${key} ${v !== null && typeof v === 'object' && !Array.isArray(v) ? fieldsText(v) : Array.isArray(v) ? v.join(' ') : String(v)}`)
    .join(', ');
}

/** `T` types the value for the code that renders pods (a client-node model); the API server checks its content. */
function kubeObject<T extends object = KubeValue>(description: string): TUnsafe<T> {
  // Kept structural by declaring only `type: object`; the pod's own validation checks the content.
  return Type.Unsafe<T>({ description, type: 'object', 'x-kubernetes-preserve-unknown-fields': true });
}

// The security context fields CEL rules read. CEL sees only declared fields (what x-kubernetes-preserve-unknown-fields
// keeps is invisible to it), so these are declared with their core/v1 types; the others pass through as before.
const seccompProfile = Type.Object(
  {
    type: Type.Optional(Type.String({ description: 'RuntimeDefault, Localhost or Unconfined (refused).', maxLength: 64 })),
    localhostProfile: Type.Optional(Type.String({ description: 'The profile file, for type Localhost.', maxLength: 4096 })),
  },
  { description: 'The seccomp profile (core/v1 SeccompProfile).' },
);
const RUN_AS = {
  runAsUser: Type.Optional(Type.Integer({ description: 'The uid to run as; 0 (root) is refused.', format: 'int64' })),
  runAsNonRoot: Type.Optional(Type.Boolean({ description: 'false is refused.' })),
  seccompProfile: Type.Optional(seccompProfile),
};
const CONTAINER_SECURITY_FIELDS = {
  ...RUN_AS,
  privileged: Type.Optional(Type.Boolean({ description: 'true is refused.' })),
  allowPrivilegeEscalation: Type.Optional(Type.Boolean({ description: 'true is refused.' })),
  capabilities: Type.Optional(
    Type.Object(
      {
        add: Type.Optional(Type.Array(Type.String({ description: 'A capability name.', maxLength: 64 }), { description: 'Must be empty.', maxItems: 64 })),
        drop: Type.Optional(Type.Array(Type.String({ description: 'A capability name, or ALL.', maxLength: 64 }), { description: 'Capabilities dropped (the default drops ALL).', maxItems: 64 })),
      },
      { description: 'core/v1 Capabilities.' },
    ),
  ),
};

/** A security context: the fields the rules read declared, every other field kept as written. */
function securityObject<T extends object>(description: string, properties: Record<string, TSchema>, rules: readonly { rule: string; message: string }[]): TUnsafe<T> {
  return Type.Unsafe<T>({ ...Type.Object(properties), description, 'x-kubernetes-preserve-unknown-fields': true, 'x-kubernetes-validations': [...rules] });
}

// ---- spec ----

export const VolumeClaimTemplateSchema = Type.Object(
  {
    storageClassName: Type.Optional(Type.String({ description: 'StorageClass of each member PVC; the cluster default class when unset.', minLength: 1, maxLength: 253 })),
    resources: Type.Optional(
      Type.Object(
        {
          requests: Type.Optional(
            Type.Object(
              {
                storage: Type.Optional(
                  Type.String({ description: 'Size of each member volume, as a resource quantity.', default: DEFAULT_STORAGE_SIZE, pattern: QUANTITY_PATTERN, maxLength: 64 }),
                ),
              },
              { description: 'Requested resources of each member PVC.', default: {} },
            ),
          ),
        },
        { description: 'Resources of each member PVC.', default: {} },
      ),
    ),
    accessModes: Type.Optional(
      Type.Array(stringEnum(ACCESS_MODES, { description: 'A PersistentVolume access mode.' }), {
        description: 'Access modes of each member PVC; ReadWriteOnce when unset.',
        minItems: 1,
        maxItems: 4,
        'x-kubernetes-list-type': 'set',
      }),
    ),
  },
  { description: 'A PersistentVolumeClaim per member, kept across pod restarts: the recommended storage.' },
);

export const EmptyDirSchema = Type.Object(
  {
    sizeLimit: Type.Optional(Type.String({ description: 'Upper bound of the emptyDir volume, as a resource quantity.', pattern: QUANTITY_PATTERN, maxLength: 64 })),
    medium: Type.Optional(stringEnum(EMPTY_DIR_MEDIA, { description: "Storage medium: '' for the node's disk, Memory for tmpfs." })),
  },
  { description: "An emptyDir volume per member: a member's data is lost whenever its pod is deleted (for tests and caches)." },
);

export const StorageSchema = Type.Object(
  {
    volumeClaimTemplate: Type.Optional(VolumeClaimTemplateSchema),
    emptyDir: Type.Optional(EmptyDirSchema),
    reclaimPolicy: Type.Optional(
      stringEnum(RECLAIM_POLICIES, { description: 'What happens to member PVCs when the EtcdCluster is deleted: Retain keeps them, Delete removes them.', default: 'Retain' }),
    ),
  },
  {
    description: 'Where members keep their data: exactly one of volumeClaimTemplate or emptyDir; fixed at creation.',
    default: { volumeClaimTemplate: { resources: { requests: { storage: DEFAULT_STORAGE_SIZE } } }, reclaimPolicy: 'Retain' },
    'x-kubernetes-validations': [RULES.storageExactlyOne, RULES.storageImmutable],
  },
);

export const PodTemplateSchema = Type.Object(
  {
    metadata: Type.Optional(
      Type.Object(
        {
          labels: Type.Optional(stringMap({ description: 'Labels added to every member pod.' })),
          annotations: Type.Optional(stringMap({ description: 'Annotations added to every member pod.' })),
        },
        { description: 'Metadata added to every member pod.' },
      ),
    ),
    spec: Type.Optional(
      Type.Object(
        {
          affinity: Type.Optional(kubeObject<V1Affinity>('Pod affinity (core/v1 Affinity), merged with the antiAffinity shortcut.')),
          nodeSelector: Type.Optional(stringMap({ description: 'Node labels a member pod must match.' })),
          tolerations: Type.Optional(Type.Array(kubeObject<V1Toleration>('A core/v1 Toleration.'), { description: 'Tolerations of every member pod.' })),
          topologySpreadConstraints: Type.Optional(
            Type.Array(kubeObject<V1TopologySpreadConstraint>('A core/v1 TopologySpreadConstraint.'), { description: 'Topology spread constraints of every member pod.' }),
          ),
          resources: Type.Optional(
            kubeObject<V1ResourceRequirements>(
              `Compute resources (core/v1 ResourceRequirements) of the etcd container, and of the restore-snapshot init container of a restored member. Unset: the etcd container requests ${fieldsText(DEFAULT_ETCD_RESOURCES.requests ?? {})}, with no limits; {} sets no requests.`,
            ),
          ),
          priorityClassName: Type.Optional(Type.String({ description: 'PriorityClass of every member pod.', minLength: 1, maxLength: 253 })),
          securityContext: Type.Optional(
            securityObject<V1PodSecurityContext>(
              `Pod-level security context (core/v1 PodSecurityContext). Each field set here replaces the default for that field: ${fieldsText(MEMBER_POD_SECURITY)}. Root (runAsUser 0, runAsNonRoot false) and an Unconfined seccomp profile are refused.`,
              RUN_AS,
              [RULES.podNotRoot, RULES.podSeccompConfined],
            ),
          ),
          containerSecurityContext: Type.Optional(
            securityObject<V1SecurityContext>(
              `Security context (core/v1 SecurityContext) of the etcd container, and of the restore-snapshot init container, which writes a restored member's data. Each field set here replaces the default for that field: ${fieldsText(MEMBER_CONTAINER_SECURITY)}. Its runAsUser and runAsNonRoot also apply to the fetch-snapshot init container. Privileged, allowPrivilegeEscalation, root, added capabilities and an Unconfined seccomp profile are refused.`,
              CONTAINER_SECURITY_FIELDS,
              [RULES.containerNotPrivileged, RULES.containerNotRoot, RULES.containerNoAddedCapabilities, RULES.containerSeccompConfined],
            ),
          ),
        },
        { description: 'Pod spec fields applied to every member pod.' },
      ),
    ),
  },
  { description: 'Customisation of the member pods the operator creates.' },
);

export const EtcdOptionsSchema = Type.Object(
  {
    quotaBackendBytes: Type.Optional(
      Type.Integer({ description: `Backend size quota in bytes (--quota-backend-bytes); etcd's default (${bytesText(ETCD_DEFAULT_QUOTA_BYTES)}) when unset.`, format: 'int64', minimum: 1, maximum: MAX_QUOTA_BACKEND_BYTES }),
    ),
    autoCompactionMode: Type.Optional(stringEnum(AUTO_COMPACTION_MODES, { description: 'Auto-compaction mode (--auto-compaction-mode); periodic when unset.' })),
    autoCompactionRetention: Type.Optional(
      Type.String({ description: 'Auto-compaction retention (--auto-compaction-retention): a duration or hours for periodic, revisions for revision.', pattern: RETENTION_PATTERN, maxLength: 32 }),
    ),
    snapshotCount: Type.Optional(Type.Integer({ description: 'Committed transactions between snapshots to disk (--snapshot-count).', format: 'int64', minimum: 1 })),
    heartbeatIntervalMs: Type.Optional(
      Type.Integer({ description: `Raft heartbeat interval in milliseconds (--heartbeat-interval); ${ETCD_DEFAULT_HEARTBEAT_MS} when unset.`, format: 'int32', minimum: 1, maximum: MAX_ELECTION_TIMEOUT_MS / 5 }),
    ),
    electionTimeoutMs: Type.Optional(
      Type.Integer({ description: `Raft election timeout in milliseconds (--election-timeout); ${ETCD_DEFAULT_ELECTION_MS} when unset.`, format: 'int32', minimum: 5, maximum: MAX_ELECTION_TIMEOUT_MS }),
    ),
    extraArgs: Type.Optional(
      Type.Array(Type.String({ description: 'One etcd flag: --flag or --flag=value.', pattern: EXTRA_ARG_PATTERN, maxLength: 512 }), {
        description: `Further etcd flags, appended to those the operator sets. Only these are allowed: ${ALLOWED_FLAGS.map((f) => `--${f}`).join(', ')}; flags the operator manages or that have a field here are rejected with why.`,
        maxItems: 64,
        'x-kubernetes-list-type': 'atomic',
        'x-kubernetes-validations': [RULES.managedFlags, RULES.structuredFlags, RULES.allowedFlags],
      }),
    ),
  },
  {
    description: "etcd server options; any left unset take etcd's own defaults.",
    'x-kubernetes-validations': [RULES.electionTimeout, RULES.revisionRetention],
  },
);

export const FromBackupSchema = Type.Object(
  {
    backupName: Type.Optional(Type.String({ description: 'A Succeeded EtcdBackup in the same namespace; its stored snapshot and its SHA-256 are used.', minLength: 1, maxLength: 253 })),
    destination: Type.Optional(DestinationSchema),
    key: Type.Optional(Type.String({ description: 'Object key (or file path under the PVC destination) of the snapshot, with destination.', minLength: 1, maxLength: 1024 })),
    sha256: Type.Optional(Type.String({ description: "SHA-256 of the snapshot file, in hex: required with destination and key (the members refuse a snapshot that does not match it); etcd's own hash check runs too.", pattern: '^[0-9a-f]{64}$' })),
  },
  {
    description: "A snapshot to start from: either backupName, or destination, key and sha256. Before any member starts, each member's init containers download it, check its SHA-256 and etcd's own hash, and restore it with etcdutl under the new cluster's member names and peer URLs (a new cluster ID). A corrupted or truncated snapshot is refused: no member starts, and the Degraded condition says why.",
    'x-kubernetes-validations': [RULES.backupSource, RULES.restoreHash],
  },
);

export const BootstrapSchema = Type.Object(
  { fromBackup: FromBackupSchema },
  { description: 'How a new cluster is first created. Unset: empty. Fixed at creation.' },
);

export const DisasterRecoverySchema = Type.Object(
  {
    policy: Type.Optional(
      stringEnum(DISASTER_RECOVERY_POLICIES, {
        description:
          "What the operator does once a majority of members has lost its data for good (PVC gone, or an empty data directory etcd refuses to start on). Manual: nothing but say so (condition QuorumLost, a Warning event; docs/operations.md has the runbook). Restore: rebuild from the newest data: a surviving member whose revision is newer than the newest Succeeded EtcdBackup of this cluster is restarted alone with --force-new-cluster and the cluster grows back from it; otherwise the cluster is re-created from that backup. status.recovery records how, from what, and the revision and time of the data it came back from (the data-loss window).",
        default: 'Manual',
      }),
    ),
  },
  { description: 'What happens after a majority of members is permanently lost.', default: {} },
);

export const ClusterBackupSchema = Type.Object(
  {
    destination: DestinationSchema,
    beforeVersionChange: Type.Optional(
      stringEnum(BEFORE_VERSION_CHANGE, {
        description:
          'Always: before the first member of a rolling update that changes spec.version is touched, the operator creates an EtcdBackup of the cluster to spec.backup.destination (named <cluster>-pre-<version>-<hash>, labelled etcd.quorum.dev/purpose=before-version-change, not owned by the cluster so that it outlives it) and waits for it to succeed; if it fails, the rollout halts with reason BackupFailed. Never: version changes are rolled out without one. Changes that keep the version are never preceded by a backup.',
        default: 'Always',
      }),
    ),
  },
  { description: "The cluster's backup destination, used for a backup before each change of spec.version. Scheduled backups are EtcdBackupSchedule's." },
);

export const DefragSchema = Type.Object(
  {
    thresholdPercent: Type.Optional(
      Type.Integer({
        description:
          `Defragment a member once this share of its backend file is free pages ((dbSize - dbSizeInUse) / dbSize, from the member's own status), and at least ${bytesText(DEFRAG_MIN_FREE_BYTES)} of it is free; a member is not defragmented for it again within ${DEFRAG_COOLDOWN_MS / 60_000} minutes.`,
        format: 'int32',
        minimum: 1,
        maximum: 100,
      }),
    ),
    schedule: Type.Optional(
      Type.String({
        description:
          'A cron schedule (five fields, UTC; H spreads clusters) at which every member is defragmented, whatever its fragmentation. A time missed while the cluster was not healthy is taken once it is, not once per missed time.',
        minLength: 1,
        maxLength: 128,
      }),
    ),
  },
  {
    description:
      "Defragmentation of each member's backend: one member at a time, followers first and the leader last, only while every member serves and no rollout, CA rotation or membership change is under way. A member serves no requests while it is defragmented (its readiness fails meanwhile, so the client Service leaves it out); each one is reported with how long it took (event Defragmented, status.maintenance.lastDefrag).",
    'x-kubernetes-validations': [RULES.defragTrigger],
  },
);

export const MaintenanceSchema = Type.Object(
  { defrag: Type.Optional(DefragSchema) },
  { description: "Maintenance of the members' storage. Whatever is set here, a NOSPACE alarm is always handled: compaction, a defragmentation of every member, then the alarm is disarmed (docs/operations.md)." },
);

/** One side of spec.tls: `{}` for certificates the operator issues and renews, or a Secret of the user's. */
function tlsSideSchema(side: 'peer' | 'client') {
  const what =
    side === 'peer'
      ? 'Mutual TLS between members (peer port 2380): every member presents a certificate its peers verify against the peer CA.'
      : 'Mutual TLS for clients (port 2379): members serve https only and require a client certificate signed by the client CA.';
  const operator =
    side === 'peer'
      ? `the operator issues a peer CA (Secret <cluster>-peer-ca) and a certificate per member (Secret <member>-tls), and issues a member certificate again when less than ${fractionText(RENEW_WHEN_REMAINING_FRACTION)} of its validity is left or its names changed`
      : `the operator issues a client CA (Secret <cluster>-client-ca), a server certificate per member (Secret <member>-tls) and a client certificate (Secret <cluster>-client-tls) for applications and itself, and issues a leaf certificate again when less than ${fractionText(RENEW_WHEN_REMAINING_FRACTION)} of its validity is left or its names changed`;
  return Type.Object(
    {
      secretName: Type.Optional(
        Type.String({
          description:
            side === 'peer'
              ? `A Secret in the cluster's namespace with ca.crt, tls.crt and tls.key, used by every member: tls.crt must be signed by ca.crt, cover *.<cluster>.<namespace>.svc, and allow serverAuth and clientAuth. The operator checks it before any member uses it (Degraded TLSSecretInvalid) and reports it ${EXPIRY_WARNING_DAYS} days before it expires (Degraded CertificateExpiring). Unset: operator-managed.`
              : `A Secret in the cluster's namespace with ca.crt, tls.crt and tls.key, used by every member and by the operator as its client identity: tls.crt must be signed by ca.crt, cover *.<cluster>.<namespace>.svc and the client Service names, and allow serverAuth and clientAuth; ca.crt is the CA client certificates must be signed by. The operator checks it before any member uses it (Degraded TLSSecretInvalid) and reports it ${EXPIRY_WARNING_DAYS} days before it expires (Degraded CertificateExpiring). Unset: operator-managed.`,
          minLength: 1,
          maxLength: 253,
        }),
      ),
    },
    { description: `${what} \`{}\`: ${operator}. Can be added to a running cluster (members move to it one at a time, docs/tls.md); cannot be removed or switched between operator-managed and a Secret.` },
  );
}

export const TlsSchema = Type.Object(
  {
    peer: Type.Optional(tlsSideSchema('peer')),
    client: Type.Optional(tlsSideSchema('client')),
    disabled: Type.Optional(
      Type.Boolean({
        description:
          'true: plaintext peers and clients, with neither peer nor client set. Only for a cluster that does not run TLS: turning TLS off in place is not built.',
      }),
    ),
  },
  {
    description:
      "TLS for members and clients (docs/tls.md). Unset (or with neither peer, client nor disabled), a new cluster gets operator-managed TLS on both sides (peer: {}, client: {}; the defaulting webhook writes them on create), and a cluster created before this default keeps running what it runs (plaintext) until its spec asks for TLS; `disabled: true` asks for plaintext. TLS is set at creation, or added to a running plaintext cluster, which moves to it one member at a time without downtime; it cannot be removed, or switched between operator-managed and a Secret.",
    'x-kubernetes-validations': [RULES.tlsPeerFixed, RULES.tlsClientFixed, RULES.tlsDisabledAlone],
  },
);

/** A metav1.LabelSelector, declared field by field so that the API server checks it before the operator copies it into a NetworkPolicy. */
function labelSelectorSchema(description: string) {
  return Type.Object(
    {
      matchLabels: Type.Optional(stringMap({ description: 'Labels an object must carry, each with this value.', maxProperties: 64 })),
      matchExpressions: Type.Optional(
        Type.Array(
          Type.Object(
            {
              key: Type.String({ description: 'The label key.', minLength: 1, maxLength: 317 }),
              operator: stringEnum(SELECTOR_OPERATORS, { description: 'In, NotIn, Exists or DoesNotExist.' }),
              values: Type.Optional(Type.Array(Type.String({ description: 'A label value.', maxLength: 63 }), { description: 'The values of In and NotIn; none for Exists and DoesNotExist.', maxItems: 64 })),
            },
            { description: 'A label selector requirement.' },
          ),
          { description: 'Requirements an object must meet, all of them.', maxItems: 32 },
        ),
      ),
    },
    { description },
  );
}

/** Who may reach the members' client port: a NetworkPolicyPeer without ipBlock. */
export const ClientPeerSchema = Type.Object(
  {
    namespaceSelector: Type.Optional(labelSelectorSchema("Namespaces whose pods may connect ({} for every namespace). Without podSelector: every pod of those namespaces; unset: the cluster's own namespace.")),
    podSelector: Type.Optional(labelSelectorSchema('Pods that may connect ({} for every pod), in the namespaces namespaceSelector selects, or in the cluster\'s own namespace when it is unset.')),
  },
  {
    description: 'A NetworkPolicyPeer (networking.k8s.io/v1) without ipBlock: namespaceSelector, podSelector, or both (pods of those labels in those namespaces).',
    minProperties: 1,
    'x-kubernetes-validations': [RULES.selectorValues],
  },
);

export const NetworkSchema = Type.Object(
  {
    policy: Type.Optional(
      Type.Boolean({
        description:
          "Whether the operator keeps a NetworkPolicy <cluster> for the members (docs/security.md): peers (2380) from the members and the operator's pods (a CA rotation reads the certificate each member serves there), clients (2379) from the members, the operator's pods, the cluster's backup Jobs and clientsFrom, metrics (2381) from the operator's pods and the monitoring namespaces of its configuration; every other ingress to the members is refused where the network enforces NetworkPolicy. Unset: true. false: no policy (the operator deletes the one it made).",
      }),
    ),
    clientsFrom: Type.Optional(
      Type.Array(ClientPeerSchema, {
        description: "Who may connect to the client port (2379), besides the members, the operator and the cluster's backup Jobs. Unset: every pod of the cluster's namespace. [] : no one else.",
        maxItems: 32,
      }),
    ),
  },
  { description: 'Who may reach the members over the network. On by default: a NetworkPolicy admitting clients from the cluster\'s namespace only.' },
);

export const EtcdClusterSpecSchema = Type.Object(
  {
    replicas: Type.Optional(
      Type.Integer({ description: 'Number of etcd members; odd numbers tolerate the most failures for their size.', format: 'int32', minimum: MIN_REPLICAS, maximum: MAX_REPLICAS, default: DEFAULT_REPLICAS }),
    ),
    version: Type.Optional(
      Type.String({
        description:
          "etcd version of the members (3.MINOR.PATCH). A change is rolled out one member at a time, followers first and the leader last after leadership moved to an updated member, each member gated on being healthy, Ready and caught up before the next goes; a member that fails its gate halts the rollout (docs/upgrades.md). It may move within a minor version, one minor version up, or back one minor version: a rollback of an upgrade whose cluster version (status.clusterVersion) has not moved yet, or from 3.6 a downgrade through etcd's downgrade API (enabled first; no member goes back before every member migrated its data). The operator changes no member for a move etcd would refuse (3.5 to 3.4 once the cluster version is 3.5).",
        pattern: VERSION_PATTERN,
        maxLength: 32,
        default: DEFAULT_VERSION,
        'x-kubernetes-validations': [RULES.versionChange],
      }),
    ),
    repository: Type.Optional(
      Type.String({ description: `Image repository, tagged v<version>; ${DEFAULT_REPOSITORY} when neither repository nor image is set.`, minLength: 1, maxLength: 512 }),
    ),
    image: Type.Optional(
      Type.String({ description: 'Full image reference overriding repository; it must run etcd of spec.version (a rolling update halts with VersionMismatch at a member that runs another).', minLength: 1, maxLength: 1024 }),
    ),
    storage: Type.Optional(StorageSchema),
    podTemplate: Type.Optional(PodTemplateSchema),
    antiAffinity: Type.Optional(
      stringEnum(ANTI_AFFINITIES, { description: 'Spread members across nodes: Required (one per node), Preferred (best effort) or None.', default: 'Preferred' }),
    ),
    etcd: Type.Optional(EtcdOptionsSchema),
    bootstrap: Type.Optional(BootstrapSchema),
    tls: Type.Optional(TlsSchema),
    network: Type.Optional(NetworkSchema),
    disasterRecovery: Type.Optional(DisasterRecoverySchema),
    backup: Type.Optional(ClusterBackupSchema),
    maintenance: Type.Optional(MaintenanceSchema),
    paused: Type.Optional(Type.Boolean({ description: 'Stop reconciling the cluster (members keep running) until set back to false.', default: false })),
    replaceStuckMemberAfterSeconds: Type.Optional(
      Type.Integer({
        description:
          'How long past its graceful-deletion deadline a member pod may stay Terminating (its node is down, so the kubelet cannot confirm the deletion) before the member is replaced by a new one elsewhere, provided a quorum serves without it. Silence alone never counts: only a pod Kubernetes is deleting.',
        format: 'int32',
        minimum: 30,
        maximum: 86400,
        default: 300,
      }),
    ),
  },
  {
    description: 'Desired state of the etcd cluster.',
    default: {},
    'x-kubernetes-validations': [RULES.imageOrRepository, RULES.bootstrapImmutable, RULES.restoreVersion, RULES.tlsFixed],
  },
);

// ---- status ----

export const ConditionSchema = Type.Object(
  {
    type: Type.String({ description: 'Condition type, e.g. Available, Progressing or Degraded.', pattern: '^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*/)?(([A-Za-z0-9][-A-Za-z0-9_.]*)?[A-Za-z0-9])$', maxLength: 316 }),
    status: stringEnum(CONDITION_STATUSES, { description: 'Status of the condition: True, False or Unknown.' }),
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the condition was computed from.', format: 'int64', minimum: 0 })),
    lastTransitionTime: Type.String({ description: 'When the status last changed.', format: 'date-time' }),
    reason: Type.String({ description: 'Machine-readable CamelCase reason for the last transition.', pattern: '^[A-Za-z]([A-Za-z0-9_,:]*[A-Za-z0-9_])?$', minLength: 1, maxLength: 1024 }),
    message: Type.String({ description: 'Human-readable details of the last transition.', maxLength: 32768 }),
  },
  { description: 'A metav1.Condition.' },
);

export const MemberSchema = Type.Object(
  {
    name: Type.String({ description: 'Member name, also the name of its pod and the DNS name in the headless Service.' }),
    id: Type.Optional(Type.String({ description: 'etcd member ID in hexadecimal.' })),
    peerURL: Type.Optional(Type.String({ description: 'URL other members reach this member on.' })),
    clientURL: Type.Optional(Type.String({ description: 'URL clients reach this member on.' })),
    ready: Type.Boolean({ description: 'Whether the member is started, healthy and a voting member or a learner catching up.' }),
    learner: Type.Boolean({ description: 'Whether the member is a raft learner (not yet promoted to a voter).' }),
    leader: Type.Boolean({ description: 'Whether the member is the raft leader.' }),
    version: Type.Optional(Type.String({ description: 'etcd server version the member reports.' })),
    dbSize: Type.Optional(Type.Integer({ description: 'Backend database size in bytes.', format: 'int64', minimum: 0 })),
    lastError: Type.Optional(Type.String({ description: 'Why the member keeps exiting: the exit code and the last lines etcd (or the peer-wait init container) printed.', maxLength: 2048 })),
  },
  { description: 'One etcd member as the operator last observed it.' },
);

export const StepSchema = Type.Object(
  {
    name: Type.String({ description: 'The step, e.g. "addMember c1-3" or "wait LearnerStarting".', maxLength: 128 }),
    startedAt: Type.String({ description: 'When the operator first chose this step.', format: 'date-time' }),
    lastError: Type.Optional(Type.String({ description: "The last refusal of this step, in etcd's or Kubernetes' words, with the member it went through.", maxLength: 4096 })),
    lastErrorReason: Type.Optional(Type.String({ description: 'Machine-readable kind of the last refusal, e.g. UnhealthyCluster.', maxLength: 64 })),
    refusedEverywhereSince: Type.Optional(Type.String({ description: 'Since when every voting member has refused this membership change.', format: 'date-time' })),
    failures: Type.Optional(Type.Integer({ description: 'Failed attempts of this step.', format: 'int32', minimum: 0 })),
    restarts: Type.Optional(Type.Integer({ description: `Members restarted for a stale peer view while this membership change was refused (at most ${MAX_STALE_PEER_RESTARTS}).`, format: 'int32', minimum: 0 })),
    warned: Type.Optional(Type.Boolean({ description: 'Whether the StepRetrying Warning event was emitted.' })),
    stalled: Type.Optional(Type.Boolean({ description: 'Whether the step passed its bound (StepStalled).' })),
  },
  { description: 'The step the operator is taking or retrying, and for how long: the record behind the Progressing condition.' },
);

export const RecoverySchema = Type.Object(
  {
    method: stringEnum(RECOVERY_METHODS, { description: 'ForceNewCluster: a surviving member restarted alone on its data; Backup: the cluster re-created from an EtcdBackup.' }),
    from: Type.String({ description: 'The surviving member, or the EtcdBackup, the cluster came back from.' }),
    revision: Type.String({ description: "The revision of that data: writes after it were lost (the data-loss window starts here).", pattern: '^[0-9]+$' }),
    dataTime: Type.Optional(Type.String({ description: 'When that data was current: the backup\'s completion, or the moment the survivor was last read.', format: 'date-time' })),
    lostMembers: Type.Array(Type.String({ maxLength: 63, description: 'A member name.' }), { maxItems: 9, description: 'The members whose data was gone.' }),
    startedAt: Type.String({ description: 'When the recovery began.', format: 'date-time' }),
    completedAt: Type.Optional(Type.String({ description: 'When the cluster served again after it.', format: 'date-time' })),
    source: Type.Optional(
      Type.Object(
        {
          destination: DestinationSchema,
          key: Type.String({ description: 'Object key of the snapshot.' }),
          sha256: Type.Optional(Type.String({ description: 'SHA-256 of the snapshot, checked before any member starts.' })),
        },
        { description: 'The stored snapshot a Backup recovery restores.' },
      ),
    ),
  },
  { description: 'The last recovery from quorum loss under spec.disasterRecovery.policy Restore: how, from what, and the data-loss window.' },
);

export const RolloutSchema = Type.Object(
  {
    target: Type.String({ description: 'Hash of the spec fields that shape member pods, as the rollout moves them to.', maxLength: 64 }),
    fromVersion: Type.Optional(Type.String({ description: 'status.currentVersion when the rollout began: what spec.version goes back to for a rollback.', maxLength: 32 })),
    targetVersion: Type.String({ description: 'spec.version when the rollout began.', maxLength: 32 }),
    startedAt: Type.String({ description: 'When the rollout began.', format: 'date-time' }),
    member: Type.Optional(Type.String({ description: 'The member being updated: recorded before its pod is evicted.', maxLength: 63 })),
    memberSince: Type.Optional(Type.String({ description: "When that member's update began: the start of its gate's bound.", format: 'date-time' })),
    halted: Type.Optional(
      Type.Object(
        {
          member: Type.String({ description: 'The updated member that failed its gate (for BackupFailed: the first member that would have been updated).', maxLength: 63 }),
          reason: stringEnum(HALT_REASONS, {
            description:
              'CrashLooping: its etcd keeps exiting; CannotStart: its container cannot start (the kubelet says why) past the bound; GateTimeout: it did not become healthy, Ready and caught up within the bound; VersionMismatch: it runs another etcd version than spec.version (spec.image); BackupFailed: the backup spec.backup asks for before a version change failed, so no member was touched (member names the first member that would have been updated).',
          }),
          message: Type.String({ description: "What failed, in etcd's or the kubelet's words.", maxLength: 4096 }),
          at: Type.String({ description: 'When the rollout halted.', format: 'date-time' }),
        },
        { description: 'Set when the rollout stopped: no further member is updated until spec changes (a rollback) or the etcd.quorum.dev/retry-rollout annotation gets a new value.' },
      ),
    ),
    retryToken: Type.Optional(Type.String({ description: 'The etcd.quorum.dev/retry-rollout annotation value when this rollout began; a different value retries a halted rollout.', maxLength: 256 })),
    backup: Type.Optional(Type.String({ description: 'The EtcdBackup taken before this rollout touched a member (spec.backup.beforeVersionChange Always, for a change of spec.version).', maxLength: 63 })),
  },
  { description: 'The rolling update under way, recorded before each step so that a restarted operator resumes it; removed once every member runs the spec.' },
);

export const DefragRecordSchema = Type.Object(
  {
    member: Type.String({ description: 'The member defragmented.', maxLength: 63 }),
    at: Type.String({ description: 'When its defragmentation ended.', format: 'date-time' }),
    durationMs: Type.Integer({ description: 'How long it took: the time the member served no requests.', format: 'int64', minimum: 0 }),
    reason: stringEnum(DEFRAG_REASONS, { description: 'Threshold: its fragmentation reached spec.maintenance.defrag.thresholdPercent; Schedule: spec.maintenance.defrag.schedule fired; NoSpace: recovering from a NOSPACE alarm.' }),
    dbSizeBefore: Type.Optional(Type.Integer({ description: 'Its backend size before, in bytes.', format: 'int64', minimum: 0 })),
    dbSizeAfter: Type.Optional(Type.Integer({ description: 'Its backend size after, in bytes.', format: 'int64', minimum: 0 })),
  },
  { description: "A member's last defragmentation." },
);

export const MaintenanceStatusSchema = Type.Object(
  {
    lastDefrag: Type.Optional(
      Type.Array(DefragRecordSchema, { description: "Each member's last defragmentation.", maxItems: 9, 'x-kubernetes-list-type': 'map', 'x-kubernetes-list-map-keys': ['member'] }),
    ),
    noSpace: Type.Optional(
      Type.Object(
        {
          since: Type.String({ description: 'When the operator first saw the alarm.', format: 'date-time' }),
          compactedRevision: Type.Optional(Type.String({ description: 'The revision the recovery compacted to (recorded before the compaction).', pattern: '^[0-9]+$' })),
          compactedAt: Type.Optional(Type.String({ description: 'When it compacted: members defragmented after it are done.', format: 'date-time' })),
        },
        { description: "A NOSPACE alarm being recovered from: compaction, each member's defragmentation, then the disarm. Removed once no member reports the alarm." },
      ),
    ),
  },
  { description: "Maintenance of the members' storage as it went." },
);

const TlsSideStatusSchema = Type.Object(
  {
    mode: stringEnum(TLS_MODES, { description: 'Operator: certificates the operator issued; Secret: the Secret spec.tls names.' }),
    notAfter: Type.Optional(Type.String({ description: 'When the first of the certificates members use on this side expires.', format: 'date-time' })),
    caRotation: Type.Optional(
      Type.Object(
        {
          phase: stringEnum(['TrustNew', 'Reissue'] as const, {
            description: 'TrustNew: members are restarted trusting the old and the new CA; Reissue: certificates are signed by the new CA (read live); the old CA leaves the bundles after the overlap, and members restart once more.',
          }),
          since: Type.Optional(Type.String({ description: 'Reissue: when signing moved to the new CA; the old CA is dropped from the bundles an overlap after it.', format: 'date-time' })),
          message: Type.Optional(Type.String({ description: 'What the rotation waits for now.', maxLength: 1024 })),
        },
        { description: 'An operator-managed CA rotation under way on this side (docs/tls.md "Rotating a CA").' },
      ),
    ),
  },
  { description: 'One side of TLS as the members use it.' },
);

export const TlsStatusSchema = Type.Object(
  {
    peer: Type.Optional(TlsSideStatusSchema),
    client: Type.Optional(TlsSideStatusSchema),
    clientSecret: Type.Optional(
      Type.String({ description: 'The Secret (ca.crt, tls.crt, tls.key) a client needs to reach the members: <cluster>-client-tls when operator-managed.', maxLength: 253 }),
    ),
  },
  { description: 'TLS as the members use it.' },
);

export const EtcdClusterStatusSchema = Type.Object(
  {
    observedGeneration: Type.Optional(Type.Integer({ description: 'metadata.generation the status was computed from.', format: 'int64', minimum: 0 })),
    phase: Type.Optional(stringEnum(PHASES, { description: 'Summary of the cluster lifecycle; see conditions for details.' })),
    conditions: Type.Optional(
      Type.Array(ConditionSchema, {
        description: 'Latest observations of the cluster: Available, Progressing, Degraded and others.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['type'],
      }),
    ),
    replicas: Type.Optional(Type.Integer({ description: 'Number of members in the etcd member list.', format: 'int32', minimum: 0 })),
    readyReplicas: Type.Optional(Type.Integer({ description: 'Number of members that are ready.', format: 'int32', minimum: 0 })),
    updatedReplicas: Type.Optional(Type.Integer({ description: 'Number of members whose pod was made from the current spec.', format: 'int32', minimum: 0 })),
    members: Type.Optional(
      Type.Array(MemberSchema, {
        description: 'The etcd members, one entry per member.',
        'x-kubernetes-list-type': 'map',
        'x-kubernetes-list-map-keys': ['name'],
      }),
    ),
    clusterID: Type.Optional(Type.String({ description: 'etcd cluster ID in hexadecimal.' })),
    leader: Type.Optional(Type.String({ description: 'Name of the member that is the raft leader.' })),
    currentVersion: Type.Optional(
      Type.String({ description: 'The etcd version every member runs. It changes only once every member reports the same version: during a rolling update it keeps the old one until the last member runs the new one.' }),
    ),
    clusterVersion: Type.Optional(
      Type.String({
        description:
          "etcd's cluster version (the etcdcluster of a member's /version, e.g. 3.5.0): the minor every member supports, decided by etcd's leader. It moves up within seconds of the last member running a newer minor version; from then on members cannot go back to the older minor's binaries.",
      }),
    ),
    targetVersion: Type.Optional(Type.String({ description: 'spec.version: the etcd version the operator rolls every member to (status.rollout records a rolling update under way).' })),
    clientEndpoint: Type.Optional(Type.String({ description: 'URL clients should use: the client Service (https when spec.tls.client is set).' })),
    tls: Type.Optional(TlsStatusSchema),
    nextMemberIndex: Type.Optional(
      Type.Integer({ description: 'Index for the next new member name: member names are never reused.', format: 'int64', minimum: 0 }),
    ),
    bootstrapMembers: Type.Optional(
      Type.Array(Type.String({ maxLength: 63, description: 'A member name.' }), { maxItems: 9, description: 'Members of the initial static bootstrap, recorded before their pods are created.' }),
    ),
    step: Type.Optional(StepSchema),
    recovery: Type.Optional(RecoverySchema),
    rollout: Type.Optional(RolloutSchema),
    maintenance: Type.Optional(MaintenanceStatusSchema),
  },
  { description: 'Observed state of the etcd cluster, written by the operator.' },
);

export const EtcdClusterSchema = Type.Object(
  {
    apiVersion: Type.Optional(Type.String({ description: 'APIVersion of this object: etcd.quorum.dev/v1alpha1.' })),
    kind: Type.Optional(Type.String({ description: 'Kind of this object: EtcdCluster.' })),
    // Only metadata.name may be restricted in a CRD (not even a description may be set on metadata);
    // the rest of ObjectMeta is the API server's.
    metadata: Type.Optional(Type.Unsafe<EtcdClusterMetadata>({
      type: 'object',
      properties: {
        name: {
          description: `Cluster name: a DNS-1035 label of at most ${MAX_NAME_LENGTH} characters, as the Services and member names derived from it require.`,
          type: 'string',
          pattern: NAME_PATTERN,
          maxLength: MAX_NAME_LENGTH,
        },
      },
    })),
    spec: Type.Optional(EtcdClusterSpecSchema),
    status: Type.Optional(EtcdClusterStatusSchema),
  },
  { description: 'An etcd cluster run by the Quorum operator: one pod and one volume per member.' },
);
