// The decision at the heart of the operator, as a pure function: given what is observed now (the
// EtcdCluster, its Pods and PVCs, and etcd's own member list as a quorum reports it), the single next
// step. No step is taken on silence: a member that does not answer is not presumed gone; only Kubernetes
// (a Pod or PVC that is gone or failed) or a quorum's member list counts as evidence.
// docs/design.md walks through why each step is safe, including when the operator dies right after it.
import type { VersionPath } from '../api/defaults.ts';
import type { BackupPhase } from '../api/etcdbackup.ts';
import type { Destination } from '../api/destination.ts';
import type { DefragReason, HaltReason, RolloutRecord } from '../api/etcdcluster.ts';
import { quorum } from '../etcd/quorum.ts';
import type { RestoreSource } from './resources.ts';
import { memberIndex, memberName, RETRY_ROLLOUT_ANNOTATION } from './names.ts';

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
  /** The peer scheme a member added now gets (tls.ts newMemberPeerScheme). */
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

/** Restarts for a stale peer view per refused change; past them the change stays refused, Degraded, for a person. */
export const MAX_STALE_PEER_RESTARTS = 2;

/**
 * The cluster's TLS Secrets, for a cluster with spec.tls (tls-secrets.ts observeTLS). A member's own Secret is
 * made with its pod (act createPod); these are the rest.
 */
export interface ObservedTLS {
  /** Operator-managed Secrets to issue, or issue again, with why (a missing CA, a member certificate that expires soon, …). */
  issue: { name: string; reason: string }[];
  /** Members that have an operator-managed `<member>-tls` Secret. */
  memberSecrets: string[];
  /** Why the certificates cannot be used (a user's Secret that fails its check, an unreadable CA): no pod is created or changed. */
  invalid?: string;
  /**
   * An operator-managed CA that is being rotated, or should be (the first side that needs it, peer first).
   * `Start`: asked for (the etcd.quorum.dev/rotate-ca annotation, or the CA nears its end) and not begun.
   * `notServedByNew`: read only in Reissue once the overlap has passed, by a TLS handshake with every member: each serves a certificate of the new CA
   * (the kubelet refreshes mounted Secrets on its own period); the member names that do not, otherwise.
   */
  caRotation?: { ca: 'peer' | 'client'; phase: 'Start' | 'TrustNew' | 'Reissue'; why: string; rotatedAt?: number; notServedByNew?: string[] };
  /** How long the old CA stays trusted after signing moved to the new one (applications pick up the new client certificate). */
  caOverlapMs?: number;
}

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

/** Free pages worth a defragmentation by threshold: below this, rewriting the file gains nothing that matters. */
export const DEFRAG_MIN_FREE_BYTES = 1024 * 1024;
/** A member is not defragmented by threshold again this soon: a file that stays fragmented must not make a loop. */
export const DEFRAG_COOLDOWN_MS = 10 * 60_000;
/** The NOSPACE alarm is disarmed only when the data in use fits this share of the quota, or it would be raised again at once. */
export const NOSPACE_FIT = 0.9;

/** How long one member's defragmentation may take: a minute, plus its file rewritten at 10 MiB/s. */
export function defragTimeoutMs(dbSize: number): number {
  return 60_000 + Math.ceil((dbSize / (10 * 1024 * 1024)) * 1000);
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
  restore?: { ready: true; source: RestoreSource } | { ready: false; why: string };
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
  /** `peerScheme`: https once every member can dial one (tls.ts newMemberPeerScheme); unset: http. */
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

/** The next unused member index: never one that a member, pod, PVC or the status has used. */
export function nextIndex(o: Observed): number {
  const used = [
    ...o.pods.map((p) => p.member),
    ...o.pvcs,
    ...(o.membership?.members.map((m) => m.member) ?? []),
    ...o.lastKnownMembers,
  ].map((m) => memberIndex(o.cluster, m) ?? -1);
  return Math.max(o.nextMemberIndex, ...used.map((i) => i + 1), 0);
}

export { quorum };

const seconds = (ms: number): number => Math.round(ms / 1000);

/** This long past its graceful-deletion deadline, a terminating pod is reported as stuck (with its node and what a person can do). */
export const STUCK_TERMINATING_NOTICE_MS = 15_000;

/**
 * How many members a restore bootstraps. Each one reads the snapshot from its source in an init container.
 * A PVC is usually ReadWriteOnce on node-local storage, pinned to one node, while members must run on
 * different nodes; so a restore from a PVC bootstraps one member, and the cluster grows to spec.replicas
 * from it the usual way (learners that receive the data from the leader). Object stores are read by every
 * initial member at once.
 */
export function restoredMembers(replicas: number, source: RestoreSource | undefined): number {
  return source?.destination.pvc ? 1 : replicas;
}

export function plan(o: Observed): Action {
  const pod = (member: string): ObservedPod | undefined => o.pods.find((p) => p.member === member);
  const hasPVC = (member: string): boolean => o.pvcs.includes(member);

  // TLS material comes before any pod: a member must never start (or restart) without the certificates its
  // flags name, and certificates that fail their check are a person's to fix, not something to retry around.
  if (o.tls?.invalid) return { type: 'wait', reason: 'TLSSecretInvalid', detail: o.tls.invalid, requeueAfterMs: 30_000 };
  if (o.tls && o.tls.issue.length > 0) {
    return { type: 'issueTLSSecrets', secrets: o.tls.issue, detail: `issuing ${o.tls.issue.map((s) => `${s.name} (${s.reason})`).join(', ')}` };
  }

  // Pods Kubernetes gave up on (evicted, failed) are replaced in place: same member, same PVC.
  const failed = o.pods.find((p) => p.phase === 'Failed' && !p.deleting);
  if (failed) return { type: 'deletePod', member: failed.member, reason: 'PodFailed' };
  const staleInit = o.pods.find((p) => p.initOutdated && !p.deleting);
  if (staleInit) return { type: 'deletePod', member: staleInit.member, reason: 'InitContainerOutdated' };

  // A Backup recovery under way: the old cluster is cleared, then bootstrapped anew from the backup.
  if (o.recovery?.method === 'Backup' && !o.bootstrapped && o.recovery.source && o.bootstrapMembers.length === 0) {
    if (o.pods.some((p) => !p.deleting) || o.pvcs.length > 0) return { type: 'clearForRestore', reason: `restoring from EtcdBackup ${o.recovery.from}` };
    if (o.pods.length > 0) return { type: 'wait', reason: 'RestoringFromBackup', detail: `waiting for the old members' pods to go before restoring from EtcdBackup ${o.recovery.from}`, requeueAfterMs: 2000 };
    const first = nextIndex(o);
    return { type: 'bootstrap', members: Array.from({ length: restoredMembers(o.replicas, o.recovery.source) }, (_, i) => memberName(o.cluster, first + i)), restore: o.recovery.source };
  }

  if (!o.membership) {
    // Nothing exists yet: bootstrap the initial size statically, all members at once. The member list is
    // recorded (status) before any pod exists, so a crash part-way resumes the same bootstrap.
    // A restore waits for its snapshot (an EtcdBackup still running, or not there yet) before any member exists.
    const restore = o.bootstrapped ? undefined : o.restore;
    if (restore && !restore.ready) return { type: 'wait', reason: 'BackupNotReady', detail: restore.why, requeueAfterMs: 5000 };
    const source = restore?.ready ? { restore: restore.source } : {};
    if (!o.bootstrapped && o.bootstrapMembers.length === 0 && o.pods.length === 0 && o.pvcs.length === 0 && o.lastKnownMembers.length === 0) {
      const first = nextIndex(o);
      return { type: 'bootstrap', members: Array.from({ length: restoredMembers(o.replicas, source.restore) }, (_, i) => memberName(o.cluster, first + i)), ...source };
    }
    if (!o.bootstrapped && o.bootstrapMembers.length > 0) {
      const missing = o.bootstrapMembers.find((m) => !pod(m));
      if (missing) return { type: 'createPod', member: missing, state: 'new', initialMembers: o.bootstrapMembers, reason: 'Bootstrap', ...source };
      // Refused by a check before etcd started: nothing serves it, and waiting will not change the bytes.
      const refused = o.pods.filter((p) => p.restoreFailed);
      if (refused.length > 0) {
        return { type: 'wait', reason: 'SnapshotRefused', detail: `the snapshot was refused before any member started; no member serves it: ${refused.map((p) => `${p.member}: ${p.restoreFailed}`).join('; ')}`, requeueAfterMs: 10_000 };
      }
      return { type: 'wait', reason: 'Bootstrapping', detail: `waiting for the initial members (${o.bootstrapMembers.join(', ')}) to form a quorum${unreachableDetail(o)}`, requeueAfterMs: 1000 };
    }
    // No quorum answered. Bringing back a deleted pod of a known member is always safe (same member, same
    // data) and may be what restores the quorum; anything touching membership must wait.
    const known = o.bootstrapped ? o.lastKnownMembers : o.pods.map((p) => p.member).concat(o.pvcs);
    if (o.recovery?.method === 'ForceNewCluster') {
      const survivor = o.recovery.from;
      const p = pod(survivor);
      if (!p) return { type: 'createPod', member: survivor, state: 'existing', initialMembers: [survivor], reason: 'ForceNewCluster', forceNewCluster: true };
      if (!p.forcedNewCluster && !p.deleting) return { type: 'deletePod', member: survivor, reason: 'ForceNewCluster' };
      return { type: 'wait', reason: 'ForcingNewCluster', detail: `${survivor} restarts alone on its data with --force-new-cluster${podDetail(p)}`, requeueAfterMs: 2000 };
    }
    for (const member of known) {
      if (!pod(member) && (hasPVC(member) || !o.persistent)) {
        const first = !o.bootstrapped && known.length === 1;
        return { type: 'createPod', member, state: first ? 'new' : 'existing', initialMembers: first ? [member] : known, reason: 'PodMissing' };
      }
    }
    if (!o.bootstrapped) return { type: 'wait', reason: 'Bootstrapping', detail: `waiting for the first member to serve${unreachableDetail(o)}`, requeueAfterMs: 2000 };
    const lost = disaster(o);
    if (lost) return lost;
    return { type: 'wait', reason: 'QuorumUnavailable', detail: `no quorum answered a member list; membership is left alone${unreachableDetail(o)}`, requeueAfterMs: 5000 };
  }

  const members = o.membership.members;
  const inMembership = new Set(members.map((m) => m.member));

  // --force-new-cluster did its work once the member serves alone: every later restart must be a plain one
  // (the flag would rewrite the membership again).
  const forced = o.pods.find((p) => p.forcedNewCluster && !p.deleting);
  if (forced) {
    // The cluster grows back only after that restart (status records the recovery complete first).
    if (o.recovery === undefined) return { type: 'deletePod', member: forced.member, reason: 'ForceNewClusterDone' };
    return { type: 'wait', reason: 'ForcingNewCluster', detail: `${forced.member} serves alone after --force-new-cluster; it restarts without the flag, then the cluster grows back`, requeueAfterMs: 1000 };
  }
  const names = members.map((m) => m.member);

  // Pods of members that are not (or no longer) in the membership: a finished removal, or a crash between
  // removing a member and deleting its pod.
  const orphan = o.pods.find((p) => !inMembership.has(p.member) && !p.deleting);
  if (orphan) return { type: 'deletePod', member: orphan.member, reason: 'NotAMember' };
  // A member's certificates go with the member, once neither etcd nor Kubernetes has anything of it left.
  // An initial member keeps its own only while the cluster bootstraps: once replaced (its data wiped, say),
  // a former initial member's certificate is as stale as any other's.
  const staleSecret = o.tls?.memberSecrets.find((m) => !inMembership.has(m) && !pod(m) && !(!o.bootstrapped && o.bootstrapMembers.includes(m)));
  if (staleSecret) return { type: 'deleteTLSSecret', member: staleSecret };

  // Members without a pod: an added member whose pod was never created, or a pod Kubernetes deleted.
  for (const m of members) {
    if (pod(m.member)) continue;
    if (!m.started) return { type: 'createPod', member: m.member, state: 'existing', initialMembers: names, reason: 'MemberAdded' };
    // The rollout's member comes back on its PVC with the current spec: the second half of its update.
    if (hasPVC(m.member)) return { type: 'createPod', member: m.member, state: 'existing', initialMembers: names, reason: o.rollout.record?.member === m.member ? 'RollingUpdate' : 'PodMissing' };
    // Its data is gone with its PVC (or its emptyDir): the member cannot come back as itself.
    return { type: 'removeMember', member: m.member, id: m.id, reason: 'DataLost' };
  }

  // Claims of members that are gone and whose data is not to be kept.
  if (o.reclaimPolicy === 'Delete') {
    const stale = o.pvcs.find((m) => !inMembership.has(m) && !pod(m));
    if (stale) return { type: 'deletePVC', member: stale, reason: 'NotAMember' };
  }

  const voters = members.filter((m) => !m.learner);
  const serving = (m: ObservedMember): boolean => m.started && m.healthy && !pod(m.member)?.deleting;
  const healthyVoters = voters.filter(serving);
  if (healthyVoters.length < quorum(voters.length)) {
    const down = voters.filter((m) => !serving(m)).map((m) => m.member);
    return { type: 'wait', reason: 'QuorumUnhealthy', detail: `${healthyVoters.length}/${voters.length} voting members healthy; not serving: ${down.join(', ')}`, requeueAfterMs: 5000 };
  }
  // Whether the voters other than `m` still make a quorum of the membership without it.
  const survivesWithout = (m: ObservedMember): boolean => healthyVoters.filter((v) => v.id !== m.id).length >= quorum(voters.length - (m.learner ? 0 : 1));

  // A pod stuck Terminating (its node is down: the kubelet cannot confirm the deletion) holds only its own
  // member back. Past the bound, with a quorum without it, the member is replaced under a new name: its
  // data is on that node, and Kubernetes will not let the pod go until the node returns or a person acts.
  const stuck = o.pods.find((p) => p.deleting && p.deletingSince !== undefined && o.now - p.deletingSince >= o.stuckTerminatingReplaceMs && inMembership.has(p.member));
  const stuckMember = stuck && members.find((m) => m.member === stuck.member);
  if (stuck && stuckMember && !stuckMember.healthy && survivesWithout(stuckMember)) {
    return { type: 'removeMember', member: stuckMember.member, id: stuckMember.id, reason: 'PodStuckTerminating' };
  }

  // A member whose data etcd's own words call gone (observe.ts etcdSaysDataLost: an empty data directory the
  // cluster knows, or an initial member's empty raft log): nothing brings it back, and waiting out the
  // crash-loop grace (and the kubelet's back-off) only keeps the cluster a member short. Replace it at once, while the rest keep a
  // quorum; not during a rollout, for the same reason as a crash-looping member below.
  // Only a member that had started: a learner that never did has no data to lose (its pod's stale
  // --initial-cluster is another matter).
  const wiped = members.find((m) => m.started && !m.healthy && pod(m.member)?.dataLost && !pod(m.member)?.ready);
  if (wiped && !o.rollout.record && survivesWithout(wiped)) return { type: 'removeMember', member: wiped.member, id: wiped.id, reason: 'DataLost' };

  // A member crash-looping for longer than the grace period, while the rest keep a quorum: replace it. Not
  // during a rollout: a member that crash-loops on a new spec is the rollout's failure (it halts), and a
  // replacement would get the same spec, over and over.
  const crashing = members.find((m) => {
    const since = pod(m.member)?.crashLoopingSince;
    return since !== undefined && o.now - since >= o.crashLoopGraceMs;
  });
  if (crashing && !o.rollout.record && survivesWithout(crashing)) return { type: 'removeMember', member: crashing.member, id: crashing.id, reason: 'CrashLooping' };

  // A change etcd has refused through every member for too long, while all members are healthy: some
  // member holds a stale "inactive" view of a peer (etcd-io/etcd#14523). Restart the peer it reports
  // inactive (a follower, if quorum survives it) so that the streams reconnect and the view is fresh.
  if (o.refused && (o.refused.restarts ?? 0) < MAX_STALE_PEER_RESTARTS && o.now - o.refused.since >= o.refusedRestartMs && members.every((m) => m.started && m.healthy && pod(m.member)?.ready)) {
    const restart = stalePeer(o, members);
    if (restart) return restart;
  }

  const learner = members.find((m) => m.learner);
  // A learner that is not wanted any more (replicas lowered while it was being added) is cancelled first,
  // started or not: a learner whose pod never starts must not hold a lower replicas back.
  if (learner && members.length > o.replicas) return { type: 'removeMember', member: learner.member, id: learner.id, reason: 'ScaleDown' };
  // A learner is promoted once etcd says it has caught up (etcd refuses earlier: the promote call is the check).
  if (learner) {
    if (learner.started && learner.healthy) return { type: 'promoteMember', member: learner.member, id: learner.id };
    return { type: 'wait', reason: 'LearnerStarting', detail: `learner ${learner.member} is starting${podDetail(pod(learner.member))}`, requeueAfterMs: 2000 };
  }

  // Membership changes, one at a time. A member that is down (stuck on a dead node, crash-looping) does
  // not hold back a change that keeps a quorum without it: scale-up goes on while a quorum of the larger
  // membership is healthy, and scale-down removes a member that is down before any healthy one.
  const down = members.filter((m) => !(serving(m) && pod(m.member)?.ready));
  if (members.length < o.replicas) {
    // A new member would get the spec the rollout halted on.
    const halted = haltedRollout(o.rollout);
    if (halted) return { type: 'wait', reason: 'UpgradeFailed', detail: `no member is added while the rollout is halted: ${haltMessage(halted)}`, requeueAfterMs: 30_000 };
    // Once promoted, the new member serves too: a quorum of the larger membership must then be healthy.
    if (healthyVoters.length + 1 < quorum(voters.length + 1) || down.some((m) => !pod(m.member)?.deleting && pod(m.member)?.crashLoopingSince === undefined)) {
      return { type: 'wait', reason: 'WaitingForHealthyMembers', detail: `a member is added only while the others serve; not serving: ${down.map((m) => `${m.member}${podDetail(pod(m.member))}`).join(', ')}`, requeueAfterMs: 2000 };
    }
    const minors = new Set(members.map((m) => (m.version ? minorOf(m.version) : undefined)));
    const common = minors.size === 1 ? [...minors][0] : undefined;
    const endDowngradeTo = common !== undefined && compareVersions(common, MIN_DOWNGRADE_TARGET) >= 0 ? common : undefined;
    return {
      type: 'addMember',
      member: memberName(o.cluster, nextIndex(o)),
      ...(o.rollout.newMemberPeerScheme === 'https' ? { peerScheme: 'https' as const } : {}),
      ...(endDowngradeTo ? { endDowngradeTo } : {}),
    };
  }
  if (members.length > o.replicas) {
    const firstDown = down.find((m) => survivesWithout(m));
    if (firstDown) return { type: 'removeMember', member: firstDown.member, id: firstDown.id, reason: 'ScaleDown' };
    if (down.length > 0) return { type: 'wait', reason: 'WaitingForHealthyMembers', detail: `a member is removed only while a quorum survives it; not serving: ${down.map((m) => m.member).join(', ')}`, requeueAfterMs: 2000 };
    // Remove the newest non-leader (with two or more members one always exists): never the leader first.
    const byAge = [...members].sort((a, b) => (memberIndex(o.cluster, b.member) ?? 0) - (memberIndex(o.cluster, a.member) ?? 0));
    const victim = byAge.find((m) => m.id !== o.membership!.leaderId) ?? byAge[0]!;
    return { type: 'removeMember', member: victim.member, id: victim.id, reason: 'ScaleDown' };
  }
  // NOSPACE refuses every write: its recovery goes before a rolling update (whose pre-checks want every member
  // Ready, which pods made before /health?exclude=NOSPACE are not under the alarm). It only starts while every
  // member serves; a member on its way back (a rollout's) is waited for below as usual.
  const noSpace = noSpaceStep(o, members, serving);
  if (noSpace && noSpace.type !== 'wait') return noSpace;
  // Rolling updates, once membership matches the spec (healing and scaling come first).
  const rolling = rolloutStep(o, members, serving);
  if (rolling) return rolling;
  // A CA rotation moves on only when nothing else is under way: each of its steps either restarts every member
  // (through the rollout above) or changes what every member serves.
  const rotation = caRotationStep(o, down.length === 0 && !o.pods.some((p) => p.deleting));
  if (rotation) return rotation;

  const terminating = o.pods.find((p) => p.deleting && inMembership.has(p.member));
  if (terminating) {
    const for_ = o.now - (terminating.deletingSince ?? o.now);
    // A normal deletion ends within the grace period; longer means the kubelet cannot confirm it.
    if (for_ < STUCK_TERMINATING_NOTICE_MS) return { type: 'wait', reason: 'PodTerminating', detail: `pod ${terminating.member} is terminating; it is recreated once gone`, requeueAfterMs: 1000 };
    const left = Math.max(0, o.stuckTerminatingReplaceMs - for_);
    return {
      type: 'wait',
      reason: 'PodStuckTerminating',
      detail: `pod ${terminating.member} on node ${terminating.nodeName ?? '(unknown)'} is still terminating ${seconds(for_)} s past its grace period (the node does not confirm it); ` +
        'if the node is gone for good, taint it node.kubernetes.io/out-of-service=nodeshutdown:NoExecute or force-delete the pod; ' +
        (left > 0 ? `otherwise the member is replaced in ${seconds(left)} s, once a quorum survives without it` : 'the member is replaced once a quorum survives without it'),
      requeueAfterMs: 5000,
    };
  }
  if (down.length > 0) return { type: 'wait', reason: 'MembersNotReady', detail: `waiting for ${down.map((m) => `${m.member}${podDetail(pod(m.member))}`).join(', ')} to serve`, requeueAfterMs: 2000 };
  // The data does not fit the quota even compacted and defragmented: said, and left to a person.
  if (noSpace) return noSpace;
  // Defragmentation by threshold or schedule: last of all, so only a cluster with nothing else to do (every
  // member serving and Ready, no rollout, rotation or membership change) ever has a member taken out for it.
  return defragStep(o, members) ?? { type: 'steady' };
}

const MiB = (bytes: number): string => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

/** Followers by index, then the leader: the leader's defragmentation stalls every write, so it goes last. */
function leaderLast(o: Observed, members: ObservedMember[]): ObservedMember[] {
  const leaderId = o.membership?.leaderId;
  return [...members].sort((a, b) => Number(a.id === leaderId) - Number(b.id === leaderId) || (memberIndex(o.cluster, a.member) ?? 0) - (memberIndex(o.cluster, b.member) ?? 0));
}

/**
 * Recovery from etcd's NOSPACE alarm (writes refused cluster-wide once a member's backend reached its quota):
 * compact to the current revision, defragment every member one at a time (followers first, the leader last),
 * then disarm, once the data in use fits the quota again. Compacting to the current revision drops every
 * older revision of every key, not only what auto-compaction would have dropped: under NOSPACE nobody can
 * write, so history is the only thing there is to give back, and watchers that need older revisions would
 * have had them compacted by auto-compaction soon anyway. Undefined without the alarm, and while a member
 * does not serve (a defragmentation would then cost the quorum more than one member).
 */
function noSpaceStep(o: Observed, members: ObservedMember[], serving: (m: ObservedMember) => boolean): Action | undefined {
  const space = o.space;
  const raised = space?.alarms.filter((a) => a.alarm === 'NOSPACE') ?? [];
  if (!space || raised.length === 0) return undefined;
  if (!members.every(serving)) return undefined;
  const heading = `NOSPACE alarm raised (${[...new Set(raised.map((a) => a.member))].join(', ')}): etcd refuses writes`;
  const compactedAt = space.noSpace?.compactedAt;
  if (compactedAt === undefined) {
    const via = leaderLast(o, members).at(-1)!;
    if (!space.revision) return { type: 'wait', reason: 'NoSpace', detail: `${heading}; no member reported its revision to compact to`, requeueAfterMs: 2000 };
    return { type: 'compact', revision: space.revision, via: via.member, detail: `${heading}: compacting to revision ${space.revision}, then every member is defragmented and the alarm disarmed` };
  }
  const size = (m: string): number => space.sizes.find((x) => x.member === m)?.dbSize ?? 0;
  const next = leaderLast(o, members).find((m) => (space.lastDefrag[m.member] ?? 0) < compactedAt);
  if (next) {
    const done = members.filter((m) => (space.lastDefrag[m.member] ?? 0) >= compactedAt).length;
    return { type: 'defragment', member: next.member, reason: 'NoSpace', dbSize: size(next.member), timeoutMs: defragTimeoutMs(size(next.member)), detail: `${heading}: defragmenting ${next.member} (${MiB(size(next.member))}; ${done}/${members.length} done)` };
  }
  const inUse = Math.max(0, ...space.sizes.map((x) => x.dbSizeInUse ?? x.dbSize));
  if (inUse >= space.quotaBytes * NOSPACE_FIT) {
    return {
      type: 'wait', reason: 'NoSpace', requeueAfterMs: 30_000,
      detail: `${heading}; compacted and defragmented, the data still takes ${MiB(inUse)} of the ${MiB(space.quotaBytes)} quota, so the alarm would come back at once: raise spec.etcd.quotaBackendBytes (rolled out even under the alarm) or delete data; the alarm is disarmed once it fits`,
    };
  }
  const via = leaderLast(o, members).at(-1)!;
  return { type: 'disarmAlarm', alarms: raised, via: via.member, detail: `${heading}: every member is compacted and defragmented (${MiB(inUse)} in use of ${MiB(space.quotaBytes)}): disarming the alarm` };
}

/**
 * Defragmentation by spec.maintenance.defrag: a member whose free pages reached thresholdPercent of its file
 * (and DEFRAG_MIN_FREE_BYTES, not within DEFRAG_COOLDOWN_MS of its last), or every member not defragmented
 * since the schedule last fired. One member per step, followers first, the leader last. The caller has checked
 * that every member serves and nothing else is under way; no alarm may be raised either (CORRUPT: the data is
 * suspect; NOSPACE has its own recovery).
 */
function defragStep(o: Observed, members: ObservedMember[]): Action | undefined {
  const space = o.space;
  if (!space || space.alarms.length > 0 || o.rollout.record || o.rollout.outdated.length > 0 || o.tls?.caRotation) return undefined;
  if (members.length !== o.replicas || members.some((m) => m.learner || !m.healthy)) return undefined;
  for (const m of leaderLast(o, members)) {
    const s = space.sizes.find((x) => x.member === m.member);
    if (!s) continue;
    const last = space.lastDefrag[m.member];
    const free = s.dbSizeInUse === undefined ? 0 : s.dbSize - s.dbSizeInUse;
    const percent = s.dbSize > 0 ? (free / s.dbSize) * 100 : 0;
    const action = (reason: DefragReason, why: string): Action => ({ type: 'defragment', member: m.member, reason, dbSize: s.dbSize, timeoutMs: defragTimeoutMs(s.dbSize), detail: `defragmenting ${m.member}: ${why}` });
    if (space.scheduledAt !== undefined && (last ?? 0) < space.scheduledAt) {
      return action('Schedule', `spec.maintenance.defrag.schedule fired at ${new Date(space.scheduledAt).toISOString()} (${MiB(s.dbSize)}, ${Math.round(percent)} % free)`);
    }
    const threshold = space.thresholdPercent;
    if (threshold !== undefined && percent >= threshold && free >= DEFRAG_MIN_FREE_BYTES && (last === undefined || o.now - last >= DEFRAG_COOLDOWN_MS)) {
      return action('Threshold', `${MiB(free)} of its ${MiB(s.dbSize)} backend are free pages (${Math.round(percent)} %, threshold ${threshold} %)`);
    }
  }
  return undefined;
}

/**
 * The next step of an operator-managed CA rotation (docs/tls.md "Rotating a CA"), once every member serves and no
 * rollout is under way: TrustNew (the new CA joins every bundle; the bundle is part of each member pod's template,
 * so the members roll), then Reissue (signing moves to the new CA; leaves are issued again and read live), then,
 * once every member serves a certificate of the new CA and the overlap has passed, DropOld (the members roll again).
 * The overlap is not a step: the cluster is steady meanwhile, and status.tls says until when.
 */
function caRotationStep(o: Observed, allServe: boolean): Action | undefined {
  const r = o.tls?.caRotation;
  if (!r || !allServe || o.rollout.record || o.rollout.outdated.length > 0) return undefined;
  const name = `the ${r.ca} CA`;
  if (r.phase === 'Start') return { type: 'rotateCA', ca: r.ca, step: 'TrustNew', detail: `rotating ${name} (${r.why}): a new CA joins every bundle beside the old one; the members restart one at a time to trust both` };
  if (r.phase === 'TrustNew') return { type: 'rotateCA', ca: r.ca, step: 'Reissue', detail: `rotating ${name}: every member trusts both CAs; certificates are signed by the new CA from now on` };
  if (r.notServedByNew === undefined) return undefined;
  if (r.notServedByNew.length > 0) {
    return { type: 'wait', reason: 'CARotation', detail: `rotating ${name}: waiting for ${r.notServedByNew.join(', ')} to serve a certificate of the new CA (the kubelet refreshes mounted Secrets within about a minute) before the old CA is dropped`, requeueAfterMs: 5000 };
  }
  if (r.rotatedAt !== undefined && o.now - r.rotatedAt < (o.tls?.caOverlapMs ?? 0)) return undefined;
  return { type: 'rotateCA', ca: r.ca, step: 'DropOld', detail: `rotating ${name}: every member serves certificates of the new CA and the overlap has passed; the old CA leaves the bundles, and the members restart one at a time` };
}

function unreachableDetail(o: Observed): string {
  if (!o.unreachable?.length) return '';
  const byError = new Map<string, string[]>();
  for (const u of o.unreachable) byError.set(u.error, [...(byError.get(u.error) ?? []), u.member]);
  return `; unreachable: ${[...byError].map(([error, members]) => `${members.sort().join(', ')} (${error})`).join(', ')}`;
}

function podDetail(p: ObservedPod | undefined): string {
  if (!p) return ' (no pod yet)';
  if (p.deleting) return ` (pod terminating on node ${p.nodeName ?? '(unknown)'})`;
  if (p.crashLoopingSince !== undefined) return ` (crash-looping${p.lastTermination ? `, exit code ${p.lastTermination.exitCode}` : ''})`;
  if (p.cannotStart) return ` (${p.cannotStart})`;
  if (p.phase === 'Pending') return ' (pod Pending)';
  return '';
}

/**
 * The member to restart when a change is refused everywhere: one that another member reports inactive.
 * A follower is preferred (the leader's restart costs an election); the restart must leave a quorum.
 */
function stalePeer(o: Observed, members: ObservedMember[]): Action | undefined {
  const voters = members.filter((m) => !m.learner);
  // Restarting either side resets the view: the reported member's streams reconnect, or the reporter's
  // peer state is rebuilt. The follower of the two goes (a leader's restart costs an election).
  const candidates: { member: ObservedMember; why: string }[] = [];
  for (const [reporter, active] of Object.entries(o.refused!.activePeers)) {
    const reporterMember = voters.find((v) => v.member === reporter);
    for (const m of voters) {
      if (m.member === reporter || active.includes(m.member) || !reporterMember) continue;
      const target = m.id === o.membership!.leaderId ? reporterMember : m;
      candidates.push({ member: target, why: `${reporter} reports ${m.member} inactive while it serves` });
    }
  }
  const pick = candidates.find((c) => c.member.id !== o.membership!.leaderId && voters.filter((v) => v.id !== c.member.id).length >= quorum(voters.length));
  if (!pick) return undefined;
  return {
    type: 'restartMember',
    member: pick.member.member,
    reason: 'StalePeerView',
    detail: `${pick.why} (etcd-io/etcd#14523), and every member has refused the change for ${seconds(o.now - o.refused!.since)} s`,
  };
}

/**
 * Quorum lost for good: a majority of the known members has no data any more (PVC gone, or etcd refuses
 * its empty data directory), so waiting cannot bring the quorum back. Manual says so and stops; Restore
 * picks the newest data: a survivor newer than the newest backup, else that backup.
 */
function disaster(o: Observed): Action | undefined {
  const known = o.lastKnownMembers;
  const lost = known.filter((m) => (o.persistent && !o.pvcs.includes(m)) || o.pods.find((p) => p.member === m)?.dataLost);
  const survivors = known.filter((m) => !lost.includes(m));
  if (lost.length === 0 || survivors.length >= quorum(known.length)) return undefined;
  const what = `members ${lost.join(', ')} lost their data for good; ${survivors.length === 0 ? 'no member survives' : `the survivors (${survivors.join(', ')}) cannot make a quorum of ${known.length}`}`;
  if (o.disasterRecovery === 'Manual') {
    return { type: 'wait', reason: 'QuorumLost', detail: `${what}. spec.disasterRecovery.policy is Manual: nothing is changed; docs/operations.md#quorum-lost has the steps`, requeueAfterMs: 30_000 };
  }
  // Every survivor that has a pod must have answered: one that did not may hold the newest data, and the
  // choice cannot be taken back once the old members are gone.
  const silent = survivors.filter((m) => o.localRevisions?.[m] === undefined && o.pods.some((p) => p.member === m && !p.deleting));
  if (silent.length > 0) return { type: 'wait', reason: 'QuorumLost', detail: `${what}; waiting for ${silent.join(', ')} to answer its revision before choosing what to restore from${unreachableDetail(o)}`, requeueAfterMs: 3000 };
  const answered = survivors.filter((m) => o.localRevisions?.[m] !== undefined).sort((a, b) => (BigInt(o.localRevisions![b]!) > BigInt(o.localRevisions![a]!) ? 1 : -1));
  const best = answered[0];
  const backup = o.newestBackup;
  if (best && (!backup || BigInt(o.localRevisions![best]!) > BigInt(backup.revision))) {
    const revision = o.localRevisions![best]!;
    return {
      type: 'startRecovery', method: 'ForceNewCluster', from: best, revision, dataTime: new Date(o.now).toISOString(), lost,
      detail: `${what}; ${best} holds revision ${revision}, newer than ${backup ? `EtcdBackup ${backup.name} (revision ${backup.revision})` : 'any backup (there is none)'}: it restarts alone with --force-new-cluster and the cluster grows back from it`,
    };
  }
  if (backup) {
    return {
      type: 'startRecovery', method: 'Backup', from: backup.name, revision: backup.revision, ...(backup.completedAt ? { dataTime: backup.completedAt } : {}), lost, source: backup.source,
      detail: `${what}; the newest data is EtcdBackup ${backup.name} (revision ${backup.revision}${best ? `; ${best} holds only revision ${o.localRevisions![best]}` : ''}): the cluster is re-created from it`,
    };
  }
  return { type: 'wait', reason: 'QuorumLost', detail: `${what}, and this cluster has no Succeeded EtcdBackup: nothing to restore from`, requeueAfterMs: 30_000 };
}

const retryRequested = (r: ObservedRollout): boolean => r.retryToken !== undefined && r.retryToken !== r.record?.retryToken;

/** The halted record that still holds: the spec it halted on is still the spec, and no retry was asked for since. */
export function haltedRollout(r: ObservedRollout): RolloutRecord | undefined {
  const record = r.record;
  return record?.halted && record.target === r.target && !retryRequested(r) ? record : undefined;
}

/** What a person reads when a rollout has halted: where, why in etcd's or the kubelet's words, and the ways on. */
export function haltMessage(record: RolloutRecord): string {
  const halted = record.halted;
  if (!halted) return `rolling update to ${record.targetVersion}`;
  const back = record.fromVersion && record.fromVersion !== record.targetVersion ? `set spec.version back to ${record.fromVersion}` : 'revert the spec change';
  return `rolling update to ${record.targetVersion} halted at ${halted.member} (${halted.reason}): ${halted.message}. No further member is updated. To roll back, ${back}; to try again after fixing the cause, set the annotation ${RETRY_ROLLOUT_ANNOTATION} to a new value`;
}

const minorOf = (version: string): string => version.split('.').slice(0, 2).join('.');
/** The oldest minor whose etcd has the downgrade API (a 3.5 cluster may still have 3.6's downgrade to it enabled). */
const MIN_DOWNGRADE_TARGET = '3.5';

/** The member etcd's downgrade API is called through: one that reports downgrades (3.6+), the leader first. */
function downgradeVia(o: Observed, members: ObservedMember[]): string | undefined {
  const able = members.filter((m) => m.healthy && m.downgrade !== undefined);
  return (able.find((m) => m.id === o.membership?.leaderId) ?? able[0])?.member;
}

function compareVersions(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}

/**
 * Rolling updates of member pods (any change of the spec that shapes them: version, image, podTemplate,
 * antiAffinity, etcd options), one member at a time, only while membership matches the spec. In order:
 * - nothing outdated and nothing recorded: not a rollout (undefined);
 * - a halted rollout waits for a person: a spec change (rollback) or a retry token starts a new one;
 * - a version move etcd would refuse changes nothing (UpgradeBlocked);
 * - a new target is recorded before anything is touched (startRollout), so a crash anywhere resumes it;
 * - every member on the new spec must pass its gate (started, healthy, Ready for minReadyMs, caught up with
 *   the leader's commit index, on spec.version) before the next one goes; a crash-looping updated member, one
 *   on another version, or the rollout's member past the gate's bound halts the rollout;
 * - nothing left outdated: done (steady; status drops the record);
 * - pre-checks: every other member serves; no CORRUPT alarm, and no NOSPACE for a version move;
 * - before the first member of a version change, the backup spec.backup asks for: created, then waited for;
 *   a failed one halts the rollout (BackupFailed) with nothing touched;
 * - the next member: one that serves nobody now (its update costs nothing), then followers by index, then the
 *   leader, after leadership moved to the updated member that has applied the most.
 */
function rolloutStep(o: Observed, members: ObservedMember[], serving: (m: ObservedMember) => boolean): Action | undefined {
  const r = o.rollout;
  const record = r.record;
  const peerSwitch = r.peerSwitch ?? [];
  if (!record && r.outdated.length === 0 && peerSwitch.length === 0) return undefined;

  const halted = haltedRollout(r);
  if (halted) return { type: 'wait', reason: 'UpgradeFailed', detail: haltMessage(halted), requeueAfterMs: 30_000 };
  if (r.outdated.length > 0 && r.path.kind === 'Refused') {
    return { type: 'wait', reason: 'UpgradeBlocked', detail: `spec.version ${r.targetVersion} is not rolled out: ${r.path.why}. No member is changed`, requeueAfterMs: 30_000 };
  }
  // spec.version went back during a downgrade: etcd's downgrade ends first, then members on the lower minor (if
  // any) are upgraded back like any upgrade.
  const downgrading = r.downgrade?.enabled && r.downgrade.targetVersion ? minorOf(r.downgrade.targetVersion) : undefined;
  if (downgrading !== undefined && downgrading !== minorOf(r.targetVersion)) {
    const via = downgradeVia(o, members);
    if (via) return { type: 'downgrade', op: 'cancel', target: downgrading, via, detail: `spec.version ${r.targetVersion} is not ${downgrading}: cancelling etcd's downgrade to ${downgrading}; members already on ${downgrading} are upgraded back` };
  }

  const outdated = new Map(r.outdated.map((x) => [x.member, x.fields]));
  const isOutdated = (m: ObservedMember): boolean => outdated.has(m.member);
  const describeFields = (m: ObservedMember): string => outdated.get(m.member)?.join(', ') ?? '';
  if (!record || record.target !== r.target || retryRequested(r)) {
    const known = members.map((m) => m.version).filter((v): v is string => v !== undefined).sort(compareVersions);
    const fromVersion = r.currentVersion ?? known[0];
    const now = new Date(o.now).toISOString();
    // A retry of the same target starts again at the member it halted on, with a fresh bound.
    const retried = record?.halted && record.target === r.target ? { member: record.halted.member, memberSince: now } : {};
    return {
      type: 'startRollout',
      record: { target: r.target, ...(fromVersion ? { fromVersion } : {}), targetVersion: r.targetVersion, startedAt: now, ...retried, ...(r.retryToken !== undefined ? { retryToken: r.retryToken } : {}) },
      detail: r.outdated.length > 0
        ? `rolling update of ${r.outdated.length} member${r.outdated.length === 1 ? '' : 's'} to ${r.targetVersion}: ${r.outdated.map((x) => `${x.member} (${x.fields.join(', ')})`).join('; ')}`
        : `rolling update to peer TLS: switching the peer URLs of ${peerSwitch.join(', ')} to https, one member at a time`,
    };
  }

  const pod = (member: string): ObservedPod | undefined => o.pods.find((p) => p.member === member);
  const byIndex = (a: ObservedMember, b: ObservedMember): number => (memberIndex(o.cluster, a.member) ?? 0) - (memberIndex(o.cluster, b.member) ?? 0);
  const updatedCount = members.filter((m) => !isOutdated(m) && pod(m.member) && !pod(m.member)!.deleting).length;
  const progress = `${updatedCount}/${members.length} updated`;
  const heading = `rolling update to ${r.targetVersion} (${progress})`;
  const versionMove = record.fromVersion !== record.targetVersion;

  const update = (m: ObservedMember, why: string): Action => ({
    type: 'updateMember',
    member: m.member,
    id: m.id,
    via: o.persistent ? 'evict' : 'replace',
    detail: `${heading}: updating ${m.member}, ${why}${isOutdated(m) ? ` (${describeFields(m)})` : ''}`,
    ...(r.path.kind === 'Rollback' || r.path.kind === 'Downgrade' ? { clusterVersionAtMost: minorOf(r.targetVersion) } : {}),
    ...(r.path.kind === 'Downgrade' && m.version !== undefined && minorOf(m.version) !== minorOf(r.targetVersion) ? { storageVersion: `${minorOf(r.targetVersion)}.0` } : {}),
  });

  // The gate. A member not outdated is on the new spec, or about to be (its pod is missing or terminating,
  // and is recreated from the current spec): each must pass before the next member goes.
  const inFlight = members.find((m) => m.member === record.member);
  const gated = members.filter((m) => !isOutdated(m)).sort((a, b) => Number(b === inFlight) - Number(a === inFlight) || byIndex(a, b));
  const missing = (m: ObservedMember): string | undefined => {
    const p = pod(m.member);
    if (!p) return 'its pod is being recreated';
    if (p.deleting) return 'its old pod is terminating';
    if (p.cannotStart) return `it cannot start: ${p.cannotStart}`;
    if (!m.started || !m.healthy) return 'its etcd does not answer yet, or knows no leader';
    if (!p.ready || p.readySince === undefined) return 'its pod is not Ready yet';
    if (o.now - p.readySince < r.minReadyMs) return `its pod has been Ready for ${seconds(o.now - p.readySince)} s of the ${seconds(r.minReadyMs)} s required`;
    if (!m.caughtUp) {
      const commit = o.membership?.leaderCommit;
      return m.appliedIndex && commit ? `it has applied raft index ${m.appliedIndex}, behind the leader's commit index ${commit}` : 'it has not been seen caught up with the leader yet';
    }
    return undefined;
  };
  const checks = gated.map((m) => {
    const p = pod(m.member);
    const live = p !== undefined && !p.deleting;
    const since = m === inFlight && record.memberSince ? Date.parse(record.memberSince) : undefined;
    // Crash-looping since before its update began: a retry of the member a rollout halted on, whose pod is in
    // the kubelet's back-off. It gets a fresh pod; only a crash of that one halts again.
    if (live && p.crashLoopingSince !== undefined && since !== undefined && p.crashLoopingSince < since) return { m, again: true };
    if (live && p.crashLoopingSince !== undefined) {
      const t = p.lastTermination;
      return { m, halt: { reason: 'CrashLooping' as const, message: t ? `its etcd keeps exiting: exit code ${t.exitCode}: ${t.message}` : 'its etcd keeps exiting' } };
    }
    if (live && versionMove && m.version !== undefined && m.version !== record.targetVersion) {
      return { m, halt: { reason: 'VersionMismatch' as const, message: `its image runs etcd ${m.version}, but spec.version is ${record.targetVersion}` } };
    }
    const why = missing(m);
    if (why && since !== undefined && o.now - since > r.gateBoundMs) {
      return { m, halt: { reason: p?.cannotStart ? ('CannotStart' as const) : ('GateTimeout' as const), message: `${why}, ${seconds(o.now - since)} s after its update began (the bound is ${seconds(r.gateBoundMs)} s)` } };
    }
    return { m, why };
  });
  const again = checks.find((c) => c.again);
  if (again) return update(again.m, 'again, on a fresh pod (a retry)');
  const halt = checks.find((c) => c.halt);
  if (halt?.halt) return { type: 'haltRollout', member: halt.m.member, reason: halt.halt.reason, message: halt.halt.message };
  const waiting = checks.find((c) => c.why);
  if (waiting?.why) {
    const what = waiting.m === inFlight ? `updating ${waiting.m.member}` : `updated member ${waiting.m.member}`;
    // The Ready dwell ends at a known time, and nothing else wakes the reconciler then: come back exactly at it.
    const readySince = pod(waiting.m.member)?.readySince;
    const dwellLeft = readySince !== undefined ? r.minReadyMs - (o.now - readySince) : 0;
    const requeueAfterMs = dwellLeft > 0 && dwellLeft <= r.minReadyMs ? Math.max(50, dwellLeft + 20) : 1000;
    return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: ${what}: ${waiting.why}`, requeueAfterMs, subject: waiting.m.member, boundMs: r.gateBoundMs };
  }
  if (outdated.size === 0 && peerSwitch.length === 0) return { type: 'steady' };

  // Pre-checks, again before each member. An outdated member whose pod crash-loops or cannot start serves
  // nobody: updating it first costs nothing (and is how a rollback reaches the member a rollout halted on).
  const broken = (m: ObservedMember): boolean => {
    const p = pod(m.member);
    return isOutdated(m) && !serving(m) && p !== undefined && (p.crashLoopingSince !== undefined || p.cannotStart !== undefined);
  };
  const down = members.filter((m) => !(serving(m) && pod(m.member)?.ready) && !broken(m));
  if (down.length > 0) {
    return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: the next member is updated only while every other member serves; not serving: ${down.map((m) => m.member).join(', ')}`, requeueAfterMs: 2000 };
  }
  if (!r.alarms) return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: etcd's alarms could not be read (${r.alarmsUnread ?? 'no answer'}); no member is updated until they are`, requeueAfterMs: 2000 };
  // A configuration change goes on under NOSPACE: raising quotaBackendBytes is how NOSPACE is fixed.
  const blocking = r.alarms.filter((a) => a.alarm === 'CORRUPT' || (a.alarm === 'NOSPACE' && r.path.kind !== 'None'));
  if (blocking.length > 0) {
    const advice = blocking.some((a) => a.alarm === 'CORRUPT')
      ? "members' data differ (etcd's corruption check): find the corrupted member (etcdctl endpoint hashkv) and replace it before changing any member"
      : 'the operator compacted and defragmented every member, and the data still does not fit the quota: raise spec.etcd.quotaBackendBytes first (a change of spec.etcd alone is rolled out under the alarm), or delete data';
    return { type: 'wait', reason: 'UpgradeBlocked', detail: `${blocking.map((a) => `${a.alarm} alarm on ${a.member}`).join(', ')}: ${advice}. No member is updated while it is raised`, requeueAfterMs: 10_000 };
  }

  const candidates = members.filter(isOutdated).sort(byIndex);
  // Only before the first member: once one is on the new spec, the data the backup was for has moved on.
  const backup = r.preBackup;
  if (backup && versionMove && gated.length === 0 && backup.phase !== 'Succeeded') {
    if (backup.phase === 'Missing') {
      return { type: 'createBackup', name: backup.name, destination: backup.destination, detail: `${heading}: taking EtcdBackup ${backup.name} before any member is updated (spec.backup.beforeVersionChange is Always)` };
    }
    if (backup.phase === 'Failed') {
      return { type: 'haltRollout', member: candidates[0]!.member, reason: 'BackupFailed', message: `EtcdBackup ${backup.name}, taken before the version change, failed (${backup.message ?? 'no reason given'}); no member was updated` };
    }
    return { type: 'wait', reason: 'BackupBeforeUpgrade', detail: `${heading}: waiting for EtcdBackup ${backup.name} (${backup.phase}) to succeed before any member is updated`, requeueAfterMs: 2000, boundMs: backup.boundMs };
  }

  // A downgrade: etcd is told first (its cluster version moves down at once), and every member on the newer
  // binary migrates its data to the older storage version before any member goes back (an older binary would
  // not read the newer schema). etcd ends the downgrade itself once every member runs the older minor.
  if (r.path.kind === 'Downgrade') {
    const to = minorOf(r.targetVersion);
    const cluster = `${to}.0`;
    const newer = members.filter((m) => m.version !== undefined && minorOf(m.version) !== to);
    if (!r.downgrade?.enabled && gated.length === 0 && r.clusterVersion !== undefined && r.clusterVersion !== cluster) {
      const via = downgradeVia(o, members);
      if (!via) return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: no member on ${minorOf(r.clusterVersion)} answers to enable etcd's downgrade through`, requeueAfterMs: 2000 };
      return { type: 'downgrade', op: 'enable', target: to, via, detail: `${heading}: enabling etcd's downgrade to ${to} (its cluster version moves to ${cluster}, and every member migrates its data) before any member goes back` };
    }
    const unmigrated = newer.filter((m) => m.storageVersion !== cluster);
    if (unmigrated.length > 0) {
      return { type: 'wait', reason: 'DowngradeMigratingStorage', detail: `${heading}: waiting for ${unmigrated.map((m) => `${m.member} (storage version ${m.storageVersion ?? 'not read'})`).join(', ')} to migrate its data to storage version ${cluster} before any member goes back`, requeueAfterMs: 1000, boundMs: r.gateBoundMs };
    }
    if (r.clusterVersion !== cluster) {
      return { type: 'wait', reason: 'DowngradeMigratingStorage', detail: `${heading}: etcd's cluster version is ${r.clusterVersion ?? 'not read'}, not ${cluster} yet; no member goes back before it is`, requeueAfterMs: 1000, boundMs: r.gateBoundMs };
    }
  }

  const leaderId = o.membership?.leaderId;
  if (leaderId === undefined) return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: no leader is agreed by a quorum; the leader is updated last, so the next member waits for one`, requeueAfterMs: 2000 };
  const idle = candidates.find(broken);
  if (idle) return update(idle, 'which serves nobody now');
  const follower = candidates.find((m) => m.id !== leaderId);
  if (follower) return update(follower, 'a follower');
  // Peer TLS in place: every pod has the peer certificates now (nothing is outdated), so each member with an http
  // peer URL is switched in turn, followers first: the URL, then (as an outdated member) its pod. The leader goes
  // last, after leadership moved: while its URL is https and its listener still http, no follower could reach it.
  const toSwitch = members.filter((m) => peerSwitch.includes(m.member)).sort(byIndex);
  const switching = toSwitch.find((m) => m.id !== leaderId) ?? (members.length === 1 ? toSwitch[0] : undefined);
  if (candidates.length === 0 && switching) {
    return { type: 'switchPeerURL', member: switching.member, id: switching.id, detail: `${heading}: switching ${switching.member}'s peer URL to https (etcd member update), then updating its pod to listen on it` };
  }
  const leader = candidates.find((m) => m.id === leaderId) ?? (candidates.length === 0 ? toSwitch.find((m) => m.id === leaderId) : undefined);
  if (!leader) return { type: 'steady' };
  if (members.length === 1) return update(leader, 'the only member');
  // The leader is updated as a follower: leadership first goes to the updated member that has applied the most
  // (etcd would otherwise hand it, on shutdown, to the longest-connected member, which may be the old leader's next restart).
  const heir = members
    .filter((m) => m.id !== leaderId && !m.learner && !isOutdated(m) && m.caughtUp && m.appliedIndex !== undefined)
    .sort((a, b) => (BigInt(b.appliedIndex!) > BigInt(a.appliedIndex!) ? 1 : BigInt(b.appliedIndex!) < BigInt(a.appliedIndex!) ? -1 : byIndex(a, b)))[0];
  if (!heir) return { type: 'wait', reason: 'RollingUpdate', detail: `${heading}: no updated member has been seen caught up to take over leadership from ${leader.member}`, requeueAfterMs: 1000 };
  return { type: 'moveLeader', from: leader.member, fromId: leader.id, to: heir.member, toId: heir.id, detail: `${heading}: moving leadership from ${leader.member} to the updated member ${heir.member}, so that ${leader.member} is updated last, as a follower` };
}
