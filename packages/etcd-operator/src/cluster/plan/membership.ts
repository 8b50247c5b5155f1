// Membership, with a quorum's member list: what is left of former members (pods, certificates, claims), members
// without a pod, learners, and scaling one member at a time while a quorum of the membership stays healthy.
import { quorum } from '../../etcd/quorum.ts';
import { memberIndex, memberName } from '../../names.ts';
import { compareVersions, MIN_DOWNGRADE_TARGET, minorOf, nextIndex, podDetail, type Facts } from './core.ts';
import { haltedRollout, haltMessage } from './rollout.ts';
import type { Action } from './types.ts';

/** What is left of members no longer in the membership: their pods and their certificates. */
export function leftoversStep(f: Facts): Action | undefined {
  const { o, inMembership, pod } = f;
  // Pods of members that are not (or no longer) in the membership: a finished removal, or a crash between
  // removing a member and deleting its pod.
  const orphan = o.pods.find((p) => !inMembership.has(p.member) && !p.deleting);
  if (orphan) return { type: 'deletePod', member: orphan.member, reason: 'NotAMember' };
  // A member's certificates go with the member, once neither etcd nor Kubernetes has anything of it left.
  // An initial member keeps its own only while the cluster bootstraps: once replaced (its data wiped, say),
  // a former initial member's certificate is as stale as any other's.
  const staleSecret = o.tls?.memberSecrets.find((m) => !inMembership.has(m) && !pod(m) && !(!o.bootstrapped && o.bootstrapMembers.includes(m)));
  if (staleSecret) return { type: 'deleteTLSSecret', member: staleSecret };
  return undefined;
}

/** Members without a pod (an added member whose pod was never created, or a pod Kubernetes deleted), and claims of members gone. */
export function missingPodsStep(f: Facts): Action | undefined {
  const { o, members, names, inMembership, pod, hasPVC } = f;
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
  return undefined;
}

/** Nothing touches membership while a quorum of the voting members is not serving. */
export function quorumUnhealthyStep(f: Facts): Action | undefined {
  const { voters, healthyVoters, serving } = f;
  if (healthyVoters.length < quorum(voters.length)) {
    const down = voters.filter((m) => !serving(m)).map((m) => m.member);
    return { type: 'wait', reason: 'QuorumUnhealthy', detail: `${healthyVoters.length}/${voters.length} voting members healthy; not serving: ${down.join(', ')}`, requeueAfterMs: 5000 };
  }
  return undefined;
}

/** A learner: cancelled when it is no longer wanted, promoted once it serves, waited for meanwhile. */
export function learnerStep(f: Facts): Action | undefined {
  const { o, members, pod } = f;
  const learner = members.find((m) => m.learner);
  // A learner that is not wanted any more (replicas lowered while it was being added) is cancelled first,
  // started or not: a learner whose pod never starts must not hold a lower replicas back.
  if (learner && members.length > o.replicas) return { type: 'removeMember', member: learner.member, id: learner.id, reason: 'ScaleDown' };
  // A learner is promoted once etcd says it has caught up (etcd refuses earlier: the promote call is the check).
  if (learner) {
    if (learner.started && learner.healthy) return { type: 'promoteMember', member: learner.member, id: learner.id };
    return { type: 'wait', reason: 'LearnerStarting', detail: `learner ${learner.member} is starting${podDetail(pod(learner.member))}`, requeueAfterMs: 2000 };
  }
  return undefined;
}

/**
 * Membership changes, one at a time. A member that is down (stuck on a dead node, crash-looping) does
 * not hold back a change that keeps a quorum without it: scale-up goes on while a quorum of the larger
 * membership is healthy, and scale-down removes a member that is down before any healthy one.
 */
export function scaleStep(f: Facts): Action | undefined {
  const { o, members, voters, healthyVoters, down, pod, survivesWithout } = f;
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
  return undefined;
}
