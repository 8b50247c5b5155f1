// The shipped alert rules, checked by the real promtool (Prometheus v0.316.0, built from tools/prometheus on
// first use: minutes on a cold cache): `promtool check rules` on deploy/monitoring/quorum-rules.yml, `promtool
// check config` on a Prometheus config made of the shipped scrape configs and rules, and `promtool test rules`
// with cases per alert, each showing the alert firing and not firing. The committed files of
// deploy/monitoring/ are what the generator writes, and the PrometheusRule holds the same groups.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { renderAlertTemplate } from '@quorum/kit';
import { prometheusBinaries } from '@quorum/localkube';
import { parse, stringify } from 'yaml';
import { MONITORING_DIR, monitoringFiles, PROMETHEUS_RULE_FILE, RULES_FILE, SCRAPE_CONFIGS_FILE } from '../../src/monitoring/files.ts';
import { alertRules, ALERTS, type AlertName, type AlertRule } from '../../src/monitoring/rules.ts';
import { ETCD_JOB, OPERATOR_JOB } from '../../src/monitoring/scrape.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..', '..', '..', '..');
const rulesFile = join(repoRoot, MONITORING_DIR, RULES_FILE);

let promtool = '';
let work = '';

before(async () => {
  promtool = (await prometheusBinaries()).promtool;
  work = await mkdtemp(join(tmpdir(), 'quorum-promtool-'));
});
after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
});

async function promtoolRun(args: string[]): Promise<string> {
  try {
    const { stdout, stderr } = await run(promtool, args, { cwd: work });
    return stdout + stderr;
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string; message: string };
    assert.fail(`promtool ${args.join(' ')} failed:\n${e.stdout ?? ''}${e.stderr ?? e.message}`);
  }
}

test('deploy/monitoring/ is what the generator writes (npm run generate in packages/etcd-operator after a change)', async () => {
  for (const [file, content] of Object.entries(monitoringFiles())) {
    assert.equal(await readFile(join(repoRoot, MONITORING_DIR, file), 'utf8'), content, `${MONITORING_DIR}/${file} is stale: run bash scripts/node24 packages/etcd-operator/scripts/generate.ts`);
  }
});

test('the PrometheusRule holds exactly the groups of the plain rules file', async () => {
  const plain = parse(await readFile(rulesFile, 'utf8')) as { groups: unknown };
  const crd = parse(await readFile(join(repoRoot, MONITORING_DIR, PROMETHEUS_RULE_FILE), 'utf8')) as { apiVersion: string; kind: string; spec: { groups: unknown } };
  assert.equal(crd.apiVersion, 'monitoring.coreos.com/v1');
  assert.equal(crd.kind, 'PrometheusRule');
  assert.deepEqual(crd.spec.groups, plain.groups);
});

test('promtool check rules: the shipped rules file', async () => {
  const out = await promtoolRun(['check', 'rules', rulesFile]);
  assert.match(out, new RegExp(`SUCCESS: ${ALERTS.length} rules found`));
});

test('promtool check config: a Prometheus config of the shipped scrape configs and rules', async () => {
  const scrape = parse(await readFile(join(repoRoot, MONITORING_DIR, SCRAPE_CONFIGS_FILE), 'utf8')) as { scrape_configs: { authorization?: { credentials_file: string } }[] };
  // promtool checks that the token file exists: the pod's service account token, which this machine has not.
  const token = join(work, 'token');
  await writeFile(token, 'token');
  const withToken = scrape.scrape_configs.filter((c) => c.authorization);
  assert.deepEqual(withToken.map((c) => c.authorization!.credentials_file), ['/var/run/secrets/kubernetes.io/serviceaccount/token'], "the operator's job sends the service account's token");
  for (const c of withToken) c.authorization!.credentials_file = token;
  const config = join(work, 'prometheus.yml');
  await writeFile(config, stringify({ global: { scrape_interval: '15s' }, rule_files: [rulesFile], scrape_configs: scrape.scrape_configs }));
  const out = await promtoolRun(['check', 'config', config]);
  assert.match(out, /SUCCESS: .*prometheus\.yml is valid prometheus config file syntax/);
});

// ---- promtool test rules, per alert ----

type Labels = Record<string, string>;

interface Case {
  /** What the case shows, named in promtool's output on failure. */
  name: string;
  /** `metric{labels}` → promtool's expanding notation, e.g. `1 0x10`, one sample per 30 s. */
  series: [series: string, values: string][];
  evalTime: string;
  /** The alert's labels beyond its own (severity) and its value, when it fires at evalTime; undefined: it does not. */
  fires?: { labels: Labels; value: number };
}

const sel = (labels: Labels): string => `{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}`;
const op = (replica: number, labels: Labels): string => sel({ job: OPERATOR_JOB, pod: `quorum-etcd-operator-${replica}`, operator_namespace: 'quorum-system', ...labels });
const etcd = (member: string, labels: Labels = {}): string => sel({ job: ETCD_JOB, namespace: 'ns', cluster: 'c', member, pod: member, ...labels });
const C = { namespace: 'ns', cluster: 'c' };

function expected(rule: AlertRule, fires: NonNullable<Case['fires']>): Record<string, unknown> {
  const labels = { ...rule.labels, ...fires.labels };
  return {
    exp_labels: labels,
    exp_annotations: Object.fromEntries(Object.entries(rule.annotations).map(([k, v]) => [k, renderAlertTemplate(v, labels, fires.value)])),
  };
}

const CASES: Record<AlertName, Case[]> = {
  EtcdNoLeader: [
    {
      name: 'fires: status names no leader for over a minute (both operator replicas say so)',
      series: [[`quorum_etcdcluster_has_leader${op(0, C)}`, '1 0x10'], [`quorum_etcdcluster_has_leader${op(1, C)}`, '1 0x10']],
      evalTime: '3m',
      fires: { labels: C, value: 0 },
    },
    {
      name: 'fires: every member that answers says it has no leader, while status still names one',
      series: [[`quorum_etcdcluster_has_leader${op(0, C)}`, '1x10'], [`etcd_server_has_leader${etcd('c-0')}`, '1 0x10'], [`etcd_server_has_leader${etcd('c-1')}`, '1 0x10']],
      evalTime: '3m',
      fires: { labels: C, value: 0 },
    },
    {
      name: 'does not fire: one member cut off alone has no leader, the others have one',
      series: [[`quorum_etcdcluster_has_leader${op(0, C)}`, '1x10'], [`etcd_server_has_leader${etcd('c-0')}`, '0x10'], [`etcd_server_has_leader${etcd('c-1')}`, '1x10']],
      evalTime: '3m',
    },
    {
      name: 'does not fire: an election of 30 s',
      series: [[`quorum_etcdcluster_has_leader${op(0, C)}`, '1 1 1 0 1x6']],
      evalTime: '3m',
    },
  ],
  EtcdQuorumAtRisk: [
    {
      name: 'fires: 2 of 3 voting members ready for over 2 minutes',
      series: [[`quorum_etcdcluster_voting_members${op(0, C)}`, '3x10'], [`quorum_etcdcluster_ready_voting_members${op(0, C)}`, '2x10']],
      evalTime: '3m',
      fires: { labels: C, value: 2 },
    },
    {
      name: 'fires: the quorum is lost (1 of 3 ready)',
      series: [[`quorum_etcdcluster_voting_members${op(0, C)}`, '3x10'], [`quorum_etcdcluster_ready_voting_members${op(0, C)}`, '1x10'], [`quorum_etcdcluster_ready_voting_members${op(1, C)}`, '1x10']],
      evalTime: '3m',
      fires: { labels: C, value: 1 },
    },
    {
      name: 'does not fire: 4 of 5 ready (one more failure still leaves a majority)',
      series: [[`quorum_etcdcluster_voting_members${op(0, C)}`, '5x10'], [`quorum_etcdcluster_ready_voting_members${op(0, C)}`, '4x10']],
      evalTime: '3m',
    },
    {
      name: 'does not fire: a single-member cluster with its member ready',
      series: [[`quorum_etcdcluster_voting_members${op(0, C)}`, '1x10'], [`quorum_etcdcluster_ready_voting_members${op(0, C)}`, '1x10']],
      evalTime: '3m',
    },
    {
      name: 'does not fire: a member restarted for a minute during a rolling update',
      series: [[`quorum_etcdcluster_voting_members${op(0, C)}`, '3x10'], [`quorum_etcdcluster_ready_voting_members${op(0, C)}`, '3 2 2 2 3x6']],
      evalTime: '3m',
    },
  ],
  EtcdMemberDown: [
    {
      name: 'fires: a member not ready for over 5 minutes',
      series: [[`quorum_etcdcluster_member_ready${op(0, { ...C, member: 'c-1' })}`, '1 0x20'], [`quorum_etcdcluster_member_ready${op(0, { ...C, member: 'c-0' })}`, '1x20']],
      evalTime: '7m',
      fires: { labels: { ...C, member: 'c-1' }, value: 0 },
    },
    {
      name: 'does not fire: not ready for 4 minutes, then ready',
      series: [[`quorum_etcdcluster_member_ready${op(0, { ...C, member: 'c-1' })}`, '1 0x8 1x12']],
      evalTime: '7m',
    },
  ],
  EtcdMemberCrashLooping: [
    {
      name: 'fires: CrashLoopBackOff again and again for 10 minutes',
      series: [[`quorum_etcdcluster_member_crash_looping${op(0, { ...C, member: 'c-2' })}`, '0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1 0 1']],
      evalTime: '11m',
      fires: { labels: { ...C, member: 'c-2' }, value: 1 },
    },
    {
      name: 'does not fire: one back-off 10 minutes ago, running since',
      series: [[`quorum_etcdcluster_member_crash_looping${op(0, { ...C, member: 'c-2' })}`, '1 0x23']],
      evalTime: '11m',
    },
  ],
  EtcdDatabaseNearQuota: [
    {
      name: 'fires: 90 % of the quota for over 10 minutes',
      series: [[`etcd_mvcc_db_total_size_in_bytes${etcd('c-0')}`, '1800x30'], [`etcd_server_quota_backend_bytes${etcd('c-0')}`, '2000x30'], [`etcd_mvcc_db_total_size_in_bytes${etcd('c-1')}`, '1000x30'], [`etcd_server_quota_backend_bytes${etcd('c-1')}`, '2000x30']],
      evalTime: '11m',
      fires: { labels: { ...C, member: 'c-0' }, value: 0.9 },
    },
    {
      name: 'does not fire: 50 % of the quota; nor an etcd scraped without a cluster label',
      series: [[`etcd_mvcc_db_total_size_in_bytes${etcd('c-0')}`, '1000x30'], [`etcd_server_quota_backend_bytes${etcd('c-0')}`, '2000x30'], ['etcd_mvcc_db_total_size_in_bytes{job="apiserver-etcd"}', '1900x30'], ['etcd_server_quota_backend_bytes{job="apiserver-etcd"}', '2000x30']],
      evalTime: '11m',
    },
  ],
  EtcdBackupTooOld: [
    {
      name: 'fires: an hourly schedule whose last success is 3 hours old',
      series: [[`quorum_backup_schedule_interval_seconds${op(0, { ...C, schedule: 'hourly' })}`, '3600x400'], [`quorum_backup_schedule_created_timestamp_seconds${op(0, { ...C, schedule: 'hourly' })}`, '0x400'], [`quorum_backup_schedule_last_success_timestamp_seconds${op(0, { ...C, schedule: 'hourly' })}`, '0x400']],
      evalTime: '3h',
      fires: { labels: { ...C, schedule: 'hourly' }, value: 10800 },
    },
    {
      name: 'fires: a schedule that never succeeded, counted from its creation (a follower replica has only the creation)',
      series: [[`quorum_backup_schedule_interval_seconds${op(1, { ...C, schedule: 'hourly' })}`, '3600x400'], [`quorum_backup_schedule_created_timestamp_seconds${op(1, { ...C, schedule: 'hourly' })}`, '0x400']],
      evalTime: '3h',
      fires: { labels: { ...C, schedule: 'hourly' }, value: 10800 },
    },
    {
      name: 'does not fire: successes keep coming (the leader has them; a follower only the creation)',
      series: [
        [`quorum_backup_schedule_interval_seconds${op(0, { ...C, schedule: 'hourly' })}`, '3600x400'],
        [`quorum_backup_schedule_created_timestamp_seconds${op(0, { ...C, schedule: 'hourly' })}`, '0x400'],
        [`quorum_backup_schedule_last_success_timestamp_seconds${op(0, { ...C, schedule: 'hourly' })}`, '0+30x400'],
        [`quorum_backup_schedule_interval_seconds${op(1, { ...C, schedule: 'hourly' })}`, '3600x400'],
        [`quorum_backup_schedule_created_timestamp_seconds${op(1, { ...C, schedule: 'hourly' })}`, '0x400'],
      ],
      evalTime: '3h',
    },
    {
      name: 'does not fire: a suspended schedule (no interval series)',
      series: [[`quorum_backup_schedule_created_timestamp_seconds${op(0, { ...C, schedule: 'hourly' })}`, '0x400'], [`quorum_backup_schedule_last_success_timestamp_seconds${op(0, { ...C, schedule: 'hourly' })}`, '0x400']],
      evalTime: '3h',
    },
  ],
  EtcdUpgradeHalted: [
    {
      name: 'fires: a rolling update halted at a member',
      series: [[`quorum_etcdcluster_rollout_halted${op(0, { ...C, member: 'c-1', reason: 'CrashLooping' })}`, '1x10']],
      evalTime: '1m',
      fires: { labels: { ...C, member: 'c-1', reason: 'CrashLooping' }, value: 1 },
    },
    {
      name: 'does not fire: a rolling update in progress, not halted',
      series: [[`quorum_etcdcluster_rollout_in_progress${op(0, C)}`, '1x10']],
      evalTime: '1m',
    },
  ],
  EtcdStepStalled: [
    {
      name: 'fires: a step past its bound for a minute',
      series: [[`quorum_etcdcluster_step_stalled${op(0, { ...C, step: 'addMember c-3' })}`, '0 1x10']],
      evalTime: '3m',
      fires: { labels: { ...C, step: 'addMember c-3' }, value: 1 },
    },
    {
      name: 'does not fire: a step retrying within its bound',
      series: [[`quorum_etcdcluster_step_stalled${op(0, { ...C, step: 'addMember c-3' })}`, '0x10'], [`quorum_etcdcluster_step_failures${op(0, { ...C, step: 'addMember c-3' })}`, '0+1x10']],
      evalTime: '3m',
    },
  ],
};

const rules = alertRules();
for (const alert of ALERTS) {
  test(`promtool test rules: ${alert} fires and does not fire`, async () => {
    const cases = CASES[alert];
    assert.ok(cases.some((c) => c.fires) && cases.some((c) => !c.fires), `${alert} has a case where it fires and one where it does not`);
    const file = join(work, `${alert}.test.yml`);
    await writeFile(
      file,
      stringify({
        rule_files: [rulesFile],
        evaluation_interval: '30s',
        tests: cases.map((c) => ({
          name: c.name,
          interval: '30s',
          input_series: c.series.map(([series, values]) => ({ series, values })),
          alert_rule_test: [{ eval_time: c.evalTime, alertname: alert, exp_alerts: c.fires ? [expected(rules[alert], c.fires)] : [] }],
        })),
      }),
    );
    const out = await promtoolRun(['test', 'rules', file]);
    assert.match(out, /SUCCESS/);
  });
}
