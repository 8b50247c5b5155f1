// The decision at the heart of the operator, as a pure function: given what is observed now (the
// EtcdCluster, its Pods and PVCs, and etcd's own member list as a quorum reports it), the single next
// step. No step is taken on silence: a member that does not answer is not presumed gone; only Kubernetes
// (a Pod or PVC that is gone or failed) or a quorum's member list counts as evidence.
// docs/design.md walks through why each step is safe, including when the operator dies right after it.
import { quorum } from '../etcd/quorum.ts';
import type { RestoreSource } from './resources.ts';
import { memberIndex, memberName } from './names.ts';

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
   * etcd refuses to start on this member's data directory because it is empty while the cluster knows the
   * member ("has already been bootstrapped"): its data is gone for good (a wiped or replaced volume).
   */
  dataLost?: boolean;
  /** The pod runs etcd with --force-new-cluster (a disaster recovery from this member's data). */
  forcedNewCluster?: boolean;
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
  /** Whether its own endpoint answered a status request just now. */
  healthy: boolean;
}

export interface Membership {
  members: ObservedMember[];
  leaderId: string | undefined;
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
}

export type Action =
  | { type: 'bootstrap'; members: string[]; restore?: RestoreSource }
  | { type: 'createPod'; member: string; state: 'new' | 'existing'; initialMembers: string[]; reason: string; restore?: RestoreSource; forceNewCluster?: boolean }
  | { type: 'deletePod'; member: string; reason: string }
  | { type: 'deletePVC'; member: string; reason: string }
  | { type: 'addMember'; member: string }
  | { type: 'promoteMember'; member: string; id: string }
  | { type: 'removeMember'; member: string; id: string; reason: string }
  /** Quorum is lost for good and the policy is Restore: record how the cluster comes back (status first), then begin. */
  | { type: 'startRecovery'; method: 'ForceNewCluster' | 'Backup'; from: string; revision: string; dataTime?: string; lost: string[]; source?: RestoreSource; detail: string }
  /** A Backup recovery: every old pod and claim goes, then the cluster bootstraps from the backup. */
  | { type: 'clearForRestore'; reason: string }
  /** Evict (PDB-respecting) a healthy member's pod so that its peers reconnect to it: etcd-io/etcd#14523. */
  | { type: 'restartMember'; member: string; reason: 'StalePeerView'; detail: string }
  | { type: 'wait'; reason: string; detail: string; requeueAfterMs: number }
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

  // Members without a pod: an added member whose pod was never created, or a pod Kubernetes deleted.
  for (const m of members) {
    if (pod(m.member)) continue;
    if (!m.started) return { type: 'createPod', member: m.member, state: 'existing', initialMembers: names, reason: 'MemberAdded' };
    if (hasPVC(m.member)) return { type: 'createPod', member: m.member, state: 'existing', initialMembers: names, reason: 'PodMissing' };
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

  // A member crash-looping for longer than the grace period, while the rest keep a quorum: replace it.
  const crashing = members.find((m) => {
    const since = pod(m.member)?.crashLoopingSince;
    return since !== undefined && o.now - since >= o.crashLoopGraceMs;
  });
  if (crashing && survivesWithout(crashing)) return { type: 'removeMember', member: crashing.member, id: crashing.id, reason: 'CrashLooping' };

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
    // Once promoted, the new member serves too: a quorum of the larger membership must then be healthy.
    if (healthyVoters.length + 1 < quorum(voters.length + 1) || down.some((m) => !pod(m.member)?.deleting && pod(m.member)?.crashLoopingSince === undefined)) {
      return { type: 'wait', reason: 'WaitingForHealthyMembers', detail: `a member is added only while the others serve; not serving: ${down.map((m) => `${m.member}${podDetail(pod(m.member))}`).join(', ')}`, requeueAfterMs: 2000 };
    }
    return { type: 'addMember', member: memberName(o.cluster, nextIndex(o)) };
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
  return { type: 'steady' };
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
