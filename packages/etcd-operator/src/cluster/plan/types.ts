// What the planner decides from (Observed, gathered by observe.ts and the reconciler) and what it decides
// (Action: one step, taken by act/). Types only: the planner's modules, the act handlers and the status all
// speak these.
import type { VersionPath } from '../../api/defaults.ts';
import type { BackupPhase } from '../../api/etcdbackup.ts';
import type { Destination } from '../../api/destination.ts';
import type { DefragReason, HaltReason, RolloutRecord } from '../../api/etcdcluster.ts';
import type { ObservedTLS } from '../../tls/cluster-secrets.ts';
import type { RestoreSource } from '../resources.ts';

export type { HaltReason, RolloutRecord };

export interface ObservedPod {
  member: string;
  phase: string;
  ready: boolean;
  deleting: boolean;
  /** When the pod's graceful deletion should have ended (its deletionTimestamp, ms since epoch). */
  deletingSince?: number;
  /** The node the pod runs on, to name it when the pod is stuck there. */
  nodeName?: string;
  /** Since when the etcd container has been waiting in CrashLoopBackOff (ms since epoch). */
  crashLoopingSince?: number;
  /** Why a container of the pod cannot start, as the kubelet says it (e.g. "peer-wait: ImagePullBackOff: …"). */
  cannotStart?: string;
  /**
   * The pod never got past its init container, which runs another peer-wait image than the operator's
   * configured one (the operator was reconfigured or upgraded): etcd never ran in it, so it is safe to
   * recreate it with the current template.
   */
  initOutdated?: boolean;
  /** How the etcd container last ended: exit code and the last lines etcd printed (the termination message). */
  lastTermination?: { exitCode: number; message: string };
  /** A restore init container (fetch-snapshot, restore-snapshot) refused the snapshot: its own words. */
  restoreFailed?: string;
  /**
   * etcd's last words say this member's data is gone for good (a wiped or replaced volume): its data directory
   * is empty while the cluster knows it, or its raft log lacks entries it had acknowledged (etcdSaysDataLost).
   */
  dataLost?: boolean;
  /** The pod runs etcd with --force-new-cluster (a disaster recovery from this member's data). */
  forcedNewCluster?: boolean;
  /** Since when the pod has been Ready (its Ready condition's lastTransitionTime, ms since epoch); unset when not Ready. */
  readySince?: number;
}

/** The newest Succeeded EtcdBackup of the cluster: what a Restore policy falls back on. */
export interface BackupCandidate {
  name: string;
  revision: string;
  completedAt?: string;
  source: RestoreSource;
}

/** A recovery from quorum loss under way (status.recovery without completedAt). */
export interface RecoveryInProgress {
  method: 'ForceNewCluster' | 'Backup';
  from: string;
  source?: RestoreSource;
}

export interface ObservedMember {
  id: string;
  /** Our member name (from the peer URL). */
  member: string;
  /** False for a member that was added but has never started (etcd reports no name for it yet). */
  started: boolean;
  learner: boolean;
  /** The scheme of its peer URL in etcd's member list (unset in tests that do not care: https for a TLS cluster). */
  peerScheme?: 'http' | 'https';
  /** Whether its own endpoint answered a status request just now. */
  healthy: boolean;
  /** The etcd server version it reports (its status), e.g. "3.5.35". */
  version?: string;
  /** Read during a rollout only: its applied raft index (status raftAppliedIndex) after the leader's commit index was read. */
  appliedIndex?: string;
  /** Read during a rollout only: its applied index is at or above the leader's commit index read before it (Membership.leaderCommit). */
  caughtUp?: boolean;
  /** Read during a rollout only (3.6+): the storage schema version of its data, e.g. "3.5.0" once migrated down. */
  storageVersion?: string;
  /** Read during a rollout only (3.6+): a downgrade in flight as it sees it. */
  downgrade?: { enabled: boolean; targetVersion?: string };
}

export interface Membership {
  members: ObservedMember[];
  leaderId: string | undefined;
  /** Read during a rollout only: the leader's raft index (its committed index), read before each member's applied index. */
  leaderCommit?: string;
}

/** The EtcdBackup a version change takes before it touches a member (spec.backup.beforeVersionChange Always). */
export interface PreUpgradeBackup {
  name: string;
  destination: Destination;
  /** Missing: not created yet. */
  phase: BackupPhase | 'Missing';
  /** Why it failed, in its own Failed condition's words. */
  message?: string;
  /** How long to wait for it: its Job's deadline and a minute to start. */
  boundMs: number;
}

/**
 * What a rolling update of member pods decides from (see rolloutStep). Gathered only while something is
 * outdated or a rollout is recorded, so a cluster at rest costs no extra etcd calls.
 */
export interface ObservedRollout {
  /** Members whose pod was not made from the current spec, with the fields that differ. */
  outdated: { member: string; fields: string[] }[];
  /** The current spec's template hash: RolloutRecord.target of a rollout to it. */
  target: string;
  /** spec.version. */
  targetVersion: string;
  /** status.currentVersion: every member's version before the rollout, when they all ran one. */
  currentVersion?: string;
  /** status.rollout, as the last status write left it. */
  record?: RolloutRecord;
  /** The etcd.quorum.dev/retry-rollout annotation: a value the record has not consumed yet asks to retry a halted rollout. */
  retryToken?: string;
  /** How the members' versions get to spec.version, as etcd allows it (api/defaults.ts versionPath). */
  path: VersionPath;
  /** etcd's active alarms, by member name; undefined when they could not be read (alarmsUnread says why). */
  alarms?: { member: string; alarm: string }[];
  alarmsUnread?: string;
  /** How long an updated member may take to pass its gate before the rollout halts. */
  gateBoundMs: number;
  /** How long an updated member's pod must have been Ready before the next member goes. */
  minReadyMs: number;
  /** Set for a recorded version change when spec.backup asks for a backup before it. */
  preBackup?: PreUpgradeBackup;
  /** etcd's cluster version, when it was read (e.g. "3.5.0"). */
  clusterVersion?: string;
  /** A downgrade in flight, as a 3.6 member reports it; undefined when no member says (3.5 members do not). */
  downgrade?: { enabled: boolean; targetVersion?: string };
  /**
   * Plaintext to peer TLS in place: members whose peer URL is still http although spec.tls.peer is set. Each is
   * switched (a member update to https, then the usual update of its pod) once every pod has the peer certificates.
   */
  peerSwitch?: string[];
  /** The peer scheme a member added now gets (tls/members.ts newMemberPeerScheme). */
  newMemberPeerScheme?: 'http' | 'https';
}

/**
 * A membership change that etcd keeps refusing through every voting member (the strict reconfiguration
 * check: "unhealthy cluster"), with each member's view of which peers are active, read from its metrics.
 */
export interface RefusedChange {
  /** When the refusals began (ms since epoch). */
  since: number;
  /** Per member name: the member names it reports active in `etcd_network_active_peers`. */
  activePeers: Record<string, string[]>;
  /** Members already restarted for this change. */
  restarts?: number;
}


/** The cluster's TLS Secrets (tls/cluster-secrets.ts observeTLS), for a cluster with spec.tls. */
export type { ObservedTLS };

/**
 * What storage maintenance decides from: each member's backend sizes and the alarms, all from the status every
 * member is asked anyway (observeEtcd), so an idle cluster costs no extra etcd call for it.
 */
export interface ObservedSpace {
  /** Per member that answered its status: its backend file size and the part in use (3.4+ report both). */
  sizes: { member: string; dbSize: number; dbSizeInUse?: number }[];
  /** Alarms the members' statuses name, with the member each is raised for (name, and etcd's decimal ID). */
  alarms: { member: string; memberId: string; alarm: string }[];
  /** The highest store revision a member reported: what a NOSPACE recovery compacts to. */
  revision?: string;
  /** The backend quota each member runs with (spec.etcd.quotaBackendBytes, else etcd's 2 GiB). */
  quotaBytes: number;
  /** spec.maintenance.defrag.thresholdPercent. */
  thresholdPercent?: number;
  /** The latest time spec.maintenance.defrag.schedule fired (ms), once it is after the cluster was created. */
  scheduledAt?: number;
  /** Each member's last defragmentation (status.maintenance.lastDefrag), ms since epoch. */
  lastDefrag: Record<string, number>;
  /** A NOSPACE recovery under way (status.maintenance.noSpace): when it compacted (ms), once it did. */
  noSpace?: { compactedAt?: number };
}

export interface Observed {
  cluster: string;
  replicas: number;
  /** Storage survives the pod (PVC) or not (emptyDir). */
  persistent: boolean;
  reclaimPolicy: 'Retain' | 'Delete';
  pods: ObservedPod[];
  /** Members that have a PVC (not being deleted). */
  pvcs: string[];
  /** etcd's member list from a linearizable read (a quorum answered), or undefined if none could be had. */
  membership: Membership | undefined;
  /** Members whose pods did not answer, with why, when no quorum answered (named in the wait). */
  unreachable?: { member: string; error: string }[];
  /** Members the status last recorded (to recreate pods when no quorum answers). */
  lastKnownMembers: string[];
  /** Whether the cluster ever bootstrapped (status.clusterID set). */
  bootstrapped: boolean;
  /** The members of the initial static bootstrap, as recorded in status before their pods were created. */
  bootstrapMembers: string[];
  /** Highest member index ever used + 1, as recorded in status. */
  nextMemberIndex: number;
  now: number;
  /** How long a member may crash-loop, with a healthy quorum, before it is replaced. */
  crashLoopGraceMs: number;
  /** How long a member's pod may stay Terminating (e.g. on a dead node), with a healthy quorum, before it is replaced. */
  stuckTerminatingReplaceMs: number;
  /** Set while a membership change is refused through every member; see RefusedChange. */
  refused?: RefusedChange;
  /** How long a change may be refused everywhere before the member with a stale view of a peer is restarted. */
  refusedRestartMs: number;
  /** Set for a cluster not yet bootstrapped whose spec.bootstrap.fromBackup asks for a restore. */
  restore?: { ready: true; source: RestoreSource } | { ready: false; reason: 'BackupNotReady' | 'SnapshotHashMissing' | 'CredentialsNotLabelled' | 'CredentialsSecretNotFound'; why: string };
  /** spec.disasterRecovery.policy: what to do once a majority of members lost its data for good. */
  disasterRecovery: 'Manual' | 'Restore';
  /** Without a quorum, each running member's own revision (read from it alone), by member name. */
  localRevisions?: Record<string, string>;
  newestBackup?: BackupCandidate;
  recovery?: RecoveryInProgress;
  rollout: ObservedRollout;
  /** Set for a cluster with spec.tls. */
  tls?: ObservedTLS;
  /** Storage maintenance: sizes, alarms, the defragmentation policy and what was done (unset in tests that do not care). */
  space?: ObservedSpace;
}

export type Action =
  | { type: 'bootstrap'; members: string[]; restore?: RestoreSource }
  | { type: 'createPod'; member: string; state: 'new' | 'existing'; initialMembers: string[]; reason: string; restore?: RestoreSource; forceNewCluster?: boolean }
  | { type: 'deletePod'; member: string; reason: string }
  | { type: 'deletePVC'; member: string; reason: string }
  /** `peerScheme`: https once every member can dial one (tls/members.ts newMemberPeerScheme); unset: http. */
  /**
   * `endDowngradeTo`: every member runs this minor (3.5+), so a downgrade to it that etcd still has enabled is
   * over; the act ends it (CANCEL) before adding. etcd ends it itself only when every member in the membership
   * answers, which a learner added before that never does, and a new member refuses to join while it is enabled
   * ("incompatible with current running cluster"): without this, a scale-up right after a downgrade deadlocks.
   */
  | { type: 'addMember'; member: string; peerScheme?: 'https'; endDowngradeTo?: string }
  | { type: 'promoteMember'; member: string; id: string }
  | { type: 'removeMember'; member: string; id: string; reason: string }
  /** Quorum is lost for good and the policy is Restore: record how the cluster comes back (status first), then begin. */
  | { type: 'startRecovery'; method: 'ForceNewCluster' | 'Backup'; from: string; revision: string; dataTime?: string; lost: string[]; source?: RestoreSource; detail: string }
  /** A Backup recovery: every old pod and claim goes, then the cluster bootstraps from the backup. */
  | { type: 'clearForRestore'; reason: string }
  /** Evict (PDB-respecting) a healthy member's pod so that its peers reconnect to it: etcd-io/etcd#14523. */
  | { type: 'restartMember'; member: string; reason: 'StalePeerView'; detail: string }
  /** A rolling update begins (status only: the record is written before anything is touched). */
  | { type: 'startRollout'; record: RolloutRecord; detail: string }
  /**
   * One member gets the current spec: its pod is evicted (PDB-respecting) and recreated on the same PVC as
   * the same member (`evict`), or, on emptyDir, the member is removed and replaced by a new one (`replace`).
   * Status records it as the rollout's member before this is done. `storageVersion`: a downgrade's member on
   * the newer binary goes only if its own data says it was migrated to this storage version (read at the last
   * moment from the member itself). `clusterVersionAtMost`: a rollback to an
   * older minor, refused at the last moment if etcd's cluster version has moved past it meanwhile.
   */
  | { type: 'updateMember'; member: string; id: string; via: 'evict' | 'replace'; detail: string; clusterVersionAtMost?: string; storageVersion?: string }
  /**
   * etcd's downgrade API, through `via` (a 3.6 member): `enable` (VALIDATE, then ENABLE) before the first member
   * of a downgrade goes back; `cancel` when spec.version no longer goes to the downgrade's minor.
   */
  | { type: 'downgrade'; op: 'enable' | 'cancel'; target: string; via: string; detail: string }
  /**
   * Plaintext to peer TLS: etcd's member update of the member's peer URL to https (etcd's order: the URL first,
   * then the restart). Until its pod is updated (the next step) its peers cannot reach it: one member down.
   */
  | { type: 'switchPeerURL'; member: string; id: string; detail: string }
  /** Leadership to an updated, caught-up member, so that the old leader is updated as a follower. */
  | { type: 'moveLeader'; from: string; fromId: string; to: string; toId: string; detail: string }
  /** The backup spec.backup asks for before a version change (AlreadyExists is this step done). */
  | { type: 'createBackup'; name: string; destination: Destination; detail: string }
  /** An updated member failed its gate: the rollout stops here (status only, plus a Warning event). */
  | { type: 'haltRollout'; member: string; reason: HaltReason; message: string }
  /** `subject`: the member the wait is about (a step per member); `boundMs`: its own bound instead of the default step deadline. */
  | { type: 'wait'; reason: string; detail: string; requeueAfterMs: number; subject?: string; boundMs?: number }
  /** Issue these operator-managed TLS Secrets (a CA only when it is missing: replacing one would cut every member off). */
  | { type: 'issueTLSSecrets'; secrets: { name: string; reason: string }[]; detail: string }
  /** The `<member>-tls` Secret of a member that is gone for good. */
  | { type: 'deleteTLSSecret'; member: string }
  /** A step of an operator-managed CA rotation, written to the CA Secret (tls/secrets.ts rotatedCAContents). */
  | { type: 'rotateCA'; ca: 'peer' | 'client'; step: 'TrustNew' | 'Reissue' | 'DropOld'; detail: string }
  /**
   * NOSPACE recovery, first step: compact the whole keyspace to `revision` (through `via`, physical: it answers
   * once every member applied it), so that the defragmentations after it have free pages to drop.
   */
  | { type: 'compact'; revision: string; via: string; detail: string }
  /** One member's backend rewritten without its free pages (etcd's defragment, sent to that member alone). */
  | { type: 'defragment'; member: string; reason: DefragReason; dbSize: number; timeoutMs: number; detail: string }
  /** NOSPACE recovery, last step: the alarms deactivated (through `via`), once the data fits the quota again. */
  | { type: 'disarmAlarm'; alarms: { member: string; memberId: string; alarm: string }[]; via: string; detail: string }
  | { type: 'steady' };

