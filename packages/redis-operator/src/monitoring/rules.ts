// The Redis alerts, written once here and generated as a plain rules file (Prometheus's rule_files, promtool)
// and as a PrometheusRule (the prometheus-operator, and the Helm chart) into deploy/monitoring/ by
// scripts/generate.ts; test/unit/monitoring.test.ts runs promtool's checks and cases per alert on the file.
//
// Every operator replica serves the series read from status, and the leading one those read from the
// instances (operator/metrics.ts), so each expression takes `max by (namespace, redis, …)`: one alert per
// Redis or instance whatever the number of replicas. Each alert's runbook is its section of docs/redis.md.
import { alertRule, prometheusRuleObject, type AlertRule, type AlertSpec, type RuleGroup } from '@quorum/kit';
import { stringify } from 'yaml';
import { MONITORING_LABELS } from './scrape.ts';

export const RUNBOOK_DOC = 'docs/redis.md';

/** A replica further behind its primary than this, for 5 minutes, is reported (a bound, not a goal: see docs/redis.md). */
export const LAG_BYTES_BOUND = 16 * 1024 * 1024;
/**
 * A schedule whose newest success is older than this many of its intervals, and the grace below, is reported:
 * at least one scheduled backup (and a retry of the store's) has not succeeded.
 */
export const BACKUP_MISSED_INTERVALS = 2;
/** The time a backup itself takes, beyond its scheduled time, allowed before the schedule counts as behind. */
export const BACKUP_AGE_GRACE_SECONDS = 30 * 60;

/** The alert names, in the order docs/redis.md lists them. */
export const ALERTS = [
  'RedisPrimaryMissing',
  'RedisPrimaryNotWritable',
  'RedisSentinelsCannotFailOver',
  'RedisReplicaLinkDown',
  'RedisReplicationLagHigh',
  'RedisMemoryNearMax',
  'RedisEvictingKeys',
  'RedisBackupTooOld',
  'RedisBackupFailing',
  'RedisRolloutHalted',
  'RedisStepStalled',
] as const;
export type AlertName = (typeof ALERTS)[number];

const R = 'namespace, redis';
const I = 'namespace, redis, instance';
const max = (by: string, series: string): string => `max by (${by}) (${series})`;
const lastSuccess = max(R, 'quorum_redis_backup_last_success_timestamp_seconds');
const lastFailure = max(R, 'quorum_redis_backup_last_failure_timestamp_seconds');
const S = 'namespace, schedule, redis';
const scheduleAge = `time() - ${max(S, 'quorum_redis_backup_schedule_last_success_timestamp_seconds or quorum_redis_backup_schedule_created_timestamp_seconds')}`;
const scheduleInterval = max(S, 'quorum_redis_backup_schedule_interval_seconds');
const who = '{{ $labels.namespace }}/{{ $labels.redis }}';
const instance = '{{ $labels.instance }} of {{ $labels.namespace }}/{{ $labels.redis }}';

const SPECS: Record<AlertName, AlertSpec> = {
  RedisPrimaryMissing: {
    expr: `${max(R, 'quorum_redis_available')} == 0`,
    for: '1m',
    labels: { severity: 'critical' },
    summary: `Redis ${who} has no primary accepting writes`,
    description: `For a minute no instance of ${who} has answered as primary, been Ready and been what the Service selects (Available=False, NoPrimary): writes fail. status.sentinel says whom the Sentinels name, the Degraded condition why.`,
  },
  // A primary with fewer replicas connected than min-replicas-to-write refuses every write (NOREPLICAS): the
  // guard against an isolated old primary, which also stops a healthy one whose replicas are all gone.
  RedisPrimaryNotWritable: {
    expr: `(${max(I, 'quorum_redis_connected_replicas')} and on (${I}) ${max(I, 'quorum_redis_instance_role{role="primary"}')}) < on (${R}) group_left ${max(R, 'quorum_redis_min_replicas_to_write')}`,
    for: '1m',
    labels: { severity: 'critical' },
    summary: `The primary ${instance} refuses writes: {{ $value }} replicas connected, fewer than min-replicas-to-write`,
    description: `The primary ${instance} has had fewer replicas connected than spec.minReplicasToWrite for a minute, so it answers every write with NOREPLICAS. Bring a replica back (status.instances[] says which are down) or lower spec.minReplicasToWrite.`,
  },
  RedisSentinelsCannotFailOver: {
    expr: `${max(R, 'quorum_redis_sentinels_able_to_failover')} < ${max(R, 'quorum_redis_sentinel_quorum')} and ${max(R, 'quorum_redis_instances_desired')} > 1 and ${max(R, 'quorum_redis_available')} == 1`,
    for: '5m',
    labels: { severity: 'warning' },
    summary: `Only {{ $value }} Sentinels of ${who} could fail its primary over, fewer than the quorum`,
    description: `For 5 minutes too few Sentinels of ${who} name the primary, know the other Sentinels and see a replica to promote (status.sentinel.ableToFailOver below status.sentinel.quorum; Degraded, SentinelsCannotFailOver): if the primary failed now, nobody would take its place.`,
  },
  RedisReplicaLinkDown: {
    expr: `${max(I, 'quorum_redis_replica_link_up')} == 0`,
    for: '2m',
    labels: { severity: 'warning' },
    summary: `Replica ${instance} has lost its link to the primary`,
    description: `For 2 minutes the replica ${instance} has said master_link_status:down: it serves stale reads, counts for no write, and cannot be promoted by Sentinel.`,
  },
  RedisReplicationLagHigh: {
    expr: `${max(I, 'quorum_redis_replica_lag_bytes')} > ${LAG_BYTES_BOUND}`,
    for: '5m',
    labels: { severity: 'warning' },
    summary: `Replica ${instance} is {{ $value | humanize1024 }}B behind its primary`,
    description: `For 5 minutes the replica ${instance} has been more than 16 MiB of the replication stream behind its primary: a failover to it now would lose those writes, and reads from it are stale.`,
  },
  RedisMemoryNearMax: {
    expr: `${max(I, 'quorum_redis_memory_used_bytes')} / ${max(I, 'quorum_redis_memory_max_bytes > 0')} > 0.9`,
    for: '10m',
    labels: { severity: 'warning' },
    summary: `${instance} uses {{ $value | humanizePercentage }} of its maxmemory`,
    description: `For 10 minutes ${instance} has used more than 90 % of spec.maxmemory: at 100 % it evicts keys (spec.maxmemoryPolicy) or, with noeviction, refuses writes (OOM).`,
  },
  RedisEvictingKeys: {
    expr: `${max(I, 'increase(quorum_redis_evicted_keys[10m])')} > 0`,
    for: '15m',
    labels: { severity: 'warning' },
    summary: `${instance} keeps evicting keys for maxmemory`,
    description: `${instance} has evicted keys under spec.maxmemoryPolicy in every 10 minutes for a quarter of an hour ({{ $value }} in the last 10): expected of a cache sized below its data, data loss for anything else.`,
  },
  // Per schedule, against its own interval: an hourly schedule is behind long before a daily one. Before a
  // schedule's first success its age counts from its creation; no interval series while it is suspended or
  // invalid, so nothing is expected of it then.
  RedisBackupTooOld: {
    expr: `${scheduleAge} > ${BACKUP_MISSED_INTERVALS} * ${scheduleInterval} + ${BACKUP_AGE_GRACE_SECONDS}`,
    for: '10m',
    labels: { severity: 'warning' },
    summary: 'RedisBackupSchedule {{ $labels.namespace }}/{{ $labels.schedule }} has had no successful backup for {{ $value | humanizeDuration }}',
    description: `The newest successful backup of ${who} by schedule {{ $labels.schedule }} (or the schedule's creation, before its first) is older than ${BACKUP_MISSED_INTERVALS} of its intervals and ${BACKUP_AGE_GRACE_SECONDS / 60} minutes: see the schedule's status.lastFailure and its failed RedisBackups.`,
  },
  RedisBackupFailing: {
    expr: `${lastFailure} > ${lastSuccess} or ${lastFailure} unless ${lastSuccess}`,
    for: '0m',
    labels: { severity: 'warning' },
    summary: `The last RedisBackup of ${who} failed`,
    description: `A RedisBackup of ${who} failed for good after the newest successful one (or there is none): status.lastFailure of the failed RedisBackup gives the reason in the store's or Redis's words.`,
  },
  RedisRolloutHalted: {
    expr: `${max('namespace, redis, instance, reason', 'quorum_redis_rollout_halted')} == 1`,
    for: '0m',
    labels: { severity: 'warning' },
    summary: `The rolling update of ${who} halted at {{ $labels.instance }} ({{ $labels.reason }})`,
    description: 'No further pod is updated until spec changes (a rollback) or the redis.quorum.dev/retry-rollout annotation gets a new value; the RolloutHalted event and status.rollout.halted say what failed.',
  },
  RedisStepStalled: {
    expr: `${max('namespace, redis, step', 'quorum_redis_step_stalled')} == 1`,
    for: '1m',
    labels: { severity: 'warning' },
    summary: `The operator has been stuck on "{{ $labels.step }}" for ${who} past its bound`,
    description: "The step passed its bound (Degraded, StepStalled); the Progressing condition and status.step.lastError give the refusal in Redis's or Kubernetes' words.",
  },
};

export function alertRules(): Record<AlertName, AlertRule> {
  return Object.fromEntries(ALERTS.map((a) => [a, alertRule(a, SPECS[a], RUNBOOK_DOC)])) as Record<AlertName, AlertRule>;
}

export function ruleGroups(): RuleGroup[] {
  return [{ name: 'quorum-redis', rules: Object.values(alertRules()) }];
}

const HEADER = '# Generated by packages/redis-operator/scripts/generate.ts from src/monitoring/rules.ts; do not edit.\n';

export function rulesFileYAML(): string {
  return HEADER + stringify({ groups: ruleGroups() }, { lineWidth: 0 });
}

export function prometheusRule(): Record<string, unknown> {
  return prometheusRuleObject('quorum-redis', MONITORING_LABELS, ruleGroups());
}

export function prometheusRuleYAML(): string {
  return HEADER + stringify(prometheusRule(), { lineWidth: 0 });
}
