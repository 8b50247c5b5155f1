// Status: what `kubectl get etcd` and the conditions say. Built from the observation and the step just
// decided, so it explains what the operator is doing, for how long, and why. Every reason it sets is in
// reasons.ts (and so in docs/operations.md).
import { setCondition, type Condition } from '@quorum/runtime';
import { memberIdToHex } from '../etcd/ids.ts';
import type { EtcdClusterStatus, MaintenanceStatus, MemberStatus, Recovery, RolloutRecord, TlsStatus } from '../api/etcdcluster.ts';
import type { EtcdView } from './observe-members.ts';
import { quorum } from '../etcd/quorum.ts';
import { haltMessage } from './plan/rollout.ts';
import type { Action, ObservedPod } from './plan/types.ts';
import { clientServiceURL, clientURL, peerURL, type Scheme } from '../names.ts';
import { formatAge, progressMessage, stepAgeMs } from '@quorum/kit';
import { PERSON_WAITS, type StepRecord } from './progress.ts';
import { STEP_REASONS } from './reasons.ts';

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
  /** The step under way (undefined when steady or paused). */
  step?: StepRecord;
  stepDeadlineMs?: number;
  /** Members whose pods differ from what the spec asks for, with the fields that differ. */
  outdated?: { member: string; fields: string[] }[];
  /** etcd's cluster version as just read; undefined when it was not read (the previous one stays). */
  clusterVersion?: string;
  /** For a cluster with spec.tls: what status.tls says, and a certificate that expires soon (Degraded CertificateExpiring). */
  tls?: { status: TlsStatus; expiring?: string; clientScheme: Scheme; peerScheme: Scheme };
  /** status.maintenance as maintenance.ts made it (undefined: none). */
  maintenance?: MaintenanceStatus;
  /** The members the NOSPACE alarm is raised for, while it is (Degraded NoSpace). */
  noSpace?: string[];
  now: Date;
}

/** An EtcdCluster's status as the CRD's schema types it (api/etcdcluster.ts EtcdClusterStatusSchema): one source for both. */
export type StatusShape = EtcdClusterStatus;

/** status.phase: one of the schema's phases, checked here by the compiler. */
type Phase = NonNullable<EtcdClusterStatus['phase']>;

export function actionMessage(a: Action): string {
  switch (a.type) {
    case 'bootstrap': return `bootstrapping the initial members ${a.members.join(', ')}`;
    case 'createPod': return `creating the pod of member ${a.member} (${a.reason})`;
    case 'deletePod': return `deleting pod ${a.member} (${a.reason})`;
    case 'deletePVC': return `deleting the claim of former member ${a.member}`;
    case 'addMember': return `adding member ${a.member} as a learner`;
    case 'promoteMember': return `promoting learner ${a.member} to voting member`;
    case 'removeMember': return `removing member ${a.member} (${a.reason})`;
    case 'restartMember': return `restarting member ${a.member}: ${a.detail}`;
    case 'startRecovery': return `recovering from quorum loss: ${a.detail}`;
    case 'clearForRestore': return `deleting the old members' pods and volumes (${a.reason})`;
    case 'startRollout': return a.detail;
    case 'updateMember': return a.detail;
    case 'moveLeader': return a.detail;
    case 'switchPeerURL': return a.detail;
    case 'createBackup': return a.detail;
    case 'downgrade': return a.detail;
    case 'haltRollout': return `rolling update halted at ${a.member} (${a.reason}): ${a.message}`;
    case 'issueTLSSecrets': return a.detail;
    case 'rotateCA': return a.detail;
    case 'deleteTLSSecret': return `deleting the TLS Secret of former member ${a.member}`;
    case 'compact': return a.detail;
    case 'defragment': return a.detail;
    case 'disarmAlarm': return a.detail;
    case 'wait': return a.detail;
    case 'steady': return 'membership matches the spec';
  }
}

/** IDs are hex in status, as `etcdctl member list` prints them; the gateway's decimal stays internal. */
const hex = (id: string): string => {
  try {
    return memberIdToHex(id);
  } catch {
    return id;
  }
};

/** The recovery record: begun by a startRecovery step, completed once a quorum serves again. */
function recoveryOf(i: StatusInput, quorumServes: boolean): Recovery | undefined {
  const a = i.action;
  if (a.type === 'startRecovery') {
    return { method: a.method, from: a.from, revision: a.revision, ...(a.dataTime ? { dataTime: a.dataTime } : {}), lostMembers: a.lost, startedAt: i.now.toISOString(), ...(a.source ? { source: a.source } : {}) };
  }
  const previous = i.previous?.recovery;
  if (previous && !previous.completedAt && quorumServes && i.previous?.clusterID !== undefined) return { ...previous, completedAt: i.now.toISOString() };
  return previous;
}

/**
 * The rollout record after this step: begun by startRollout, the member recorded before its update (keeping
 * when it began while the same member is retried), halted by haltRollout, and gone once steady (every member
 * runs the spec). Anything else leaves it as it was, so a restarted operator resumes where it stopped.
 */
function rolloutOf(i: StatusInput): RolloutRecord | undefined {
  const a = i.action;
  const previous = i.previous?.rollout;
  if (i.invalid) return previous;
  switch (a.type) {
    case 'startRollout': return a.record;
    case 'updateMember': return previous && { ...previous, member: a.member, memberSince: previous.member === a.member && previous.memberSince ? previous.memberSince : i.now.toISOString() };
    case 'createBackup': return previous && { ...previous, backup: a.name };
    case 'haltRollout': return previous && { ...previous, halted: { member: a.member, reason: a.reason, message: a.message, at: i.now.toISOString() } };
    case 'steady': return undefined;
    default: return previous;
  }
}

export function buildStatus(i: StatusInput): StatusShape {
  const f = factsOf(i);
  const { members, rollout, recovery } = f;
  const cs = i.tls?.clientScheme ?? 'http';
  // One version only once every member reports it: during a rolling update (or while a member is down) the
  // previous one stays, so it moves exactly when the last member runs the new version.
  const versions = members.every((m) => m.version) ? [...new Set(members.map((m) => m.version))] : [];
  const phase = phaseOf(i, f.allServe && members.length === i.replicas, f.stalled || f.crashing.length > 0 || f.cannotStart.length > 0 || f.halted !== undefined, rollout !== undefined);
  return {
    observedGeneration: i.generation,
    phase,
    conditions: conditionsOf(i, f),
    replicas: f.voters,
    readyReplicas: f.readyReplicas,
    ...(i.outdated ? { updatedReplicas: f.updatedReplicas } : i.previous?.updatedReplicas !== undefined ? { updatedReplicas: i.previous.updatedReplicas } : {}),
    members,
    ...(i.etcd.clusterId ? { clusterID: hex(i.etcd.clusterId) } : i.previous?.clusterID ? { clusterID: i.previous.clusterID } : {}),
    ...(members.find((m) => m.leader) ? { leader: members.find((m) => m.leader)!.name } : {}),
    ...(versions.length === 1 ? { currentVersion: versions[0] } : i.previous?.currentVersion ? { currentVersion: i.previous.currentVersion } : {}),
    ...(i.clusterVersion ? { clusterVersion: i.clusterVersion } : i.previous?.clusterVersion ? { clusterVersion: i.previous.clusterVersion } : {}),
    targetVersion: i.targetVersion,
    clientEndpoint: clientServiceURL(i.cluster, i.namespace, cs),
    nextMemberIndex: i.nextMemberIndex,
    ...(i.previous?.bootstrapMembers ? { bootstrapMembers: i.previous.bootstrapMembers } : {}),
    ...(i.step ? { step: i.step } : {}),
    ...(recovery ? { recovery } : {}),
    ...(rollout ? { rollout } : {}),
    // Kept while the spec is invalid: it is what tells the TLS default of a running cluster (tls/defaults.ts).
    ...(i.tls ? { tls: i.tls.status } : i.invalid && i.previous?.tls ? { tls: i.previous.tls } : {}),
    ...(i.maintenance ? { maintenance: i.maintenance } : {}),
  };
}

/** What the status's fields and conditions are judged from. */
interface StatusFacts {
  members: MemberStatus[];
  readyReplicas: number;
  voters: number;
  quorumServes: boolean;
  allServe: boolean;
  recovery: Recovery | undefined;
  rollout: RolloutRecord | undefined;
  halted: RolloutRecord | undefined;
  updatedReplicas: number;
  crashing: ObservedPod[];
  cannotStart: ObservedPod[];
  /** How long the step has been under way. */
  age: number;
  stalled: boolean;
}

function factsOf(i: StatusInput): StatusFacts {
  const members = membersOf(i);
  const pod = (member: string): ObservedPod | undefined => i.pods.find((p) => p.member === member);
  const readyReplicas = members.filter((m) => m.ready && !m.learner).length;
  const voters = members.filter((m) => !m.learner).length;
  const quorumServes = i.etcd.membership !== undefined && voters > 0 && readyReplicas >= quorum(voters);
  const rollout = rolloutOf(i);
  const outdatedNames = new Set((i.outdated ?? []).map((o) => o.member));
  const age = stepAgeMs(i.step, i.now);
  return {
    members,
    readyReplicas,
    voters,
    quorumServes,
    allServe: members.length > 0 && members.every((m) => m.ready && !m.learner),
    recovery: recoveryOf(i, quorumServes),
    rollout,
    halted: rollout?.halted ? rollout : undefined,
    updatedReplicas: members.filter((m) => !outdatedNames.has(m.name) && pod(m.name) && !pod(m.name)!.deleting).length,
    crashing: i.pods.filter((p) => p.crashLoopingSince !== undefined && !p.deleting),
    cannotStart: i.pods.filter((p) => p.cannotStart && !p.deleting),
    age,
    stalled: i.step !== undefined && !i.paused && age >= (i.stepDeadlineMs ?? Infinity),
  };
}

/**
 * status.members: etcd's member list as a quorum gave it, with each member's health. Without a quorum's answer
 * the last known members stay on record (marked not ready): they are what the operator recreates pods for, and
 * what an engineer needs to see.
 */
function membersOf(i: StatusInput): MemberStatus[] {
  const { etcd } = i;
  const ps = i.tls?.peerScheme ?? 'http';
  const cs = i.tls?.clientScheme ?? 'http';
  const pod = (member: string): ObservedPod | undefined => i.pods.find((p) => p.member === member);
  const ready = new Set(i.pods.filter((p) => p.ready).map((p) => p.member));
  const lastError = (member: string): { lastError?: string } => {
    const t = pod(member)?.lastTermination;
    return t && pod(member)?.crashLoopingSince !== undefined ? { lastError: `exit code ${t.exitCode}: ${t.message}` } : {};
  };
  if (!etcd.membership) {
    return (i.previous?.members?.length ? i.previous.members : (i.previous?.bootstrapMembers ?? []).map((name): MemberStatus => ({ name, id: '', peerURL: peerURL(i.cluster, i.namespace, name, ps), clientURL: clientURL(i.cluster, i.namespace, name, cs), learner: false, ready: false, leader: false })))
      .map(({ lastError: _, ...m }) => ({ ...m, ready: false, leader: false, ...lastError(m.name) }));
  }
  const leaderId = etcd.membership.leaderId;
  return etcd.membership.members.map((m) => {
    const h = etcd.health.find((x) => x.id === m.id);
    return {
      name: m.member,
      id: hex(m.id),
      // What etcd's member list says (http or https while peer TLS is turned on in place).
      peerURL: peerURL(i.cluster, i.namespace, m.member, m.peerScheme ?? ps),
      clientURL: clientURL(i.cluster, i.namespace, m.member, cs),
      ready: ready.has(m.member) && m.healthy,
      learner: m.learner,
      leader: m.id === leaderId,
      ...(h?.version ? { version: h.version } : {}),
      ...(h?.dbSize !== undefined ? { dbSize: h.dbSize } : {}),
      ...lastError(m.member),
    };
  });
}

type SetCondition = (list: Condition[] | undefined, type: string, status: boolean, reason: string, message: string) => Condition[];

function conditionsOf(i: StatusInput, f: StatusFacts): Condition[] {
  const cond: SetCondition = (list, type, status, reason, message) =>
    setCondition(list, { type, status: status ? 'True' : 'False', reason, message, observedGeneration: i.generation }, i.now);
  let conditions = i.previous?.conditions ?? [];
  if (i.invalid) {
    conditions = cond(conditions, 'Degraded', true, 'InvalidSpec', i.invalid);
    conditions = cond(conditions, 'Progressing', false, 'InvalidSpec', 'the spec is invalid; nothing is changed until it is fixed');
  } else {
    conditions = specConditions(i, f, cond, conditions);
  }
  // Quorum lost for good: said as a condition of its own while it lasts, and how it ended afterwards.
  const { action } = i;
  const recovery = f.recovery;
  const lostForGood = action.type === 'wait' && action.reason === 'QuorumLost';
  const recovering = action.type === 'startRecovery' || (recovery !== undefined && recovery.completedAt === undefined);
  if (lostForGood) conditions = cond(conditions, 'QuorumLost', true, 'MajorityDataLost', action.detail);
  else if (recovering) conditions = cond(conditions, 'QuorumLost', true, 'Recovering', `recovering by ${recovery?.method ?? ''} from ${recovery?.from ?? ''}; writes after revision ${recovery?.revision ?? ''} are lost`);
  else if (conditions.some((c) => c.type === 'QuorumLost') && f.quorumServes) {
    conditions = cond(conditions, 'QuorumLost', false, recovery?.completedAt ? 'Recovered' : 'QuorumServes', recovery?.completedAt ? `recovered by ${recovery.method} from ${recovery.from} at revision ${recovery.revision}` : 'a quorum serves');
  }
  return conditions;
}

/** Available, Progressing, Degraded, EvenReplicas and MembersUpToDate, for a valid spec. */
function specConditions(i: StatusInput, f: StatusFacts, cond: SetCondition, previous: Condition[]): Condition[] {
  const { etcd, action } = i;
  const { quorumServes, readyReplicas, voters, halted } = f;
  let conditions = cond(
    previous,
    'Available',
    quorumServes,
    quorumServes ? 'QuorumServes' : etcd.membership ? 'QuorumLost' : 'Unreachable',
    quorumServes ? `${readyReplicas}/${voters} voting members serve` : etcd.membership ? `${readyReplicas}/${voters} voting members serve; ${quorum(voters)} are needed` : 'no quorum answered',
  );
  const description = actionMessage(action);
  // A halted or refused rolling update waits for a person: nothing progresses until the spec changes.
  const personWait = action.type === 'haltRollout' ? 'UpgradeFailed' : action.type === 'wait' && PERSON_WAITS.includes(action.reason) ? action.reason : undefined;
  const haltedMessage = halted ? haltMessage(halted) : description;
  conditions = i.paused
    ? cond(conditions, 'Progressing', false, 'Paused', 'spec.paused is true: the operator makes no changes')
    : action.type === 'steady'
      ? cond(conditions, 'Progressing', false, 'Stable', description)
      : personWait
        ? cond(conditions, 'Progressing', false, personWait, personWait === 'UpgradeFailed' ? haltedMessage : description)
        : f.stalled
          ? cond(conditions, 'Progressing', false, 'ProgressDeadlineExceeded', progressMessage(description, i.step, i.now))
          : cond(conditions, 'Progressing', true, action.type === 'wait' ? action.reason : STEP_REASONS[action.type], progressMessage(description, i.step, i.now));
  const [degraded, reason, message] = degradedOf(i, f, description, personWait, haltedMessage);
  conditions = cond(conditions, 'Degraded', degraded, reason, message);
  conditions = i.replicas % 2 === 0
    ? cond(conditions, 'EvenReplicas', true, 'EvenReplicas', `${i.replicas} members tolerate no more failures than ${i.replicas - 1}`)
    : conditions.filter((c) => c.type !== 'EvenReplicas');
  if (i.outdated) {
    const differ = i.outdated.map((o) => `${o.member} (${o.fields.join(', ')})`).join('; ');
    conditions = i.outdated.length === 0
      ? cond(conditions, 'MembersUpToDate', true, 'UpToDate', 'every member pod matches the spec')
      : halted
        ? cond(conditions, 'MembersUpToDate', false, 'UpgradeFailed', `the rolling update halted at ${halted.halted!.member}; still to update: ${differ}`)
        : cond(conditions, 'MembersUpToDate', false, 'RollingUpdate', `${f.updatedReplicas}/${f.members.length} members updated; still to update: ${differ}`);
  }
  return conditions;
}

/** The Degraded condition: the first that holds, in order of what a person most needs to know. */
function degradedOf(i: StatusInput, f: StatusFacts, description: string, personWait: string | undefined, haltedMessage: string): [boolean, string, string] {
  const { etcd, action } = i;
  const { crashing, cannotStart } = f;
  const unhealthy = f.members.filter((m) => !m.ready).map((m) => m.name);
  return action.type === 'wait' && action.reason === 'SnapshotRefused'
    ? [true, 'SnapshotRefused', action.detail]
    : action.type === 'wait' && action.reason === 'TLSSecretInvalid'
    ? [true, 'TLSSecretInvalid', action.detail]
    : f.halted
    ? [true, 'UpgradeFailed', haltedMessage]
    : personWait === 'UpgradeBlocked'
    ? [true, 'UpgradeBlocked', description]
    : crashing.length > 0
    ? [true, 'MembersCrashLooping', groupByText(crashing.map((p) => [p.member, p.lastTermination ? `exited with code ${p.lastTermination.exitCode}: ${p.lastTermination.message}` : 'crash-looping']))]
    : cannotStart.length > 0
      ? [true, 'MembersCannotStart', groupByText(cannotStart.map((p) => [p.member, p.cannotStart!]))]
    // Every write is refused: that is news before a stalled step (the recovery's own progress is in Progressing).
    : i.noSpace?.length
      ? [true, 'NoSpace', `etcd's NOSPACE alarm is raised (${i.noSpace.join(', ')}): writes are refused, reads are served. ${NO_SPACE_PLAN} Now: ${description}`]
    : f.stalled
      ? [true, 'StepStalled', `no progress for ${formatAge(f.age)}: ${progressMessage(description, i.step, i.now)}`]
      : etcd.membership
        ? unhealthy.length ? [true, 'MembersUnhealthy', `not serving: ${unhealthy.join(', ')}`]
          // Nothing is wrong yet, but will be: a person must update the Secret before it ends.
          : i.tls?.expiring ? [true, 'CertificateExpiring', i.tls.expiring] : [false, 'AllMembersHealthy', 'every member serves']
        // A cluster that had a quorum and lost it is degraded; one still bootstrapping is not (yet).
        : [!!i.previous?.clusterID, 'QuorumUnavailable', 'no quorum answered a member list'];
}

const NO_SPACE_PLAN = 'The operator compacts to the current revision, defragments every member one at a time (the leader last) and disarms the alarm once the data fits the quota.';

/** "a, b: text; c: other": members that say the same thing are named together. */
function groupByText(entries: [string, string][]): string {
  const groups = new Map<string, string[]>();
  for (const [member, text] of entries) groups.set(text, [...(groups.get(text) ?? []), member]);
  return [...groups].map(([text, members]) => `${members.sort().join(', ')}: ${text}`).join('; ');
}

/** The one-word summary in `kubectl get etcd`. */
function phaseOf(i: StatusInput, allServe: boolean, troubled: boolean, rolling: boolean): Phase {
  const a = i.action;
  if (i.invalid) return 'Failed';
  if (i.paused) return 'Paused';
  if (a.type === 'steady' && allServe) return 'Running';
  // A defragmentation by threshold or schedule is routine upkeep of a running cluster.
  if (a.type === 'defragment' && a.reason !== 'NoSpace' && allServe) return 'Running';
  // A new cluster is Creating until it first runs with every member.
  if (!i.previous?.phase || i.previous.phase === 'Creating' || i.previous.phase === 'Pending') return 'Creating';
  if (troubled) return 'Degraded';
  const scaling = a.type === 'addMember' || a.type === 'promoteMember' || (a.type === 'removeMember' && a.reason === 'ScaleDown') ||
    (a.type === 'createPod' && a.reason === 'MemberAdded') || (a.type === 'wait' && (a.reason === 'LearnerStarting' || a.reason === 'WaitingForHealthyMembers'));
  if (scaling) return 'Scaling';
  if (rolling) return 'Updating';
  if (a.type === 'createPod' || a.type === 'deletePod' || a.type === 'removeMember' || a.type === 'deletePVC' || a.type === 'restartMember') return 'Healing';
  if (a.type === 'compact' || a.type === 'defragment' || a.type === 'disarmAlarm') return 'Healing';
  return 'Degraded';
}
