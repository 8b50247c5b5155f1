// The Grafana dashboard Quorum ships (deploy/monitoring/grafana-dashboard.json, written by scripts/generate.ts):
// one row per concern, for the clusters chosen by the namespace and cluster variables. Its queries use the
// series of operator/metrics.ts and etcd's own, as the jobs of monitoring/scrape.ts label them. The layout and
// the dashboard's frame are @quorum/kit's (the Redis operator's dashboard has them too).
import { dashboardPanels, dashboardVariable, grafanaDashboardConfigMapObject, grafanaDashboardObject } from '@quorum/kit';
import { ETCD_JOB, MONITORING_LABELS } from './scrape.ts';

const sel = 'namespace=~"$namespace", cluster=~"$cluster"';
const etcdSel = `job="${ETCD_JOB}", ${sel}`;

const byCluster = (metric: string): string => `max by (namespace, cluster) (${metric}{${sel}})`;

export function grafanaDashboard(): Record<string, unknown> {
  const panels = dashboardPanels([
    [
      'Clusters',
      [
        { title: 'Ready voting members / voting members', description: 'From each EtcdCluster status. At most a bare majority ready: EtcdQuorumAtRisk.', queries: [[byCluster('quorum_etcdcluster_ready_voting_members'), '{{namespace}}/{{cluster}} ready'], [byCluster('quorum_etcdcluster_voting_members'), '{{namespace}}/{{cluster}} voting']] },
        { title: 'Has a leader', description: 'Status (the operator) and etcd itself (max over members).', queries: [[byCluster('quorum_etcdcluster_has_leader'), '{{namespace}}/{{cluster}} status'], [`max by (namespace, cluster) (etcd_server_has_leader{${etcdSel}})`, '{{namespace}}/{{cluster}} etcd']] },
        { title: 'Leader changes (1h)', description: 'The leader named in status changing, and the changes each member saw.', queries: [[`max by (namespace, cluster) (increase(quorum_etcdcluster_leader_changes_total{${sel}}[1h]))`, '{{namespace}}/{{cluster}} status'], [`max by (namespace, cluster) (increase(etcd_server_leader_changes_seen_total{${etcdSel}}[1h]))`, '{{namespace}}/{{cluster}} etcd']] },
        { title: 'Member ready', description: 'Per member, from status.', queries: [[`max by (namespace, cluster, member) (quorum_etcdcluster_member_ready{${sel}})`, '{{member}}']] },
        { title: 'etcd container restarts (1h)', description: 'Restarts of each member pod\'s etcd container; 1 while it waits in CrashLoopBackOff.', queries: [[`max by (namespace, cluster, member) (increase(quorum_etcdcluster_member_container_restarts{${sel}}[1h]))`, '{{member}} restarts'], [`max by (namespace, cluster, member) (quorum_etcdcluster_member_crash_looping{${sel}})`, '{{member}} CrashLoopBackOff']] },
        { title: 'Database size / quota', description: 'etcd_mvcc_db_total_size_in_bytes over etcd_server_quota_backend_bytes; above 80 %: EtcdDatabaseNearQuota.', unit: 'percentunit', queries: [[`etcd_mvcc_db_total_size_in_bytes{${etcdSel}} / etcd_server_quota_backend_bytes{${etcdSel}}`, '{{member}}']] },
      ],
    ],
    [
      'etcd',
      [
        { title: 'Proposals committed / s', description: 'Raft proposals committed, per member.', queries: [[`rate(etcd_server_proposals_committed_total{${etcdSel}}[2m])`, '{{member}}']] },
        { title: 'Failed proposals / s', description: 'Proposals that failed (a leader election, or no quorum).', queries: [[`rate(etcd_server_proposals_failed_total{${etcdSel}}[2m])`, '{{member}}']] },
        { title: 'WAL fsync p99', description: 'Slow disks show here first.', unit: 's', queries: [[`histogram_quantile(0.99, sum by (member, le) (rate(etcd_disk_wal_fsync_duration_seconds_bucket{${etcdSel}}[5m])))`, '{{member}}']] },
        { title: 'Backend commit p99', description: 'bbolt commits.', unit: 's', queries: [[`histogram_quantile(0.99, sum by (member, le) (rate(etcd_disk_backend_commit_duration_seconds_bucket{${etcdSel}}[5m])))`, '{{member}}']] },
        { title: 'Peer round trip p99', description: 'Between members.', unit: 's', queries: [[`histogram_quantile(0.99, sum by (member, le) (rate(etcd_network_peer_round_trip_time_seconds_bucket{${etcdSel}}[5m])))`, '{{member}}']] },
        { title: 'Client gRPC received / s', description: 'Bytes received from clients.', unit: 'Bps', queries: [[`rate(etcd_network_client_grpc_received_bytes_total{${etcdSel}}[2m])`, '{{member}}']] },
      ],
    ],
    [
      'Operator',
      [
        { title: 'Step under way: age', description: 'status.step: how long the current step has lasted; EtcdStepStalled once it passes its bound.', unit: 's', queries: [[`max by (namespace, cluster, step) (quorum_etcdcluster_step_age_seconds{${sel}})`, '{{cluster}}: {{step}}']] },
        { title: 'Step retries / s', description: 'A wait that repeats or a refused action, by step kind and reason.', queries: [[`max by (step, reason) (rate(quorum_etcdcluster_step_retries_total[5m]))`, '{{step}} {{reason}}']] },
        { title: 'Finished step durations p90', description: 'By step kind, from status updates.', unit: 's', queries: [[`histogram_quantile(0.9, max by (step, le) (rate(quorum_etcdcluster_step_duration_seconds_bucket{${sel}}[30m])))`, '{{step}}']] },
        { title: 'Rolling update: updated / members', description: 'status.updatedReplicas over the member list while a rollout is recorded; halted rollouts below.', queries: [[byCluster('quorum_etcdcluster_updated_members'), '{{namespace}}/{{cluster}} updated'], [byCluster('quorum_etcdcluster_members'), '{{namespace}}/{{cluster}} members'], [byCluster('quorum_etcdcluster_rollout_in_progress'), '{{namespace}}/{{cluster}} in progress']] },
        { title: 'Rolling updates halted', description: 'By member and reason (status.rollout.halted).', type: 'stat', queries: [[`max by (namespace, cluster, member, reason) (quorum_etcdcluster_rollout_halted{${sel}})`, '{{cluster}} at {{member}}: {{reason}}']] },
        { title: 'Reconcile errors / s', description: 'The controller runtime\'s.', queries: [['sum by (controller) (rate(controller_runtime_reconcile_errors_total[5m]))', '{{controller}}']] },
      ],
    ],
    [
      'Backups',
      [
        { title: 'Age of the last successful backup', description: 'Per cluster (the newest Succeeded EtcdBackup).', unit: 's', queries: [[`time() - max by (namespace, cluster) (quorum_backup_last_success_timestamp_seconds{${sel}})`, '{{namespace}}/{{cluster}}']] },
        { title: 'Last backup size', description: 'Stored snapshot bytes.', unit: 'bytes', queries: [[byCluster('quorum_backup_last_size_bytes'), '{{namespace}}/{{cluster}}']] },
        { title: 'Last backup duration', description: 'From the backup Job created to the snapshot stored.', unit: 's', queries: [[byCluster('quorum_backup_last_duration_seconds'), '{{namespace}}/{{cluster}}']] },
        { title: 'Schedules: age of the last success / interval', description: 'Above 2: EtcdBackupTooOld.', queries: [[`(time() - max by (namespace, schedule, cluster) (quorum_backup_schedule_last_success_timestamp_seconds{${sel}} or quorum_backup_schedule_created_timestamp_seconds{${sel}})) / max by (namespace, schedule, cluster) (quorum_backup_schedule_interval_seconds{${sel}})`, '{{namespace}}/{{schedule}}']] },
        { title: 'Backup failures (1h)', description: 'By reason.', queries: [[`max by (namespace, cluster, reason) (increase(quorum_backup_failures_total{${sel}}[1h]))`, '{{cluster}} {{reason}}']] },
        { title: 'Scheduled times skipped (1h)', description: 'Forbid, Suspended, Missed.', queries: [[`max by (namespace, schedule, reason) (increase(quorum_backup_schedule_skipped_total{${sel}}[1h]))`, '{{schedule}} {{reason}}']] },
      ],
    ],
  ]);
  return grafanaDashboardObject({
    title: 'Quorum etcd clusters',
    uid: 'quorum-etcd',
    description: 'etcd clusters run by the Quorum operator: membership, leader, etcd itself, the operator\'s steps and rollouts, and backups. Generated from packages/etcd-operator/src/monitoring/dashboard.ts.',
    tags: ['etcd', 'quorum'],
    variables: [
      dashboardVariable('namespace', 'Namespace', 'label_values(quorum_etcdcluster_members, namespace)'),
      dashboardVariable('cluster', 'Cluster', 'label_values(quorum_etcdcluster_members{namespace=~"$namespace"}, cluster)'),
    ],
    panels,
  });
}

/** The dashboard as deploy/monitoring/grafana-dashboard.json holds it. */
export function grafanaDashboardJSON(): string {
  return `${JSON.stringify(grafanaDashboard(), null, 2)}\n`;
}

/** The dashboard's key in its ConfigMap: the Grafana sidecar writes each key to a file of that name. */
export const DASHBOARD_CONFIG_MAP_KEY = 'quorum-etcd.json';

/**
 * The dashboard as a ConfigMap for the Grafana chart's dashboard sidecar (the Helm chart's
 * monitoring.grafanaDashboard), which loads every ConfigMap labelled with its `sidecar.dashboards.label`:
 * `grafana_dashboard` by default, with the value "1" that kube-prometheus-stack gives it.
 */
export function grafanaDashboardConfigMap(): Record<string, unknown> {
  return grafanaDashboardConfigMapObject('quorum-grafana-dashboard', MONITORING_LABELS, DASHBOARD_CONFIG_MAP_KEY, grafanaDashboardJSON());
}
