// The decision at the heart of the operator, as a pure function: given what is observed now (the
// EtcdCluster, its Pods and PVCs, and etcd's own member list as a quorum reports it), the single next
// step. No step is taken on silence: a member that does not answer is not presumed gone; only Kubernetes
// (a Pod or PVC that is gone or failed) or a quorum's member list counts as evidence.
// docs/design.md walks through why each step is safe, including when the operator dies right after it.
//
// This file is the order of concerns; each concern decides in its own file: recovery.ts (healing, quorum
// loss), membership.ts (members, learners, scaling), rollout.ts (rolling updates), maintenance.ts
// (certificates, NOSPACE, defragmentation). Each step function answers an Action, or undefined to pass on.
import { factsOf, podDetail, seconds, type Facts } from './core.ts';
import { caRotationStep, certificatesStep, defragStep, noSpaceStep } from './maintenance.ts';
import { leftoversStep, learnerStep, missingPodsStep, quorumUnhealthyStep, scaleStep } from './membership.ts';
import { backupRecoveryStep, forcedNewClusterStep, podsGivenUpStep, replaceBrokenStep, withoutQuorumStep } from './recovery.ts';
import { rolloutStep } from './rollout.ts';
import type { Action, Observed } from './types.ts';

export type * from './types.ts';
export { nextIndex, restoredMembers } from './core.ts';
export { DEFRAG_COOLDOWN_MS, DEFRAG_MIN_FREE_BYTES, defragTimeoutMs, NOSPACE_FIT } from './maintenance.ts';
export { MAX_STALE_PEER_RESTARTS } from './recovery.ts';
export { haltedRollout, haltMessage } from './rollout.ts';

/** This long past its graceful-deletion deadline, a terminating pod is reported as stuck (with its node and what a person can do). */
export const STUCK_TERMINATING_NOTICE_MS = 15_000;

export function plan(o: Observed): Action {
  const first = certificatesStep(o) ?? podsGivenUpStep(o) ?? backupRecoveryStep(o);
  if (first) return first;
  if (!o.membership) return withoutQuorumStep(o);
  const f = factsOf(o, o.membership);
  return (
    forcedNewClusterStep(o) ??
    leftoversStep(f) ??
    missingPodsStep(f) ??
    quorumUnhealthyStep(f) ??
    replaceBrokenStep(f) ??
    learnerStep(f) ??
    scaleStep(f) ??
    onceMembershipMatches(f)
  );
}

/** Membership matches the spec: NOSPACE recovery, rolling updates, CA rotation, then waits, then defragmentation. */
function onceMembershipMatches(f: Facts): Action {
  const { o, members, serving, down, pod } = f;
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
  const terminating = terminatingStep(f);
  if (terminating) return terminating;
  if (down.length > 0) return { type: 'wait', reason: 'MembersNotReady', detail: `waiting for ${down.map((m) => `${m.member}${podDetail(pod(m.member))}`).join(', ')} to serve`, requeueAfterMs: 2000 };
  // The data does not fit the quota even compacted and defragmented: said, and left to a person.
  if (noSpace) return noSpace;
  // Defragmentation by threshold or schedule: last of all, so only a cluster with nothing else to do (every
  // member serving and Ready, no rollout, rotation or membership change) ever has a member taken out for it.
  return defragStep(o, members) ?? { type: 'steady' };
}

/** A member's pod terminating: recreated once gone; past its grace period, said to be stuck, with what a person can do. */
function terminatingStep(f: Facts): Action | undefined {
  const { o, inMembership } = f;
  const terminating = o.pods.find((p) => p.deleting && inMembership.has(p.member));
  if (!terminating) return undefined;
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
