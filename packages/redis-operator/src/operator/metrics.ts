// The operator's metrics about each Redis. Most are read at scrape time from its informer cache (what status
// says), so that every replica serves them and nothing is lost when the operator restarts: each instance's
// role, readiness, replication lag and link, the Sentinels' view, the step under way and the rolling update.
// What status does not hold (memory, evictions, connected replicas: they change at every read) comes from the
// instances' INFO as the reconciler last read it (InstanceLoad), so only the replica that leads serves it. Every
// series is labelled by namespace and redis (and instance where it is one instance's), and goes with its Redis
// or instance: collected series are listed only while the Redis exists, and the failover counter is removed when
// the Redis is deleted. Each RedisBackupSchedule's series (labelled namespace, schedule and redis) are read from
// the schedules' and backups' caches in the same way, and go with the schedule.
import { parseSchedule, scheduleHashSeed, scheduleInterval } from '@quorum/kit';
import type { CollectedSample, EventHandler, RuntimeMetrics } from '@quorum/runtime';
import { applyDefaults } from '../api/defaults.ts';
import type { InstanceStats, Observed } from '../plan/types.ts';
import type { RedisBackupObject, RedisBackupScheduleObject, RedisObject } from '../resources.ts';
import { SCHEDULE_LABEL } from '../schedule/prune-job.ts';

type RedisLabels = 'namespace' | 'redis';
type InstanceLabels = RedisLabels | 'instance';
type Samples<L extends string> = CollectedSample<L>[];

export interface RedisSamples {
  desiredInstances: Samples<RedisLabels>;
  minReplicasToWrite: Samples<RedisLabels>;
  readyInstances: Samples<RedisLabels>;
  available: Samples<RedisLabels>;
  instanceRole: Samples<InstanceLabels | 'role'>;
  instanceReady: Samples<InstanceLabels>;
  replicaLagBytes: Samples<InstanceLabels>;
  replicaLinkUp: Samples<InstanceLabels>;
  sentinelsReporting: Samples<RedisLabels>;
  sentinelsAgreeing: Samples<RedisLabels>;
  sentinelsAbleToFailOver: Samples<RedisLabels>;
  sentinelQuorum: Samples<RedisLabels>;
  stepAge: Samples<RedisLabels | 'step'>;
  stepFailures: Samples<RedisLabels | 'step'>;
  stepStalled: Samples<RedisLabels | 'step'>;
  rolloutUpdated: Samples<RedisLabels>;
  rolloutTotal: Samples<RedisLabels>;
  rolloutHalted: Samples<RedisLabels | 'instance' | 'reason'>;
}

/** The kind of a step, as a label with few values: "delete-pod cache-2" is delete-pod. */
export const stepKind = (name: string): string => name.split(' ')[0] ?? name;

const redisLabels = (r: RedisObject): Record<RedisLabels, string> => ({ namespace: r.metadata.namespace ?? '', redis: r.metadata.name ?? '' });
const bit = (b: boolean): number => (b ? 1 : 0);

function emptySamples(): RedisSamples {
  return {
    desiredInstances: [], minReplicasToWrite: [], readyInstances: [], available: [], instanceRole: [], instanceReady: [], replicaLagBytes: [], replicaLinkUp: [],
    sentinelsReporting: [], sentinelsAgreeing: [], sentinelsAbleToFailOver: [], sentinelQuorum: [],
    stepAge: [], stepFailures: [], stepStalled: [], rolloutUpdated: [], rolloutTotal: [], rolloutHalted: [],
  };
}

/** Instances, their roles, lag and links, and the Sentinels' view, as status last said. */
function addTopology(out: RedisSamples, r: RedisObject): void {
  const labels = redisLabels(r);
  const s = r.status;
  const spec = applyDefaults(r.spec);
  out.desiredInstances.push({ labels, value: spec.replicas + 1 });
  out.minReplicasToWrite.push({ labels, value: spec.minReplicasToWrite });
  if (s === undefined) return;
  out.readyInstances.push({ labels, value: s.readyReplicas ?? 0 });
  out.available.push({ labels, value: bit(s.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false) });
  for (const i of s.instances ?? []) {
    const one = { ...labels, instance: i.name };
    out.instanceRole.push({ labels: { ...one, role: i.role }, value: 1 });
    out.instanceReady.push({ labels: one, value: bit(i.ready) });
    if (i.lagBytes !== undefined) out.replicaLagBytes.push({ labels: one, value: i.lagBytes });
    if (i.linkStatus !== undefined) out.replicaLinkUp.push({ labels: one, value: bit(i.linkStatus === 'up') });
  }
  if (s.sentinel !== undefined) {
    out.sentinelsReporting.push({ labels, value: s.sentinel.reporting });
    out.sentinelsAgreeing.push({ labels, value: s.sentinel.agreeing });
    out.sentinelsAbleToFailOver.push({ labels, value: s.sentinel.ableToFailOver });
    out.sentinelQuorum.push({ labels, value: s.sentinel.quorum });
  }
}

function addProgress(out: RedisSamples, r: RedisObject, now: number): void {
  const labels = redisLabels(r);
  const step = r.status?.step;
  if (step !== undefined) {
    const stepLabels = { ...labels, step: stepKind(step.name) };
    out.stepAge.push({ labels: stepLabels, value: Math.max(0, (now - Date.parse(step.startedAt)) / 1000) });
    out.stepFailures.push({ labels: stepLabels, value: step.failures ?? 0 });
    out.stepStalled.push({ labels: stepLabels, value: step.stalled ? 1 : 0 });
  }
  const rollout = r.status?.rollout;
  if (rollout !== undefined) {
    out.rolloutUpdated.push({ labels, value: rollout.updated });
    out.rolloutTotal.push({ labels, value: rollout.total });
    if (rollout.halted) out.rolloutHalted.push({ labels: { ...labels, instance: rollout.halted.instance, reason: rollout.halted.reason }, value: 1 });
  }
}

export function redisSamples(redises: readonly RedisObject[], now: number): RedisSamples {
  const out = emptySamples();
  for (const r of redises) {
    addTopology(out, r);
    addProgress(out, r, now);
  }
  return out;
}

/** How long the instances' INFO readings are served after the reconciler last read them (it reads every 2 s while it leads). */
export const LOAD_FRESH_MS = 60_000;

export interface LoadSamples {
  usedMemory: Samples<InstanceLabels>;
  maxMemory: Samples<InstanceLabels>;
  evictedKeys: Samples<InstanceLabels>;
  connectedReplicas: Samples<InstanceLabels>;
}

/**
 * The instances' load as the reconciler last read it (INFO memory, stats, replication), per Redis: replaced
 * whole by each observation, so an instance removed or no longer answering drops out; a Redis not observed for
 * LOAD_FRESH_MS (deleted, or this replica stopped leading) drops out whole.
 */
export class InstanceLoad {
  readonly #byRedis = new Map<string, { at: number; labels: Record<RedisLabels, string>; instances: Map<string, InstanceStats> }>();

  record(observed: Pick<Observed, 'namespace' | 'redis' | 'instances'>, now: number): void {
    const instances = new Map<string, InstanceStats>();
    for (const [name, reading] of observed.instances) if (reading.ok && reading.stats !== undefined) instances.set(name, reading.stats);
    this.#byRedis.set(`${observed.namespace}/${observed.redis}`, { at: now, labels: { namespace: observed.namespace, redis: observed.redis }, instances });
  }

  /** The samples of the Redises in `exists` (namespace/name) read within LOAD_FRESH_MS of `now`. */
  samples(exists: (key: string) => boolean, now: number): LoadSamples {
    const out: LoadSamples = { usedMemory: [], maxMemory: [], evictedKeys: [], connectedReplicas: [] };
    for (const [key, { at, labels, instances }] of this.#byRedis) {
      if (!exists(key) || now - at > LOAD_FRESH_MS) {
        this.#byRedis.delete(key);
        continue;
      }
      for (const [instance, s] of instances) {
        const one = { ...labels, instance };
        out.usedMemory.push({ labels: one, value: s.usedMemoryBytes });
        out.maxMemory.push({ labels: one, value: s.maxMemoryBytes });
        out.evictedKeys.push({ labels: one, value: s.evictedKeys });
        out.connectedReplicas.push({ labels: one, value: s.connectedReplicas });
      }
    }
    return out;
  }
}

/**
 * Counts Sentinel failovers as the operator sees them: a change of status.sentinel.primary (the instance the
 * majority of answering Sentinels names) from one instance to another between two status updates this process
 * saw. Planned failovers (a rollout, a scale-down of the primary) count too; a change made while this process
 * did not run does not, and neither does the first primary named or a Redis without Sentinels.
 */
export class SentinelFailovers {
  readonly #last = new Map<string, string>();
  readonly #onFailover: (labels: Record<RedisLabels, string>) => void;
  readonly #onDeleted: (labels: Record<RedisLabels, string>) => void;

  constructor(onFailover: (labels: Record<RedisLabels, string>) => void, onDeleted: (labels: Record<RedisLabels, string>) => void) {
    this.#onFailover = onFailover;
    this.#onDeleted = onDeleted;
  }

  handler(): EventHandler<RedisObject> {
    return {
      onAdd: (r) => this.#seen(r),
      onUpdate: (_previous, r) => this.#seen(r),
      onDelete: (r) => {
        const labels = redisLabels(r);
        this.#last.delete(`${labels.namespace}/${labels.redis}`);
        this.#onDeleted(labels);
      },
    };
  }

  #seen(r: RedisObject): void {
    const primary = r.status?.sentinel?.primary;
    if (!primary) return;
    const labels = redisLabels(r);
    const key = `${labels.namespace}/${labels.redis}`;
    const last = this.#last.get(key);
    this.#last.set(key, primary);
    if (last !== undefined && last !== primary) this.#onFailover(labels);
  }
}

export interface RedisMetricSources {
  store: { list(): RedisObject[]; get(key: string): RedisObject | undefined };
  addHandler(handler: EventHandler<RedisObject>): void;
}

type Collect<L extends string> = [name: string, help: string, labels: readonly L[], samples: () => Samples<L>];

export function registerRedisMetrics(metrics: RuntimeMetrics, redises: RedisMetricSources, load: InstanceLoad): void {
  const samples = (): RedisSamples => redisSamples(redises.store.list(), Date.now());
  const loadNow = (): LoadSamples => load.samples((key) => redises.store.get(key) !== undefined, Date.now());
  const REDIS = ['namespace', 'redis'] as const;
  const INSTANCE = [...REDIS, 'instance'] as const;
  const STEP = [...REDIS, 'step'] as const;
  const p = 'quorum_redis_';
  const gauges: (Collect<RedisLabels> | Collect<InstanceLabels> | Collect<InstanceLabels | 'role'> | Collect<RedisLabels | 'step'> | Collect<InstanceLabels | 'reason'>)[] = [
    [`${p}instances_desired`, 'Instances the spec asks for: the primary and spec.replicas replicas', REDIS, () => samples().desiredInstances],
    [`${p}min_replicas_to_write`, 'min-replicas-to-write: the primary refuses writes with fewer replicas connected (and within min-replicas-max-lag)', REDIS, () => samples().minReplicasToWrite],
    [`${p}instances_ready`, 'Instances whose pod is Ready (status.readyReplicas)', REDIS, () => samples().readyInstances],
    [`${p}available`, '1 while the Available condition is True: a primary accepts writes', REDIS, () => samples().available],
    [`${p}instance_role`, 'Each instance\'s role as it last answered ROLE (status.instances[].role: primary, replica or unknown); always 1', [...INSTANCE, 'role'], () => samples().instanceRole],
    [`${p}instance_ready`, '1 while the instance\'s pod is Ready', INSTANCE, () => samples().instanceReady],
    [`${p}replica_lag_bytes`, 'How far a replica is behind its primary, in bytes of the replication stream (status.instances[].lagBytes)', INSTANCE, () => samples().replicaLagBytes],
    [`${p}replica_link_up`, '1 while a replica\'s link to its primary is up (master_link_status)', INSTANCE, () => samples().replicaLinkUp],
    [`${p}sentinels_reporting`, 'Sentinels that answered (status.sentinel.reporting)', REDIS, () => samples().sentinelsReporting],
    [`${p}sentinels_agreeing`, 'Sentinels that name the majority\'s primary (status.sentinel.agreeing)', REDIS, () => samples().sentinelsAgreeing],
    [`${p}sentinels_able_to_failover`, 'Sentinels that could fail the primary over now (status.sentinel.ableToFailOver)', REDIS, () => samples().sentinelsAbleToFailOver],
    [`${p}sentinel_quorum`, 'Sentinels needed to agree that the primary is down (status.sentinel.quorum)', REDIS, () => samples().sentinelQuorum],
    [`${p}memory_used_bytes`, 'used_memory of each instance, as the operator last read it (served by the leading replica)', INSTANCE, () => loadNow().usedMemory],
    [`${p}memory_max_bytes`, 'maxmemory of each instance (0: no limit), as the operator last read it', INSTANCE, () => loadNow().maxMemory],
    [`${p}evicted_keys`, 'evicted_keys of each instance: keys evicted for maxmemory since the server started (a counter that restarts with the server)', INSTANCE, () => loadNow().evictedKeys],
    [`${p}connected_replicas`, 'connected_slaves of each instance: replicas connected to it now', INSTANCE, () => loadNow().connectedReplicas],
    [`${p}step_age_seconds`, 'How long the step under way (status.step) has lasted so far', STEP, () => samples().stepAge],
    [`${p}step_failures`, 'Refused attempts of the step under way (status.step.failures)', STEP, () => samples().stepFailures],
    [`${p}step_stalled`, '1 once the step under way passed its bound (status.step.stalled: Degraded, StepStalled)', STEP, () => samples().stepStalled],
    [`${p}rollout_updated_pods`, 'Pods on the rolling update\'s target (status.rollout.updated), while one is under way', REDIS, () => samples().rolloutUpdated],
    [`${p}rollout_pods`, 'Pods the spec asks for (status.rollout.total), while a rolling update is under way', REDIS, () => samples().rolloutTotal],
    [`${p}rollout_halted`, '1 while a rolling update is halted, with the pod it stopped at and why (status.rollout.halted)', [...INSTANCE, 'reason'], () => samples().rolloutHalted],
  ];
  for (const [name, help, labels, collect] of gauges) metrics.collectedGauge<string>(name, help, labels, collect);
  const failovers = `${p}sentinel_failovers_total`;
  const counter = metrics.counter(failovers, 'Sentinel failovers the operator saw: changes of status.sentinel.primary from one instance to another while this process ran', REDIS);
  redises.addHandler(new SentinelFailovers((labels) => counter.inc(labels), (labels) => removeSeries(metrics, failovers, labels)).handler());
}

/** Removes a counter's series (the runtime's counter() can only add): a deleted Redis's. */
function removeSeries(metrics: RuntimeMetrics, name: string, labels: Record<string, string>): void {
  const metric: unknown = metrics.registry.getSingleMetric(name);
  if (typeof metric === 'object' && metric !== null && 'remove' in metric && typeof metric.remove === 'function') (metric.remove as (l: Record<string, string>) => void).call(metric, labels);
}

/** Per Redis, when its newest RedisBackup of a phase completed (seconds since the epoch), for the Redises that exist. */
export function lastBackupSamples(backups: readonly RedisBackupObject[], phase: 'Succeeded' | 'Failed' = 'Succeeded', exists: (key: string) => boolean = () => true): Samples<RedisLabels> {
  const newest = new Map<string, { labels: Record<RedisLabels, string>; value: number }>();
  for (const b of backups) {
    const completed = Date.parse(b.status?.completedAt ?? '');
    if (b.status?.phase !== phase || !Number.isFinite(completed)) continue;
    const labels = { namespace: b.metadata.namespace ?? '', redis: b.spec.redisName };
    const key = `${labels.namespace}/${labels.redis}`;
    if (!exists(key)) continue;
    if ((newest.get(key)?.value ?? 0) < completed / 1000) newest.set(key, { labels, value: completed / 1000 });
  }
  return [...newest.values()];
}

type ScheduleLabels = 'namespace' | 'schedule' | 'redis';
const BACKUP_PHASES = ['Pending', 'Running', 'Succeeded', 'Failed'] as const;

export interface ScheduleSamples {
  lastSchedule: Samples<ScheduleLabels>;
  lastSuccess: Samples<ScheduleLabels>;
  lastFailure: Samples<ScheduleLabels>;
  nextSchedule: Samples<ScheduleLabels>;
  interval: Samples<ScheduleLabels>;
  created: Samples<ScheduleLabels>;
  backups: Samples<ScheduleLabels | 'phase'>;
}

const seconds = (time: string | undefined): number | undefined => {
  const t = time === undefined ? NaN : Date.parse(time);
  return Number.isFinite(t) ? t / 1000 : undefined;
};

/**
 * Per RedisBackupSchedule, what its status says (the times it was last due, last succeeded, last failed, is next
 * due; a time that does not exist has no series, it is not 0), its creation, its interval now (none while
 * suspended or invalid: nothing is expected of it then), and its backups kept, by phase (records retention has
 * not deleted yet, that the schedule controls).
 */
export function scheduleSamples(schedules: readonly RedisBackupScheduleObject[], backups: readonly RedisBackupObject[], now: number): ScheduleSamples {
  const out: ScheduleSamples = { lastSchedule: [], lastSuccess: [], lastFailure: [], nextSchedule: [], interval: [], created: [], backups: [] };
  for (const schedule of schedules) {
    const namespace = schedule.metadata.namespace ?? '';
    const name = schedule.metadata.name ?? '';
    const labels = { namespace, schedule: name, redis: schedule.spec.redisName };
    const status = schedule.status ?? {};
    const times: [Samples<ScheduleLabels>, string | undefined][] = [
      [out.lastSchedule, status.lastScheduleTime],
      [out.lastSuccess, status.lastSuccessfulTime],
      [out.lastFailure, status.lastFailure?.time],
      [out.nextSchedule, status.nextScheduleTime],
      [out.created, schedule.metadata.creationTimestamp],
    ];
    for (const [samples, time] of times) {
      const value = seconds(time);
      if (value !== undefined) samples.push({ labels, value });
    }
    const parsed = schedule.spec.suspend ? undefined : parseSchedule(schedule.spec.schedule, scheduleHashSeed(namespace, name));
    const interval = parsed?.ok ? scheduleInterval(parsed.expression, now) : undefined;
    if (interval !== undefined) out.interval.push({ labels, value: interval / 1000 });
    const kept = backups.filter((b) => b.metadata.namespace === namespace && b.metadata.labels?.[SCHEDULE_LABEL] === name && b.metadata.ownerReferences?.some((o) => o.uid === schedule.metadata.uid && o.controller === true));
    for (const phase of BACKUP_PHASES) out.backups.push({ labels: { ...labels, phase }, value: kept.filter((b) => (b.status?.phase ?? 'Pending') === phase).length });
  }
  return out;
}

export function registerBackupMetrics(metrics: RuntimeMetrics, backups: { store: { list(): RedisBackupObject[] } }, redises: { store: { get(key: string): RedisObject | undefined } }): void {
  const exists = (key: string): boolean => redises.store.get(key) !== undefined;
  const REDIS = ['namespace', 'redis'] as const;
  metrics.collectedGauge('quorum_redis_backup_last_success_timestamp_seconds', 'When the newest Succeeded RedisBackup of each Redis completed (status.completedAt)', REDIS, () => lastBackupSamples(backups.store.list(), 'Succeeded', exists));
  metrics.collectedGauge('quorum_redis_backup_last_failure_timestamp_seconds', 'When the newest Failed RedisBackup of each Redis failed for good (status.completedAt)', REDIS, () => lastBackupSamples(backups.store.list(), 'Failed', exists));
}

/** The schedules' series (scheduleSamples), read from the caches at every scrape: every replica serves them, right after a restart. */
export function registerScheduleMetrics(metrics: RuntimeMetrics, schedules: { store: { list(): RedisBackupScheduleObject[] } }, backups: { store: { list(): RedisBackupObject[] } }): void {
  const samples = (): ScheduleSamples => scheduleSamples(schedules.store.list(), backups.store.list(), Date.now());
  const SCHEDULE = ['namespace', 'schedule', 'redis'] as const;
  const s = 'quorum_redis_backup_schedule_';
  const gauges: [name: string, help: string, samples: (all: ScheduleSamples) => Samples<ScheduleLabels>][] = [
    [`${s}last_schedule_timestamp_seconds`, 'The scheduled time of the newest RedisBackup a schedule created (status.lastScheduleTime)', (all) => all.lastSchedule],
    [`${s}last_success_timestamp_seconds`, 'When the newest successful backup of a schedule completed (status.lastSuccessfulTime, kept after retention deleted it)', (all) => all.lastSuccess],
    [`${s}last_failure_timestamp_seconds`, 'When the newest failed backup of a schedule failed for good (status.lastFailure.time)', (all) => all.lastFailure],
    [`${s}next_schedule_timestamp_seconds`, 'The next scheduled time of a schedule (status.nextScheduleTime); no series while it is suspended or invalid', (all) => all.nextSchedule],
    [`${s}interval_seconds`, 'The interval of a schedule now: from its latest scheduled time to its next; no series while suspended or invalid', (all) => all.interval],
    [`${s}created_timestamp_seconds`, 'When a schedule was created: the age of its backups before the first success', (all) => all.created],
  ];
  for (const [name, help, pick] of gauges) metrics.collectedGauge(name, help, SCHEDULE, () => pick(samples()));
  metrics.collectedGauge(`${s}backups`, 'The RedisBackups of a schedule kept now (not yet deleted by retention), by phase', [...SCHEDULE, 'phase'], () => samples().backups);
}
