// The alerts Quorum ships, written once here and generated as a PrometheusRule (monitoring.coreos.com/v1, for
// the prometheus-operator) and as a plain rules file (what Prometheus's rule_files and promtool read), by
// scripts/generate.ts into deploy/monitoring/. test/unit/monitoring-rules.test.ts runs promtool's checks and
// a unit test per alert on the generated file.
//
// The operator's series come from every replica (operator/metrics.ts), so each expression takes
// `max by (namespace, cluster, …)` of them: one alert per cluster whatever the number of replicas. etcd's
// own series carry the same `namespace` and `cluster` labels (monitoring/scrape.ts), and `cluster!=""`
// keeps out etcd scraped for other purposes (the API server's own, say).
import { alertRule, prometheusRuleObject, type AlertRule, type AlertSpec, type RuleGroup } from '@quorum/kit';
import { stringify } from 'yaml';
import { MONITORING_LABELS } from './scrape.ts';

export type { AlertRule, RuleGroup } from '@quorum/kit';

/** Where each alert's runbook is: a section of docs/monitoring.md named after the alert. */
export const RUNBOOK_DOC = 'docs/monitoring.md';

const byCluster = 'namespace, cluster';
const readyVoters = `max by (${byCluster}) (quorum_etcdcluster_ready_voting_members)`;
const voters = `max by (${byCluster}) (quorum_etcdcluster_voting_members)`;

const rule = (alert: string, spec: AlertSpec): AlertRule => alertRule(alert, spec, RUNBOOK_DOC);

/** The alert names, in the order docs/monitoring.md lists them. */
export const ALERTS = [
  'EtcdNoLeader',
  'EtcdQuorumAtRisk',
  'EtcdMemberDown',
  'EtcdMemberCrashLooping',
  'EtcdDatabaseNearQuota',
  'EtcdBackupTooOld',
  'EtcdUpgradeHalted',
  'EtcdStepStalled',
] as const;
export type AlertName = (typeof ALERTS)[number];

export function alertRules(): Record<AlertName, AlertRule> {
  return {
    // Either voice suffices: the operator's status (it names no leader once no quorum answers) or any member
    // that answers its scrape. A member cut off alone says it has no leader while the rest have one: max.
    EtcdNoLeader: rule('EtcdNoLeader', {
      expr: `max by (${byCluster}) (quorum_etcdcluster_has_leader) == 0 or max by (${byCluster}) (etcd_server_has_leader{cluster!=""}) == 0`,
      for: '1m',
      labels: { severity: 'critical' },
      summary: 'etcd cluster {{ $labels.namespace }}/{{ $labels.cluster }} has no leader',
      description: 'No member of {{ $labels.namespace }}/{{ $labels.cluster }} has had a raft leader for a minute: the cluster accepts no writes and no linearizable reads.',
    }),
    // One more failure would lose the quorum (or it is lost): ready voters are at most a bare majority and
    // fewer than all. A one- or two-member cluster never tolerates a failure, so it is not reported while
    // every member is ready.
    EtcdQuorumAtRisk: rule('EtcdQuorumAtRisk', {
      expr: `${readyVoters} < ${voters} and ${readyVoters} <= floor(${voters} / 2) + 1`,
      for: '2m',
      labels: { severity: 'critical' },
      summary: 'etcd cluster {{ $labels.namespace }}/{{ $labels.cluster }}: one more member failure loses the quorum, or it is lost',
      description: 'Only {{ $value }} voting members of {{ $labels.namespace }}/{{ $labels.cluster }} are ready, which is at most a bare majority: the next failure stops the cluster (below a majority, it has stopped).',
    }),
    EtcdMemberDown: rule('EtcdMemberDown', {
      expr: `max by (${byCluster}, member) (quorum_etcdcluster_member_ready) == 0`,
      for: '5m',
      labels: { severity: 'warning' },
      summary: 'etcd member {{ $labels.member }} of {{ $labels.namespace }}/{{ $labels.cluster }} has not been ready for 5 minutes',
      description: 'The operator has seen member {{ $labels.member }} not ready for more than 5 minutes; see the cluster\'s Degraded and Progressing conditions for why.',
    }),
    EtcdMemberCrashLooping: rule('EtcdMemberCrashLooping', {
      expr: `max by (${byCluster}, member) (max_over_time(quorum_etcdcluster_member_crash_looping[5m])) >= 1`,
      for: '5m',
      labels: { severity: 'warning' },
      summary: 'etcd member {{ $labels.member }} of {{ $labels.namespace }}/{{ $labels.cluster }} is crash-looping',
      description: "The etcd container of {{ $labels.member }} has kept going back to CrashLoopBackOff for 5 minutes; status.members[].lastError has etcd's last words.",
    }),
    EtcdDatabaseNearQuota: rule('EtcdDatabaseNearQuota', {
      expr: `max by (${byCluster}, member) (etcd_mvcc_db_total_size_in_bytes{cluster!=""}) / max by (${byCluster}, member) (etcd_server_quota_backend_bytes{cluster!=""}) > 0.8`,
      for: '10m',
      labels: { severity: 'warning' },
      summary: 'etcd member {{ $labels.member }} of {{ $labels.namespace }}/{{ $labels.cluster }} uses {{ $value | humanizePercentage }} of its quota',
      description: 'The backend database of {{ $labels.member }} is above 80 % of its quota (spec.etcd.quotaBackendBytes); at 100 % etcd raises NOSPACE and refuses writes. Compact and defragment, or raise the quota.',
    }),
    // Before a schedule's first success, its age counts from its creation. No interval series while it is
    // suspended, so a suspended schedule is not reported.
    EtcdBackupTooOld: rule('EtcdBackupTooOld', {
      expr:
        'time() - max by (namespace, schedule, cluster) (quorum_backup_schedule_last_success_timestamp_seconds or quorum_backup_schedule_created_timestamp_seconds)' +
        ' > 2 * max by (namespace, schedule, cluster) (quorum_backup_schedule_interval_seconds)',
      for: '5m',
      labels: { severity: 'warning' },
      summary: 'EtcdBackupSchedule {{ $labels.namespace }}/{{ $labels.schedule }} has had no successful backup for 2 of its intervals',
      description: 'The newest successful backup of {{ $labels.namespace }}/{{ $labels.cluster }} by schedule {{ $labels.schedule }} is {{ $value | humanizeDuration }} old, more than twice its schedule interval; see its lastFailure and the failed EtcdBackups.',
    }),
    EtcdUpgradeHalted: rule('EtcdUpgradeHalted', {
      expr: `max by (${byCluster}, member, reason) (quorum_etcdcluster_rollout_halted) == 1`,
      for: '0m',
      labels: { severity: 'warning' },
      summary: 'The rolling update of {{ $labels.namespace }}/{{ $labels.cluster }} halted at {{ $labels.member }} ({{ $labels.reason }})',
      description: 'No further member is updated until spec changes (a rollback) or the etcd.quorum.dev/retry-rollout annotation gets a new value; status.rollout.halted.message says what failed.',
    }),
    EtcdStepStalled: rule('EtcdStepStalled', {
      expr: `max by (${byCluster}, step) (quorum_etcdcluster_step_stalled) == 1`,
      for: '1m',
      labels: { severity: 'warning' },
      summary: 'The operator has been stuck on "{{ $labels.step }}" for {{ $labels.namespace }}/{{ $labels.cluster }} past its bound',
      description: "The step passed its bound (Degraded, StepStalled); the Progressing condition and status.step.lastError give the refusal in etcd's or Kubernetes' words.",
    }),
  };
}

export function ruleGroups(): RuleGroup[] {
  return [{ name: 'quorum-etcd', rules: Object.values(alertRules()) }];
}

const HEADER = '# Generated by packages/etcd-operator/scripts/generate.ts from src/monitoring/rules.ts; do not edit.\n';

/** The plain rules file, for Prometheus's rule_files and promtool. */
export function rulesFileYAML(): string {
  return HEADER + stringify({ groups: ruleGroups() }, { lineWidth: 0 });
}

/** The same groups as a PrometheusRule, for the prometheus-operator (also the Helm chart's, src/deploy/helm.ts). */
export function prometheusRule(): Record<string, unknown> {
  return prometheusRuleObject('quorum-etcd', MONITORING_LABELS, ruleGroups());
}

export function prometheusRuleYAML(): string {
  return HEADER + stringify(prometheusRule(), { lineWidth: 0 });
}
