// The Grafana dashboard of the Redis operator (deploy/monitoring/quorum-redis-dashboard.json, written by
// scripts/generate.ts): one row per concern, for the Redises chosen by the namespace and redis variables, over
// the series of operator/metrics.ts. Laid out by @quorum/kit's dashboardPanels, as the etcd dashboard.
import { dashboardPanels, dashboardVariable, grafanaDashboardConfigMapObject, grafanaDashboardObject } from '@quorum/kit';
import { LAG_BYTES_BOUND } from './rules.ts';
import { MONITORING_LABELS } from './scrape.ts';

const sel = 'namespace=~"$namespace", redis=~"$redis"';
const byRedis = (metric: string): string => `max by (namespace, redis) (${metric}{${sel}})`;
const byInstance = (metric: string): string => `max by (namespace, redis, instance) (${metric}{${sel}})`;

export function grafanaDashboard(): Record<string, unknown> {
  const panels = dashboardPanels([
    [
      'Instances',
      [
        { title: 'Ready instances / desired', description: 'Instances whose pod is Ready, and the primary plus spec.replicas.', queries: [[byRedis('quorum_redis_instances_ready'), '{{namespace}}/{{redis}} ready'], [byRedis('quorum_redis_instances_desired'), '{{namespace}}/{{redis}} desired']] },
        { title: 'Available', description: 'A primary accepts writes through the <name> Service. 0 for a minute: RedisPrimaryMissing.', type: 'stat', queries: [[byRedis('quorum_redis_available'), '{{namespace}}/{{redis}}']] },
        { title: 'Role per instance', description: 'What each instance answered to ROLE; a change of primary shows as two instances swapping.', type: 'stat', queries: [[`max by (namespace, redis, instance, role) (quorum_redis_instance_role{${sel}})`, '{{redis}} {{instance}}: {{role}}']] },
        { title: 'Replication lag', description: `Bytes of the replication stream each replica is behind; above ${LAG_BYTES_BOUND / 1024 / 1024} MiB for 5 minutes: RedisReplicationLagHigh.`, unit: 'bytes', queries: [[byInstance('quorum_redis_replica_lag_bytes'), '{{redis}} {{instance}}']] },
        { title: 'Replica link up', description: "Each replica's master_link_status; 0 for 2 minutes: RedisReplicaLinkDown.", queries: [[byInstance('quorum_redis_replica_link_up'), '{{redis}} {{instance}}']] },
        { title: 'Connected replicas / min-replicas-to-write', description: 'Replicas connected to each instance (the primary has them), and the bound under which the primary refuses writes: RedisPrimaryNotWritable.', queries: [[byInstance('quorum_redis_connected_replicas'), '{{redis}} {{instance}}'], [byRedis('quorum_redis_min_replicas_to_write'), '{{redis}} min-replicas-to-write']] },
      ],
    ],
    [
      'Memory',
      [
        { title: 'Used memory', description: 'used_memory of each instance.', unit: 'bytes', queries: [[byInstance('quorum_redis_memory_used_bytes'), '{{redis}} {{instance}}']] },
        { title: 'Used / maxmemory', description: 'For instances with a maxmemory; above 90 % for 10 minutes: RedisMemoryNearMax.', unit: 'percentunit', queries: [[`${byInstance('quorum_redis_memory_used_bytes')} / ${byInstance('quorum_redis_memory_max_bytes')} > 0`, '{{redis}} {{instance}}']] },
        { title: 'Evicted keys / s', description: 'Keys evicted for maxmemory under spec.maxmemoryPolicy; sustained: RedisEvictingKeys.', queries: [[`max by (namespace, redis, instance) (rate(quorum_redis_evicted_keys{${sel}}[5m]))`, '{{redis}} {{instance}}']] },
      ],
    ],
    [
      'Sentinels',
      [
        { title: 'Sentinels reporting, agreeing, able to fail over', description: 'status.sentinel; able to fail over below the quorum: RedisSentinelsCannotFailOver.', queries: [[byRedis('quorum_redis_sentinels_reporting'), '{{redis}} reporting'], [byRedis('quorum_redis_sentinels_agreeing'), '{{redis}} agreeing'], [byRedis('quorum_redis_sentinels_able_to_failover'), '{{redis}} able to fail over'], [byRedis('quorum_redis_sentinel_quorum'), '{{redis}} quorum']] },
        { title: 'Sentinel failovers (1h)', description: 'Changes of the primary the Sentinels name, as the operator saw them (planned failovers included).', queries: [[`max by (namespace, redis) (increase(quorum_redis_sentinel_failovers_total{${sel}}[1h]))`, '{{namespace}}/{{redis}}']] },
      ],
    ],
    [
      'Operator',
      [
        { title: 'Step under way: age', description: 'status.step; RedisStepStalled once it passes its bound.', unit: 's', queries: [[`max by (namespace, redis, step) (quorum_redis_step_age_seconds{${sel}})`, '{{redis}}: {{step}}']] },
        { title: 'Rolling update: updated / pods', description: 'status.rollout while one is under way; halted below.', queries: [[byRedis('quorum_redis_rollout_updated_pods'), '{{redis}} updated'], [byRedis('quorum_redis_rollout_pods'), '{{redis}} pods']] },
        { title: 'Rolling updates halted', description: 'By pod and reason (status.rollout.halted): RedisRolloutHalted.', type: 'stat', queries: [[`max by (namespace, redis, instance, reason) (quorum_redis_rollout_halted{${sel}})`, '{{redis}} at {{instance}}: {{reason}}']] },
      ],
    ],
    [
      'Backups',
      [
        { title: 'Age of the last successful backup', description: 'Per Redis, the newest Succeeded RedisBackup.', unit: 's', queries: [[`time() - ${byRedis('quorum_redis_backup_last_success_timestamp_seconds')}`, '{{namespace}}/{{redis}}']] },
        {
          title: 'Schedules: age of the last success / interval',
          description: 'Per RedisBackupSchedule (its creation before the first success); above 2 and 30 minutes: RedisBackupTooOld.',
          queries: [[`(time() - max by (namespace, schedule, redis) (quorum_redis_backup_schedule_last_success_timestamp_seconds{${sel}} or quorum_redis_backup_schedule_created_timestamp_seconds{${sel}})) / max by (namespace, schedule, redis) (quorum_redis_backup_schedule_interval_seconds{${sel}})`, '{{namespace}}/{{schedule}}']],
        },
        { title: 'Schedules: backups kept', description: 'RedisBackups of each schedule not yet deleted by retention, by phase.', queries: [[`max by (namespace, schedule, phase) (quorum_redis_backup_schedule_backups{${sel}})`, '{{schedule}} {{phase}}']] },
        { title: 'Backup attempts failed (1h)', description: 'Each attempt retried within its bound, by reason; a RedisBackup failed for good: RedisBackupFailing.', queries: [[`max by (namespace, redis, reason) (increase(quorum_redis_backup_attempt_failures_total{${sel}}[1h]))`, '{{redis}} {{reason}}']] },
      ],
    ],
  ]);
  return grafanaDashboardObject({
    title: 'Quorum Redis',
    uid: 'quorum-redis',
    description: 'Redis and Valkey run by the Quorum Redis operator: instances and their roles, replication, memory, Sentinels, the operator\'s steps and rollouts, and backups. Generated from packages/redis-operator/src/monitoring/dashboard.ts.',
    tags: ['redis', 'quorum'],
    variables: [
      dashboardVariable('namespace', 'Namespace', 'label_values(quorum_redis_instances_desired, namespace)'),
      dashboardVariable('redis', 'Redis', 'label_values(quorum_redis_instances_desired{namespace=~"$namespace"}, redis)'),
    ],
    panels,
  });
}

export function grafanaDashboardJSON(): string {
  return `${JSON.stringify(grafanaDashboard(), null, 2)}\n`;
}

/** The dashboard as a ConfigMap for the Grafana chart's dashboard sidecar (the Helm chart's monitoring.grafanaDashboard). */
export function grafanaDashboardConfigMap(): Record<string, unknown> {
  return grafanaDashboardConfigMapObject('quorum-redis-grafana-dashboard', MONITORING_LABELS, 'quorum-redis.json', grafanaDashboardJSON());
}
