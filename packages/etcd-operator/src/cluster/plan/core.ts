// What every part of the planner reads the observation through: the facts derived from it once (who votes,
// who serves, whether a quorum survives a member) and the small helpers its messages share.
import { quorum } from '../../etcd/quorum.ts';
import { memberIndex } from '../../names.ts';
import type { RestoreSource } from '../resources.ts';
import type { Membership, Observed, ObservedMember, ObservedPod } from './types.ts';

/** The observation with a quorum's member list, and what follows from it. */
export interface Facts {
  o: Observed;
  members: ObservedMember[];
  /** Member names, in the membership's order: a joining member's --initial-cluster. */
  names: string[];
  inMembership: Set<string>;
  voters: ObservedMember[];
  healthyVoters: ObservedMember[];
  /** Members not both serving and Ready: what holds a change back. */
  down: ObservedMember[];
  pod: (member: string) => ObservedPod | undefined;
  hasPVC: (member: string) => boolean;
  /** Started, healthy, and its pod is not terminating. */
  serving: (m: ObservedMember) => boolean;
  /** Whether the voters other than `m` still make a quorum of the membership without it. */
  survivesWithout: (m: ObservedMember) => boolean;
}

export function podLookup(o: Observed): (member: string) => ObservedPod | undefined {
  return (member) => o.pods.find((p) => p.member === member);
}

export function factsOf(o: Observed, membership: Membership): Facts {
  const pod = podLookup(o);
  const members = membership.members;
  const voters = members.filter((m) => !m.learner);
  const serving = (m: ObservedMember): boolean => m.started && m.healthy && !pod(m.member)?.deleting;
  const healthyVoters = voters.filter(serving);
  return {
    o,
    members,
    names: members.map((m) => m.member),
    inMembership: new Set(members.map((m) => m.member)),
    voters,
    healthyVoters,
    down: members.filter((m) => !(serving(m) && pod(m.member)?.ready)),
    pod,
    hasPVC: (member) => o.pvcs.includes(member),
    serving,
    survivesWithout: (m) => healthyVoters.filter((v) => v.id !== m.id).length >= quorum(voters.length - (m.learner ? 0 : 1)),
  };
}

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

export const seconds = (ms: number): number => Math.round(ms / 1000);

/** Members by their index in the cluster's names (oldest first). */
export function byIndex(o: Observed): (a: ObservedMember, b: ObservedMember) => number {
  return (a, b) => (memberIndex(o.cluster, a.member) ?? 0) - (memberIndex(o.cluster, b.member) ?? 0);
}

export function unreachableDetail(o: Observed): string {
  if (!o.unreachable?.length) return '';
  const byError = new Map<string, string[]>();
  for (const u of o.unreachable) byError.set(u.error, [...(byError.get(u.error) ?? []), u.member]);
  return `; unreachable: ${[...byError].map(([error, members]) => `${members.sort().join(', ')} (${error})`).join(', ')}`;
}

export function podDetail(p: ObservedPod | undefined): string {
  if (!p) return ' (no pod yet)';
  if (p.deleting) return ` (pod terminating on node ${p.nodeName ?? '(unknown)'})`;
  if (p.crashLoopingSince !== undefined) return ` (crash-looping${p.lastTermination ? `, exit code ${p.lastTermination.exitCode}` : ''})`;
  if (p.cannotStart) return ` (${p.cannotStart})`;
  if (p.phase === 'Pending') return ' (pod Pending)';
  return '';
}

export const minorOf = (version: string): string => version.split('.').slice(0, 2).join('.');

/** The oldest minor whose etcd has the downgrade API (a 3.5 cluster may still have 3.6's downgrade to it enabled). */
export const MIN_DOWNGRADE_TARGET = '3.5';

export function compareVersions(a: string, b: string): number {
  const x = a.split('.').map(Number);
  const y = b.split('.').map(Number);
  for (let i = 0; i < Math.max(x.length, y.length); i++) if ((x[i] ?? 0) !== (y[i] ?? 0)) return (x[i] ?? 0) - (y[i] ?? 0);
  return 0;
}
