// What a rolling update is decided from (plan/rollout.ts rolloutStep): which members' pods were made from another spec,
// the rollout recorded in status, and, only while there is something to roll, what etcd says: how far each
// member has applied against the leader's commit index, the alarms, and the cluster version. A cluster at
// rest costs no extra etcd call (the cluster version is read again only when it may have moved).
import { createHash } from 'node:crypto';
import { decidedClusterVersion, versionPath } from '../api/defaults.ts';
import type { EtcdBackup } from '../api/etcdbackup.ts';
import type { EtcdCluster, RolloutRecord } from '../api/etcdcluster.ts';
import { jobDeadlineSeconds } from '../backup/job.ts';
import { LABELS, RETRY_ROLLOUT_ANNOTATION } from '../names.ts';
import type { EtcdClients } from '../etcd/clients.ts';
import type { EtcdView, PodObject } from './observe-members.ts';
import { clientEndpoint, newMemberPeerScheme, servedPeerStage, type CABundles, type ClientCredentials, type MemberEndpoint, type TLSStage } from '../tls/members.ts';
import type { Membership, ObservedRollout, PreUpgradeBackup } from './plan/types.ts';
import { outdatedFields, templateFingerprint } from './resources.ts';
import type { DefaultedSpec } from './spec.ts';
import type { StatusShape } from './status.ts';

/**
 * How long an updated member's pod must have been Ready before the next member goes: one readiness period
 * (2 s), which catches an etcd that starts and exits at once.
 */
export const MIN_READY_MS = 2000;
/** An updated member's bound to pass its gate: 5 minutes, plus its database read at 20 MiB/s. */
const GATE_BASE_MS = 300_000;
const GATE_BYTES_PER_SECOND = 20 * 1024 * 1024;

export function gateBoundMs(dbSizes: readonly number[]): number {
  return GATE_BASE_MS + Math.ceil((Math.max(0, ...dbSizes) / GATE_BYTES_PER_SECOND) * 1000);
}

/**
 * The EtcdBackup a rollout takes before it touches a member: named after its target version, its target and
 * its retry token, so that a crash after creating it meets AlreadyExists and reuses it, while a retry of a
 * rollout that halted on a failed backup takes a new one. At most 63 characters: the name is a label value
 * (etcd.quorum.dev/backup) on the backup's Job.
 */
export function preUpgradeBackupName(cluster: string, record: Pick<RolloutRecord, 'target' | 'targetVersion' | 'retryToken'>): string {
  const hash = createHash('sha256').update(`${record.target}/${record.retryToken ?? ''}`).digest('hex').slice(0, 5);
  const tail = `-pre-${record.targetVersion.replace(/[^0-9a-z]+/g, '-')}-${hash}`;
  return `${cluster.slice(0, 63 - tail.length).replace(/-+$/, '')}${tail}`;
}

/**
 * The backup a recorded rollout waits for before its first member, when spec.backup asks for one before a
 * version change (and this rollout changes the version): its name, and its phase as the backups' cache has it.
 */
export function observePreUpgradeBackup(
  cluster: string,
  namespace: string,
  spec: DefaultedSpec,
  record: RolloutRecord | undefined,
  backups: { store: { get(key: string): EtcdBackup | undefined } } | undefined,
  dbSizes: readonly number[],
): PreUpgradeBackup | undefined {
  const backup = spec.backup;
  if (!record || !backup || (backup.beforeVersionChange ?? 'Always') !== 'Always' || record.fromVersion === record.targetVersion) return undefined;
  const name = preUpgradeBackupName(cluster, record);
  const found = backups?.store.get(`${namespace}/${name}`);
  const s = found?.status;
  const failed = s?.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  return {
    name,
    destination: backup.destination,
    phase: found ? (s?.phase ?? 'Pending') : 'Missing',
    ...(failed ? { message: `${failed.reason}: ${failed.message}` } : {}),
    // The backup Job's own deadline, plus a minute for its pod to be scheduled and started.
    boundMs: (jobDeadlineSeconds(Math.max(0, ...dbSizes)) + 60) * 1000,
  };
}

/** The rollout target of a spec: a hash of the per-field fingerprint member pods record (resources.ts). */
export function rolloutTarget(spec: DefaultedSpec, ca?: CABundles): string {
  const fingerprint = templateFingerprint(spec, ca);
  const canonical = Object.fromEntries(Object.keys(fingerprint).sort().map((k) => [k, fingerprint[k]]));
  return createHash('sha256').update(JSON.stringify(canonical)).digest('hex').slice(0, 16);
}

/**
 * Members whose pod (not being deleted) was made from another spec, or at another TLS stage than `stageOf` says
 * now, with the fields that differ.
 */
export function outdatedMembers(pods: readonly PodObject[], spec: DefaultedSpec, ca?: CABundles, stageOf?: (member: string) => TLSStage): { member: string; fields: string[] }[] {
  return pods
    .filter((p) => !p.metadata.deletionTimestamp)
    .map((p) => {
      const member = p.metadata.labels?.[LABELS.member] ?? '';
      return { member, fields: outdatedFields(p, spec, ca, stageOf?.(member)) };
    })
    .filter((o) => o.fields.length > 0);
}

export interface RolloutObservation {
  rollout: ObservedRollout;
  /** The membership, with each member's applied index and whether it caught up (only while rolling). */
  membership: Membership | undefined;
  /** etcd's cluster version, when it was read. */
  clusterVersion?: string;
}

const minor = (version: string | undefined): string | undefined => version?.split('.').slice(0, 2).join('.');

export async function observeRollout(
  cluster: EtcdCluster,
  spec: DefaultedSpec,
  previous: StatusShape | undefined,
  pods: readonly PodObject[],
  view: EtcdView,
  clients: EtcdClients,
  signal: AbortSignal,
  credentials?: ClientCredentials,
  ca?: CABundles,
  stageOf?: (member: string) => TLSStage,
): Promise<RolloutObservation> {
  const outdated = outdatedMembers(pods, spec, ca, stageOf);
  const record = previous?.rollout;
  const membership = view.membership;
  // Plaintext to peer TLS in place: members etcd still lists with an http peer URL.
  const peerSwitch = spec.tls?.peer ? (membership?.members.filter((m) => m.peerScheme === 'http').map((m) => m.member) ?? []) : [];
  const rolling = outdated.length > 0 || record !== undefined || peerSwitch.length > 0;
  const livePods = pods.filter((p) => !p.metadata.deletionTimestamp);
  const peerSchemeOf = (member: string): 'http' | 'https' | undefined => membership?.members.find((m) => m.member === member)?.peerScheme;
  const newMemberScheme = newMemberPeerScheme(spec, livePods.map((p) => servedPeerStage(p, peerSchemeOf(p.metadata.labels?.[LABELS.member] ?? ''))));
  const endpoints = new Map(
    pods
      .filter((p) => p.status?.podIP && p.status.phase === 'Running' && !p.metadata.deletionTimestamp)
      .map((p) => [p.metadata.labels?.[LABELS.member] ?? '', clientEndpoint(p, cluster.metadata.name!, cluster.metadata.namespace!, credentials)!]),
  );
  const leader = membership?.members.find((m) => m.id === membership.leaderId);
  const leaderEndpoint = leader ? endpoints.get(leader.member) : undefined;
  // Alarms and the cluster version are the cluster's: any member that serves can say them.
  const anyEndpoint = leaderEndpoint ?? membership?.members.filter((m) => m.healthy).map((m) => endpoints.get(m.member)).find(Boolean);
  const versions = membership?.members.map((m) => m.version) ?? [];
  const lowest = versions.filter((v): v is string => v !== undefined).sort()[0];

  // The cluster version can only move when the members' lowest minor differs from it.
  let clusterVersion: string | undefined;
  if (anyEndpoint && (rolling || !previous?.clusterVersion || minor(previous.clusterVersion) !== minor(lowest))) {
    const read = await clients.get(anyEndpoint).version({ signal }).then((v) => v.cluster, () => undefined);
    clusterVersion = decidedClusterVersion(read, versions);
  }
  let alarms: Pick<ObservedRollout, 'alarms' | 'alarmsUnread'> = {};
  let observed = membership;
  if (rolling && membership) {
    alarms = await readAlarms(membership, anyEndpoint, clients, signal);
    observed = await withCatchUp(membership, leaderEndpoint, endpoints, clients, signal);
  }
  // A downgrade in flight, as a 3.6 member's status says it (3.5 members do not).
  const downgrade = observed?.members.find((m) => m.downgrade !== undefined)?.downgrade;
  return {
    membership: observed,
    ...(clusterVersion ? { clusterVersion } : {}),
    rollout: {
      outdated,
      target: rolloutTarget(spec, ca),
      targetVersion: spec.version,
      ...(previous?.currentVersion ? { currentVersion: previous.currentVersion } : {}),
      ...(record ? { record } : {}),
      ...(cluster.metadata.annotations?.[RETRY_ROLLOUT_ANNOTATION] !== undefined ? { retryToken: cluster.metadata.annotations[RETRY_ROLLOUT_ANNOTATION] } : {}),
      // Only a cluster version read just now decides a rollback: without it, the members' versions stand in.
      path: versionPath({
        memberVersions: versions,
        ...(clusterVersion ? { clusterVersion } : {}),
        target: spec.version,
        ...(downgrade?.enabled && downgrade.targetVersion ? { downgradeTarget: downgrade.targetVersion } : {}),
      }),
      ...(clusterVersion ? { clusterVersion } : {}),
      ...(downgrade ? { downgrade } : {}),
      ...alarms,
      gateBoundMs: gateBoundMs(view.health.map((h) => h.dbSize ?? 0)),
      minReadyMs: MIN_READY_MS,
      ...(peerSwitch.length > 0 ? { peerSwitch } : {}),
      newMemberPeerScheme: newMemberScheme,
    },
  };
}

/** etcd's active alarms, by member name, read through a member that serves; or why they could not be read. */
async function readAlarms(membership: Membership, endpoint: MemberEndpoint | undefined, clients: EtcdClients, signal: AbortSignal): Promise<Pick<ObservedRollout, 'alarms' | 'alarmsUnread'>> {
  if (!endpoint) return { alarmsUnread: 'no member serves to ask' };
  const names = new Map(membership.members.map((m) => [m.id, m.member]));
  try {
    return { alarms: (await clients.get(endpoint).alarms({ signal })).map((a) => ({ member: names.get(a.memberId) ?? a.memberId, alarm: a.alarm })) };
  } catch (err) {
    return { alarmsUnread: err instanceof Error ? err.message : String(err) };
  }
}

/**
 * "Caught up", race-free under a constant write load: the leader's commit index is read first, then each
 * member's applied index. An applied index at or above a commit index read earlier proves the member has
 * everything that was committed before it was asked.
 */
async function withCatchUp(membership: Membership, leaderEndpoint: MemberEndpoint | undefined, endpoints: Map<string, MemberEndpoint>, clients: EtcdClients, signal: AbortSignal): Promise<Membership> {
  if (!leaderEndpoint) return membership;
  let commit: string;
  try {
    commit = (await clients.get(leaderEndpoint).status({ signal })).raftIndex;
  } catch {
    return membership;
  }
  const members = await Promise.all(
    membership.members.map(async (m) => {
      const endpoint = endpoints.get(m.member);
      if (!endpoint || !m.started) return m;
      try {
        const s = await clients.get(endpoint).status({ signal });
        const applied = s.raftAppliedIndex ?? s.raftIndex;
        return {
          ...m,
          appliedIndex: applied,
          caughtUp: BigInt(applied) >= BigInt(commit),
          ...(s.storageVersion ? { storageVersion: s.storageVersion } : {}),
          ...(s.downgrade ? { downgrade: s.downgrade } : {}),
        };
      } catch {
        // No answer: not seen caught up, which the gate waits for.
        return m;
      }
    }),
  );
  return { ...membership, members, leaderCommit: commit };
}
