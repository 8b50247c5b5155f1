// Status: what `kubectl get etcd` and the conditions say. Built from the observation and the step just
// decided, so it explains what the operator is doing and why.
import { setCondition, type Condition } from '@quorum/runtime';
import type { EtcdView } from './observe.ts';
import type { Action, ObservedPod } from './plan.ts';
import { clientServiceName, clientURL, peerURL } from './names.ts';

export interface StatusInput {
  cluster: string;
  namespace: string;
  generation: number;
  replicas: number;
  targetVersion: string;
  previous: StatusShape | undefined;
  pods: ObservedPod[];
  etcd: EtcdView;
  action: Action;
  nextMemberIndex: number;
  paused: boolean;
  invalid?: string;
  now: Date;
}

export interface StatusShape {
  observedGeneration?: number;
  phase?: string;
  conditions?: Condition[];
  replicas?: number;
  readyReplicas?: number;
  members?: { name: string; id: string; peerURL: string; clientURL: string; ready: boolean; learner: boolean; leader: boolean; version?: string; dbSize?: number }[];
  clusterID?: string;
  leader?: string;
  currentVersion?: string;
  targetVersion?: string;
  clientEndpoint?: string;
  nextMemberIndex?: number;
  bootstrapMembers?: string[];
}

const PROGRESS_REASON: Record<Action['type'], string> = {
  bootstrap: 'Bootstrapping',
  createPod: 'CreatingMemberPod',
  deletePod: 'DeletingPod',
  deletePVC: 'DeletingClaim',
  addMember: 'AddingMember',
  promoteMember: 'PromotingLearner',
  removeMember: 'RemovingMember',
  moveLeader: 'MovingLeader',
  wait: 'Waiting',
  steady: 'Stable',
};

export function actionMessage(a: Action): string {
  switch (a.type) {
    case 'bootstrap': return `bootstrapping the initial members ${a.members.join(', ')}`;
    case 'createPod': return `creating the pod of member ${a.member} (${a.reason})`;
    case 'deletePod': return `deleting pod ${a.member} (${a.reason})`;
    case 'deletePVC': return `deleting the claim of former member ${a.member}`;
    case 'addMember': return `adding member ${a.member} as a learner`;
    case 'promoteMember': return `promoting learner ${a.member} to voting member`;
    case 'removeMember': return `removing member ${a.member} (${a.reason})`;
    case 'moveLeader': return `moving leadership to ${a.toMember}`;
    case 'wait': return a.detail;
    case 'steady': return 'membership matches the spec';
  }
}

export function buildStatus(i: StatusInput): StatusShape {
  const { etcd, action } = i;
  const leaderId = etcd.membership?.leaderId;
  const ready = new Set(i.pods.filter((p) => p.ready).map((p) => p.member));
  // Without a quorum's answer the last known members stay on record (marked not ready): they are what
  // the operator recreates pods for, and what an engineer needs to see.
  const members = !etcd.membership
    ? (i.previous?.members ?? []).map((m) => ({ ...m, ready: false, leader: false }))
    : etcd.membership.members.map((m) => {
    const h = etcd.health.find((x) => x.id === m.id);
    return {
      name: m.member,
      id: m.id,
      peerURL: peerURL(i.cluster, i.namespace, m.member),
      clientURL: clientURL(i.cluster, i.namespace, m.member),
      ready: ready.has(m.member) && m.healthy,
      learner: m.learner,
      leader: m.id === leaderId,
      ...(h?.version ? { version: h.version } : {}),
      ...(h?.dbSize !== undefined ? { dbSize: h.dbSize } : {}),
    };
  });
  const readyReplicas = members.filter((m) => m.ready && !m.learner).length;
  const voters = members.filter((m) => !m.learner).length;
  const quorumHealthy = etcd.membership !== undefined && readyReplicas >= Math.floor(voters / 2) + 1;
  const allServe = members.length > 0 && members.every((m) => m.ready && !m.learner);
  const versions = [...new Set(members.map((m) => m.version).filter(Boolean))];
  const previous = i.previous?.conditions;
  const cond = (list: Condition[] | undefined, type: string, status: boolean, reason: string, message: string): Condition[] =>
    setCondition(list, { type, status: status ? 'True' : 'False', reason, message, observedGeneration: i.generation }, i.now);

  let conditions = previous ?? [];
  if (i.invalid) {
    conditions = cond(conditions, 'Degraded', true, 'InvalidSpec', i.invalid);
    conditions = cond(conditions, 'Progressing', false, 'InvalidSpec', 'the spec is invalid; nothing is changed until it is fixed');
  } else {
    const progressing = action.type !== 'steady' && !i.paused;
    const unhealthy = members.filter((m) => !m.ready).map((m) => m.name);
    conditions = cond(
      conditions,
      'Available',
      quorumHealthy && allServe,
      quorumHealthy ? (allServe ? 'QuorumHealthy' : 'MembersNotServing') : etcd.membership ? 'QuorumLost' : 'Unreachable',
      quorumHealthy ? `${readyReplicas}/${voters} voting members serve` : 'no quorum answered',
    );
    conditions = cond(
      conditions,
      'Progressing',
      progressing,
      i.paused ? 'Paused' : action.type === 'wait' ? action.reason : PROGRESS_REASON[action.type],
      i.paused ? 'spec.paused is true: the operator makes no changes' : actionMessage(action),
    );
    conditions = cond(
      conditions,
      'Degraded',
      etcd.membership !== undefined ? unhealthy.length > 0 : members.length > 0 || (i.previous?.members?.length ?? 0) > 0,
      unhealthy.length ? 'MembersUnhealthy' : etcd.membership ? 'AllMembersHealthy' : 'QuorumUnavailable',
      unhealthy.length ? `not serving: ${unhealthy.join(', ')}` : etcd.membership ? 'every member serves' : 'no quorum answered a member list',
    );
    conditions = i.replicas % 2 === 0
      ? cond(conditions, 'EvenReplicas', true, 'EvenReplicas', `${i.replicas} members tolerate no more failures than ${i.replicas - 1}`)
      : conditions.filter((c) => c.type !== 'EvenReplicas');
  }

  const phase = phaseOf(i, quorumHealthy && allServe && members.length === i.replicas);

  return {
    observedGeneration: i.generation,
    phase,
    conditions,
    replicas: voters,
    readyReplicas,
    members,
    ...(etcd.clusterId ?? i.previous?.clusterID ? { clusterID: etcd.clusterId ?? i.previous?.clusterID } : {}),
    ...(members.find((m) => m.leader) ? { leader: members.find((m) => m.leader)!.name } : {}),
    ...(versions.length === 1 ? { currentVersion: versions[0] } : i.previous?.currentVersion ? { currentVersion: i.previous.currentVersion } : {}),
    targetVersion: i.targetVersion,
    clientEndpoint: `http://${clientServiceName(i.cluster)}.${i.namespace}.svc:2379`,
    nextMemberIndex: i.nextMemberIndex,
    ...(i.previous?.bootstrapMembers ? { bootstrapMembers: i.previous.bootstrapMembers } : {}),
  };
}

/** The one-word summary in `kubectl get etcd`. */
function phaseOf(i: StatusInput, healthy: boolean): string {
  const a = i.action;
  if (i.invalid) return 'Failed';
  if (i.paused) return 'Paused';
  if (a.type === 'steady' && healthy) return 'Running';
  // A new cluster is Creating until it first runs with every member.
  if (!i.previous?.phase || i.previous.phase === 'Creating' || i.previous.phase === 'Pending') return 'Creating';
  const scaling = a.type === 'addMember' || a.type === 'promoteMember' || a.type === 'moveLeader' || (a.type === 'removeMember' && a.reason === 'ScaleDown') ||
    (a.type === 'createPod' && a.reason === 'MemberAdded') || (a.type === 'wait' && (a.reason === 'LearnerStarting' || a.reason === 'WaitingForHealthyMembers'));
  if (scaling) return 'Scaling';
  if (a.type === 'createPod' || a.type === 'deletePod' || a.type === 'removeMember' || a.type === 'deletePVC') return 'Healing';
  return 'Degraded';
}
