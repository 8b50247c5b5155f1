// The operator's metrics about the objects it manages, read at scrape time from its informer caches: what
// each EtcdCluster's status says (members, readiness, leader, rollout, the step under way), what its member
// pods' container statuses say (restarts, crash loops), the newest successful EtcdBackup of each cluster, and
// each EtcdBackupSchedule's interval. Nothing here is set by a reconciler, so nothing is lost when the
// operator restarts and nothing is left behind when an object goes. The only state kept is what a cache
// cannot say afterwards: a leader change and a finished step's duration, seen as status updates arrive; their
// series are removed when the cluster is deleted.
//
// Every replica serves them (followers keep warm caches too), so a query that must count each cluster once
// takes `max by (namespace, cluster)`, as the shipped rules do (src/monitoring/rules.ts).
import type { V1Pod } from '@kubernetes/client-node';
import type { CollectedSample, EventHandler, RuntimeMetrics } from '@quorum/runtime';
import type { EtcdBackup } from '../api/etcdbackup.ts';
import type { EtcdBackupSchedule } from '../api/etcdbackupschedule.ts';
import type { EtcdCluster } from '../api/etcdcluster.ts';
import { LABELS } from '../names.ts';
import { latestTime, nextTime, parseSchedule, scheduleHashSeed } from '@quorum/kit';

type ClusterLabels = 'namespace' | 'cluster';
type MemberLabels = ClusterLabels | 'member';
type Samples<L extends string> = CollectedSample<L>[];

const seconds = (time: string | undefined): number | undefined => {
  const t = time === undefined ? NaN : Date.parse(time);
  return Number.isFinite(t) ? t / 1000 : undefined;
};
const clusterLabels = (c: { metadata: { namespace?: string; name?: string } }): Record<ClusterLabels, string> => ({ namespace: c.metadata.namespace ?? '', cluster: c.metadata.name ?? '' });

/** The kind of a step (the action's type, as in quorum_etcdcluster_step_retries_total): "addMember c1-3" is addMember. */
export const stepKind = (name: string): string => name.split(' ')[0] ?? name;

/** What the status of each EtcdCluster says, as one list of samples per metric (`now` in ms, for ages). */
export function clusterSamples(clusters: readonly EtcdCluster[], now: number): {
  desired: Samples<ClusterLabels>;
  members: Samples<ClusterLabels>;
  readyMembers: Samples<ClusterLabels>;
  votingMembers: Samples<ClusterLabels>;
  readyVotingMembers: Samples<ClusterLabels>;
  hasLeader: Samples<ClusterLabels>;
  memberReady: Samples<MemberLabels>;
  memberDbSize: Samples<MemberLabels>;
  updatedMembers: Samples<ClusterLabels>;
  rolloutInProgress: Samples<ClusterLabels>;
  rolloutHalted: Samples<ClusterLabels | 'member' | 'reason'>;
  stepAge: Samples<ClusterLabels | 'step'>;
  stepFailures: Samples<ClusterLabels | 'step'>;
  stepStalled: Samples<ClusterLabels | 'step'>;
} {
  const out: ReturnType<typeof clusterSamples> = {
    desired: [], members: [], readyMembers: [], votingMembers: [], readyVotingMembers: [], hasLeader: [], memberReady: [], memberDbSize: [],
    updatedMembers: [], rolloutInProgress: [], rolloutHalted: [], stepAge: [], stepFailures: [], stepStalled: [],
  };
  for (const c of clusters) {
    const labels = clusterLabels(c);
    const status = c.status ?? {};
    const members = status.members ?? [];
    const voters = members.filter((m) => !m.learner);
    out.desired.push({ labels, value: c.spec.replicas ?? 0 });
    out.members.push({ labels, value: members.length });
    out.readyMembers.push({ labels, value: members.filter((m) => m.ready).length });
    out.votingMembers.push({ labels, value: voters.length });
    out.readyVotingMembers.push({ labels, value: voters.filter((m) => m.ready).length });
    // Only once the cluster exists (it has an ID): a cluster being created has no leader yet, and that is no fault.
    if (status.clusterID) out.hasLeader.push({ labels, value: status.leader ? 1 : 0 });
    for (const m of members) {
      out.memberReady.push({ labels: { ...labels, member: m.name }, value: m.ready ? 1 : 0 });
      if (m.dbSize !== undefined) out.memberDbSize.push({ labels: { ...labels, member: m.name }, value: m.dbSize });
    }
    if (status.updatedReplicas !== undefined) out.updatedMembers.push({ labels, value: status.updatedReplicas });
    out.rolloutInProgress.push({ labels, value: status.rollout ? 1 : 0 });
    const halted = status.rollout?.halted;
    if (halted) out.rolloutHalted.push({ labels: { ...labels, member: halted.member, reason: halted.reason }, value: 1 });
    const step = status.step;
    const started = seconds(step?.startedAt);
    if (step && started !== undefined) {
      const stepLabels = { ...labels, step: step.name };
      out.stepAge.push({ labels: stepLabels, value: Math.max(0, now / 1000 - started) });
      out.stepFailures.push({ labels: stepLabels, value: step.failures ?? 0 });
      out.stepStalled.push({ labels: stepLabels, value: step.stalled ? 1 : 0 });
    }
  }
  return out;
}

/** What the etcd container of each member pod reports: restarts so far, and whether it waits in CrashLoopBackOff. */
export function memberPodSamples(pods: readonly V1Pod[]): { restarts: Samples<MemberLabels>; crashLooping: Samples<MemberLabels> } {
  const out: ReturnType<typeof memberPodSamples> = { restarts: [], crashLooping: [] };
  for (const pod of pods) {
    const member = pod.metadata?.labels?.[LABELS.member];
    const cluster = pod.metadata?.labels?.[LABELS.instance];
    if (!member || !cluster || pod.metadata?.labels?.[LABELS.name] !== 'etcd') continue;
    const etcd = pod.status?.containerStatuses?.find((s) => s.name === 'etcd');
    if (!etcd) continue;
    const labels = { namespace: pod.metadata.namespace ?? '', cluster, member };
    out.restarts.push({ labels, value: etcd.restartCount });
    out.crashLooping.push({ labels, value: etcd.state?.waiting?.reason === 'CrashLoopBackOff' ? 1 : 0 });
  }
  return out;
}

/** The newest Succeeded EtcdBackup of each cluster: when it completed, its size, and how long it took. */
export function backupSamples(backups: readonly EtcdBackup[]): { lastSuccess: Samples<ClusterLabels>; size: Samples<ClusterLabels>; duration: Samples<ClusterLabels> } {
  const newest = new Map<string, { backup: EtcdBackup; completedAt: number }>();
  for (const b of backups) {
    const completedAt = seconds(b.status?.completedAt);
    if (b.status?.phase !== 'Succeeded' || completedAt === undefined) continue;
    const key = `${b.metadata.namespace ?? ''}/${b.spec.clusterName}`;
    if ((newest.get(key)?.completedAt ?? -Infinity) < completedAt) newest.set(key, { backup: b, completedAt });
  }
  const out: ReturnType<typeof backupSamples> = { lastSuccess: [], size: [], duration: [] };
  for (const { backup, completedAt } of newest.values()) {
    const labels = { namespace: backup.metadata.namespace ?? '', cluster: backup.spec.clusterName };
    out.lastSuccess.push({ labels, value: completedAt });
    if (backup.status?.sizeBytes !== undefined) out.size.push({ labels, value: backup.status.sizeBytes });
    const startedAt = seconds(backup.status?.startedAt);
    if (startedAt !== undefined) out.duration.push({ labels, value: Math.max(0, completedAt - startedAt) });
  }
  return out;
}

type ScheduleLabelNames = 'namespace' | 'schedule' | 'cluster';

/**
 * Each schedule's creation time and its current interval: from the latest scheduled time at or before now
 * to the next one (a weekday schedule's interval is three days over a weekend). No interval while it is
 * suspended or does not parse, like quorum_backup_schedule_next_schedule_timestamp_seconds.
 */
export function scheduleSamples(schedules: readonly EtcdBackupSchedule[], now: number): { interval: Samples<ScheduleLabelNames>; created: Samples<ScheduleLabelNames> } {
  const out: ReturnType<typeof scheduleSamples> = { interval: [], created: [] };
  for (const s of schedules) {
    const namespace = s.metadata.namespace ?? '';
    const name = s.metadata.name ?? '';
    const labels = { namespace, schedule: name, cluster: s.spec.clusterName };
    const created = seconds(s.metadata.creationTimestamp);
    if (created !== undefined) out.created.push({ labels, value: created });
    if (s.spec.suspend) continue;
    const parsed = parseSchedule(s.spec.schedule, scheduleHashSeed(namespace, name));
    if (!parsed.ok) continue;
    const next = nextTime(parsed.expression, now);
    if (next === undefined) continue;
    const start = latestTime(parsed.expression, now) ?? next;
    const end = start === next ? nextTime(parsed.expression, next) : next;
    if (end !== undefined && end > start) out.interval.push({ labels, value: (end - start) / 1000 });
  }
  return out;
}

/**
 * What a status update says that the status after it cannot: the leader it names changed (from one member
 * to another, however long there was none in between), or the step it records ended (its duration, from
 * its startedAt to the update that no longer has it). Fed the informer's updates; keyed by cluster.
 */
export class StatusTransitions {
  readonly #lastLeader = new Map<string, string>();
  /** Per cluster key, the step kinds timed: a deleted cluster's series are removed by their full labels. */
  readonly #stepKinds = new Map<string, Set<string>>();
  readonly #onLeaderChange: (labels: Record<ClusterLabels, string>) => void;
  readonly #onStepEnded: (labels: Record<ClusterLabels | 'step', string>, seconds: number) => void;
  readonly #now: () => number;
  readonly #onDeleted: (labels: Record<ClusterLabels, string>, stepKinds: readonly string[]) => void;

  constructor(
    onLeaderChange: (labels: Record<ClusterLabels, string>) => void,
    onStepEnded: (labels: Record<ClusterLabels | 'step', string>, seconds: number) => void,
    now: () => number = Date.now,
    /** A cluster is gone: the series of its counters go too (the step kinds it was timed under given). */
    onDeleted: (labels: Record<ClusterLabels, string>, stepKinds: readonly string[]) => void = () => {},
  ) {
    this.#onLeaderChange = onLeaderChange;
    this.#onStepEnded = onStepEnded;
    this.#now = now;
    this.#onDeleted = onDeleted;
  }

  handler(): EventHandler<EtcdCluster> {
    return {
      onAdd: (c) => this.#seen(c),
      onUpdate: (previous, c) => {
        const step = previous.status?.step;
        const started = seconds(step?.startedAt);
        const next = c.status?.step;
        if (step && started !== undefined && (next?.name !== step.name || next.startedAt !== step.startedAt)) {
          const kind = stepKind(step.name);
          const key = this.#key(c);
          this.#stepKinds.set(key, (this.#stepKinds.get(key) ?? new Set()).add(kind));
          this.#onStepEnded({ ...clusterLabels(c), step: kind }, Math.max(0, this.#now() / 1000 - started));
        }
        this.#seen(c);
      },
      onDelete: (c) => {
        const key = this.#key(c);
        this.#lastLeader.delete(key);
        const kinds = [...(this.#stepKinds.get(key) ?? [])];
        this.#stepKinds.delete(key);
        this.#onDeleted(clusterLabels(c), kinds);
      },
    };
  }

  #key(c: EtcdCluster): string {
    return `${c.metadata.namespace ?? ''}/${c.metadata.name ?? ''}`;
  }

  #seen(c: EtcdCluster): void {
    const leader = c.status?.leader;
    if (!leader) return;
    const key = this.#key(c);
    const last = this.#lastLeader.get(key);
    this.#lastLeader.set(key, leader);
    if (last !== undefined && last !== leader) this.#onLeaderChange(clusterLabels(c));
  }
}

/** The caches the metrics are read from. */
export interface MetricSources {
  clusters: { store: { list(): EtcdCluster[] } };
  /** The operator's own pods (its label scope): member pods and backup Job pods. */
  pods: { store: { list(): V1Pod[] } };
  backups: { store: { list(): EtcdBackup[] } };
  schedules: { store: { list(): EtcdBackupSchedule[] } };
  /** Where the leader changes and step durations come from: the EtcdCluster informer. */
  addClusterHandler(handler: EventHandler<EtcdCluster>): void;
}

const CLUSTER = ['namespace', 'cluster'] as const;
const MEMBER = ['namespace', 'cluster', 'member'] as const;
const STEP = ['namespace', 'cluster', 'step'] as const;
const SCHEDULE = ['namespace', 'schedule', 'cluster'] as const;
/** A step lasts from a second (a pod created) to the bound of a rollout gate (minutes). */
const STEP_BUCKETS = [0.5, 1, 2.5, 5, 10, 30, 60, 120, 300, 600, 1800];

/**
 * Registers the collectors and the two counters in `metrics`. docs/monitoring.md lists every name; the
 * shipped alert rules (src/monitoring/rules.ts) are written against them.
 */
export function registerResourceMetrics(metrics: RuntimeMetrics, sources: MetricSources): void {
  // Each gauge reads its cache afresh: a few dozen objects, read once per gauge per scrape.
  const clusters = (): ReturnType<typeof clusterSamples> => clusterSamples(sources.clusters.store.list(), Date.now());
  const pods = (): ReturnType<typeof memberPodSamples> => memberPodSamples(sources.pods.store.list());
  const backups = (): ReturnType<typeof backupSamples> => backupSamples(sources.backups.store.list());
  const schedules = (): ReturnType<typeof scheduleSamples> => scheduleSamples(sources.schedules.store.list(), Date.now());

  const c = 'quorum_etcdcluster_';
  metrics.collectedGauge(`${c}desired_members`, 'spec.replicas of an EtcdCluster', CLUSTER, () => clusters().desired);
  metrics.collectedGauge(`${c}members`, 'Members in the etcd member list (status.members), learners included', CLUSTER, () => clusters().members);
  metrics.collectedGauge(`${c}ready_members`, 'Members the operator last saw ready (status.members[].ready)', CLUSTER, () => clusters().readyMembers);
  metrics.collectedGauge(`${c}voting_members`, 'Voting members (not learners) in the member list: what the quorum is counted from', CLUSTER, () => clusters().votingMembers);
  metrics.collectedGauge(`${c}ready_voting_members`, 'Voting members the operator last saw ready', CLUSTER, () => clusters().readyVotingMembers);
  metrics.collectedGauge(`${c}has_leader`, '1 while status names a raft leader, 0 while it names none; no series before the cluster has an ID', CLUSTER, () => clusters().hasLeader);
  metrics.collectedGauge(`${c}member_ready`, 'Whether a member is ready (status.members[].ready)', MEMBER, () => clusters().memberReady);
  metrics.collectedGauge(`${c}member_db_size_bytes`, "A member's backend database size as the operator last read it (status.members[].dbSize)", MEMBER, () => clusters().memberDbSize);
  metrics.collectedGauge(`${c}updated_members`, 'Members whose pod was made from the current spec (status.updatedReplicas)', CLUSTER, () => clusters().updatedMembers);
  metrics.collectedGauge(`${c}rollout_in_progress`, '1 while a rolling update is recorded (status.rollout)', CLUSTER, () => clusters().rolloutInProgress);
  metrics.collectedGauge(`${c}rollout_halted`, '1 while a rolling update is halted, with the member it stopped at and why (status.rollout.halted)', [...CLUSTER, 'member', 'reason'], () => clusters().rolloutHalted);
  metrics.collectedGauge(`${c}step_age_seconds`, 'How long the step under way (status.step) has lasted so far', STEP, () => clusters().stepAge);
  metrics.collectedGauge(`${c}step_failures`, 'Failed attempts of the step under way (status.step.failures)', STEP, () => clusters().stepFailures);
  metrics.collectedGauge(`${c}step_stalled`, '1 once the step under way passed its bound (status.step.stalled: Degraded, StepStalled)', STEP, () => clusters().stepStalled);
  metrics.collectedGauge(`${c}member_container_restarts`, "Restarts of a member pod's etcd container (its restartCount; a new pod starts from 0)", MEMBER, () => pods().restarts);
  metrics.collectedGauge(`${c}member_crash_looping`, "1 while a member pod's etcd container waits in CrashLoopBackOff", MEMBER, () => pods().crashLooping);

  // These three were set by the backup reconciler when a backup succeeded; read from the cache they survive
  // an operator restart (an alert on the age of the last backup must not go quiet because the operator restarted).
  metrics.collectedGauge('quorum_backup_last_success_timestamp_seconds', 'Unix time the newest successful EtcdBackup of a cluster completed', CLUSTER, () => backups().lastSuccess);
  metrics.collectedGauge('quorum_backup_last_size_bytes', 'Size of the newest successful backup of a cluster', CLUSTER, () => backups().size);
  metrics.collectedGauge('quorum_backup_last_duration_seconds', 'From the backup Job created to the snapshot stored, for the newest successful backup of a cluster', CLUSTER, () => backups().duration);

  metrics.collectedGauge('quorum_backup_schedule_interval_seconds', 'The interval of a schedule now: from its latest scheduled time to its next; no series while suspended or invalid', SCHEDULE, () => schedules().interval);
  metrics.collectedGauge('quorum_backup_schedule_created_timestamp_seconds', 'Unix time a schedule was created: the age of its backups before the first success', SCHEDULE, () => schedules().created);

  const leaderChanges = metrics.counter(`${c}leader_changes_total`, 'Times the leader named in status changed to another member, as this replica saw status updates', CLUSTER);
  const stepDurations = metrics.histogram(`${c}step_duration_seconds`, 'Durations of finished steps, from status.step.startedAt to the status update without that step, by kind', ['namespace', 'cluster', 'step'], STEP_BUCKETS);
  // A deleted cluster's counter and histogram series are removed with it (issue 23, finding 9: series of deleted
  // objects were kept for the life of the process, one set per cluster ever made). The runtime's handles
  // cannot remove a series; the registry's metric can, by its full labels.
  const remove = (name: string, labels: Record<string, string>): void => metrics.registry.getSingleMetric(name)?.remove(labels);
  const forget = (labels: Record<ClusterLabels, string>, stepKinds: readonly string[]): void => {
    remove(`${c}leader_changes_total`, labels);
    for (const step of stepKinds) remove(`${c}step_duration_seconds`, { ...labels, step });
  };
  sources.addClusterHandler(new StatusTransitions((labels) => leaderChanges.inc(labels), (labels, s) => stepDurations.observe(labels, s), Date.now, forget).handler());
}
