// The decision at the heart of the operator, as a pure function: given what is observed now (the
// EtcdCluster, its Pods and PVCs, and etcd's own member list as a quorum reports it), the single next
// step. No step is taken on silence: a member that does not answer is not presumed gone; only Kubernetes
// (a Pod or PVC that is gone or failed) or a quorum's member list counts as evidence.
// docs/design.md walks through why each step is safe, including when the operator dies right after it.
import { memberIndex, memberName } from './names.ts';

export interface ObservedPod {
  member: string;
  phase: string;
  ready: boolean;
  deleting: boolean;
  /** Since when the etcd container has been waiting in CrashLoopBackOff (ms since epoch). */
  crashLoopingSince?: number;
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
}

export type Action =
  | { type: 'bootstrap'; members: string[] }
  | { type: 'createPod'; member: string; state: 'new' | 'existing'; initialMembers: string[]; reason: string }
  | { type: 'deletePod'; member: string; reason: string }
  | { type: 'deletePVC'; member: string; reason: string }
  | { type: 'addMember'; member: string }
  | { type: 'promoteMember'; member: string; id: string }
  | { type: 'removeMember'; member: string; id: string; reason: string }
  | { type: 'moveLeader'; fromId: string; toId: string; toMember: string }
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

const quorum = (voters: number): number => Math.floor(voters / 2) + 1;

export function plan(o: Observed): Action {
  const pod = (member: string): ObservedPod | undefined => o.pods.find((p) => p.member === member);
  const hasPVC = (member: string): boolean => o.pvcs.includes(member);

  // Pods Kubernetes gave up on (evicted, failed) are replaced in place: same member, same PVC.
  const failed = o.pods.find((p) => p.phase === 'Failed' && !p.deleting);
  if (failed) return { type: 'deletePod', member: failed.member, reason: 'PodFailed' };

  if (!o.membership) {
    // Nothing exists yet: bootstrap the initial size statically, all members at once. The member list is
    // recorded (status) before any pod exists, so a crash part-way resumes the same bootstrap.
    if (!o.bootstrapped && o.bootstrapMembers.length === 0 && o.pods.length === 0 && o.pvcs.length === 0 && o.lastKnownMembers.length === 0) {
      const first = nextIndex(o);
      return { type: 'bootstrap', members: Array.from({ length: o.replicas }, (_, i) => memberName(o.cluster, first + i)) };
    }
    if (!o.bootstrapped && o.bootstrapMembers.length > 0) {
      const missing = o.bootstrapMembers.find((m) => !pod(m));
      if (missing) return { type: 'createPod', member: missing, state: 'new', initialMembers: o.bootstrapMembers, reason: 'Bootstrap' };
      return { type: 'wait', reason: 'Bootstrapping', detail: `waiting for the initial members (${o.bootstrapMembers.join(', ')}) to form a quorum`, requeueAfterMs: 1000 };
    }
    // No quorum answered. Bringing back a deleted pod of a known member is always safe (same member, same
    // data) and may be what restores the quorum; anything touching membership must wait.
    const known = o.bootstrapped ? o.lastKnownMembers : o.pods.map((p) => p.member).concat(o.pvcs);
    for (const member of known) {
      if (!pod(member) && (hasPVC(member) || !o.persistent)) {
        const first = !o.bootstrapped && known.length === 1;
        return { type: 'createPod', member, state: first ? 'new' : 'existing', initialMembers: first ? [member] : known, reason: 'PodMissing' };
      }
    }
    if (!o.bootstrapped) return { type: 'wait', reason: 'Bootstrapping', detail: 'waiting for the first member to serve', requeueAfterMs: 2000 };
    return { type: 'wait', reason: 'QuorumUnavailable', detail: 'no quorum answered a member list; membership is left alone', requeueAfterMs: 5000 };
  }

  const members = o.membership.members;
  const inMembership = new Set(members.map((m) => m.member));
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

  // A pod that is being deleted will be recreated once it is gone; take no other step meanwhile.
  const terminating = o.pods.find((p) => p.deleting);
  if (terminating) return { type: 'wait', reason: 'PodTerminating', detail: `pod ${terminating.member} is terminating`, requeueAfterMs: 1000 };

  // Claims of members that are gone and whose data is not to be kept.
  if (o.reclaimPolicy === 'Delete') {
    const stale = o.pvcs.find((m) => !inMembership.has(m) && !pod(m));
    if (stale) return { type: 'deletePVC', member: stale, reason: 'NotAMember' };
  }

  const voters = members.filter((m) => !m.learner);
  const healthyVoters = voters.filter((m) => m.healthy && m.started);
  const quorumHealthy = healthyVoters.length >= quorum(voters.length);
  if (!quorumHealthy) return { type: 'wait', reason: 'QuorumUnhealthy', detail: `${healthyVoters.length}/${voters.length} voting members healthy`, requeueAfterMs: 5000 };

  // A member crash-looping for longer than the grace period, while the rest keep a quorum: replace it.
  const crashing = members.find((m) => {
    const since = pod(m.member)?.crashLoopingSince;
    return since !== undefined && o.now - since >= o.crashLoopGraceMs;
  });
  if (crashing && healthyVoters.filter((m) => m.id !== crashing.id).length >= quorum(voters.length - (crashing?.learner ? 0 : 1))) {
    return { type: 'removeMember', member: crashing.member, id: crashing.id, reason: 'CrashLooping' };
  }

  // A learner is promoted once etcd says it has caught up (etcd refuses earlier: the promote call is the check).
  const learner = members.find((m) => m.learner);
  if (learner) {
    if (learner.started && learner.healthy) return { type: 'promoteMember', member: learner.member, id: learner.id };
    return { type: 'wait', reason: 'LearnerStarting', detail: `learner ${learner.member} is starting`, requeueAfterMs: 2000 };
  }

  // Membership changes, one at a time, only when every member is healthy.
  const allHealthy = members.every((m) => m.started && m.healthy && pod(m.member)?.ready);
  if (members.length < o.replicas) {
    if (!allHealthy) return { type: 'wait', reason: 'WaitingForHealthyMembers', detail: 'every member must be healthy before one is added', requeueAfterMs: 2000 };
    return { type: 'addMember', member: memberName(o.cluster, nextIndex(o)) };
  }
  if (members.length > o.replicas) {
    if (!allHealthy) return { type: 'wait', reason: 'WaitingForHealthyMembers', detail: 'every member must be healthy before one is removed', requeueAfterMs: 2000 };
    // Remove the newest non-leader; if only the leader is left to remove, hand leadership over first.
    const byAge = [...members].sort((a, b) => (memberIndex(o.cluster, b.member) ?? 0) - (memberIndex(o.cluster, a.member) ?? 0));
    const victim = byAge.find((m) => m.id !== o.membership!.leaderId) ?? byAge[0]!;
    if (victim.id === o.membership.leaderId) {
      const successor = members.find((m) => m.id !== victim.id)!;
      return { type: 'moveLeader', fromId: victim.id, toId: successor.id, toMember: successor.member };
    }
    return { type: 'removeMember', member: victim.member, id: victim.id, reason: 'ScaleDown' };
  }
  if (!allHealthy) return { type: 'wait', reason: 'MembersNotReady', detail: 'waiting for every member to be ready', requeueAfterMs: 2000 };
  return { type: 'steady' };
}
