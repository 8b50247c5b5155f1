// The Redis operator's alert rules, checked by the real promtool (built from tools/prometheus on first use, as
// for the etcd rules): `promtool check rules` on deploy/monitoring/quorum-redis-rules.yml, `promtool check
// config` with the shipped scrape config, and `promtool test rules` with cases per alert, each showing it firing
// and not firing. The committed files of deploy/monitoring/quorum-redis-* are what the generator writes.
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
import { alertRules, ALERTS, RUNBOOK_DOC, type AlertName } from '../../src/monitoring/rules.ts';
import { OPERATOR_JOB } from '../../src/monitoring/scrape.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..', '..', '..', '..');
const rulesFile = join(repoRoot, MONITORING_DIR, RULES_FILE);

let promtool = '';
let work = '';

before(async () => {
  promtool = (await prometheusBinaries()).promtool;
  work = await mkdtemp(join(tmpdir(), 'quorum-redis-promtool-'));
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

test('deploy/monitoring/quorum-redis-* is what the generator writes', async () => {
  for (const [file, content] of Object.entries(monitoringFiles())) {
    assert.equal(await readFile(join(repoRoot, MONITORING_DIR, file), 'utf8'), content, `${MONITORING_DIR}/${file} is stale: run bash scripts/node24 packages/redis-operator/scripts/generate.ts`);
  }
});

test('the PrometheusRule holds exactly the groups of the plain rules file', async () => {
  const plain = parse(await readFile(rulesFile, 'utf8')) as { groups: unknown };
  const crd = parse(await readFile(join(repoRoot, MONITORING_DIR, PROMETHEUS_RULE_FILE), 'utf8')) as { kind: string; metadata: { name: string }; spec: { groups: unknown } };
  assert.equal(crd.kind, 'PrometheusRule');
  assert.equal(crd.metadata.name, 'quorum-redis');
  assert.deepEqual(crd.spec.groups, plain.groups);
});

test('promtool check rules and check config: the shipped rules and scrape config', async () => {
  assert.match(await promtoolRun(['check', 'rules', rulesFile]), new RegExp(`SUCCESS: ${ALERTS.length} rules found`));
  const scrape = parse(await readFile(join(repoRoot, MONITORING_DIR, SCRAPE_CONFIGS_FILE), 'utf8')) as { scrape_configs: { job_name: string; authorization: { credentials_file: string } }[] };
  assert.deepEqual(scrape.scrape_configs.map((c) => c.job_name), [OPERATOR_JOB]);
  // promtool checks that the token file exists: a pod's service account token, which this machine has not.
  const token = join(work, 'token');
  await writeFile(token, 'token');
  for (const c of scrape.scrape_configs) c.authorization.credentials_file = token;
  const config = join(work, 'prometheus.yml');
  await writeFile(config, stringify({ global: { scrape_interval: '15s' }, rule_files: [rulesFile], scrape_configs: scrape.scrape_configs }));
  assert.match(await promtoolRun(['check', 'config', config]), /SUCCESS: .*prometheus\.yml is valid prometheus config file syntax/);
});

test('every alert has its runbook: a section of docs/redis.md named after it', async () => {
  const doc = await readFile(join(repoRoot, RUNBOOK_DOC), 'utf8');
  for (const [alert, rule] of Object.entries(alertRules())) {
    assert.match(doc, new RegExp(`^#### ${alert}$`, 'm'), `${RUNBOOK_DOC} has no section ${alert}`);
    assert.equal(rule.annotations.runbook_url, `${RUNBOOK_DOC}#${alert.toLowerCase()}`);
  }
});

// ---- promtool test rules, per alert ----

type Labels = Record<string, string>;

interface Case {
  name: string;
  /** `metric{labels}` → promtool's expanding notation, one sample per `interval` (default 30 s). */
  series: [series: string, values: string][];
  evalTime: string;
  interval?: string;
  /** The alert's labels beyond severity and its value, when it fires at evalTime; undefined: it does not. */
  fires?: { labels: Labels; value: number };
}

const sel = (labels: Labels): string => `{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}}`;
/** A series of operator replica `replica` (both serve what status says; only the leader what it reads from the instances). */
const op = (replica: number, labels: Labels): string => sel({ job: OPERATOR_JOB, pod: `quorum-redis-operator-${replica}`, operator_namespace: 'quorum-system', ...labels });
const R = { namespace: 'ns', redis: 'cache' };
const I = (instance: string): Labels => ({ ...R, instance });
const HOUR = 3600;
/** A RedisBackupSchedule of the Redis R. */
const S = (schedule: string): Labels => ({ ...R, schedule });

const CASES: Record<AlertName, Case[]> = {
  RedisPrimaryMissing: [
    { name: 'fires: Available=False for over a minute (both replicas say so)', series: [[`quorum_redis_available${op(0, R)}`, '1 0x10'], [`quorum_redis_available${op(1, R)}`, '1 0x10']], evalTime: '3m', fires: { labels: R, value: 0 } },
    { name: 'does not fire: a failover of 30 s', series: [[`quorum_redis_available${op(0, R)}`, '1 1 1 0 1x6']], evalTime: '3m' },
  ],
  RedisPrimaryNotWritable: [
    {
      name: 'fires: the primary has 0 replicas connected with min-replicas-to-write 1',
      series: [
        [`quorum_redis_connected_replicas${op(0, I('cache-0'))}`, '1 0x10'],
        [`quorum_redis_instance_role${op(0, { ...I('cache-0'), role: 'primary' })}`, '1x10'],
        [`quorum_redis_connected_replicas${op(0, I('cache-1'))}`, '0x10'],
        [`quorum_redis_instance_role${op(0, { ...I('cache-1'), role: 'replica' })}`, '1x10'],
        [`quorum_redis_min_replicas_to_write${op(0, R)}`, '1x10'],
        [`quorum_redis_min_replicas_to_write${op(1, R)}`, '1x10'],
      ],
      evalTime: '3m',
      fires: { labels: I('cache-0'), value: 0 },
    },
    {
      name: 'does not fire: a replica connected; nor a Redis without replicas (min-replicas-to-write 0)',
      series: [
        [`quorum_redis_connected_replicas${op(0, I('cache-0'))}`, '1x10'],
        [`quorum_redis_instance_role${op(0, { ...I('cache-0'), role: 'primary' })}`, '1x10'],
        [`quorum_redis_min_replicas_to_write${op(0, R)}`, '1x10'],
        [`quorum_redis_connected_replicas${op(0, { namespace: 'ns', redis: 'solo', instance: 'solo-0' })}`, '0x10'],
        [`quorum_redis_instance_role${op(0, { namespace: 'ns', redis: 'solo', instance: 'solo-0', role: 'primary' })}`, '1x10'],
        [`quorum_redis_min_replicas_to_write${op(0, { namespace: 'ns', redis: 'solo' })}`, '0x10'],
      ],
      evalTime: '3m',
    },
  ],
  RedisSentinelsCannotFailOver: [
    {
      name: 'fires: 1 of 3 Sentinels could fail over (quorum 2) for over 5 minutes',
      series: [[`quorum_redis_sentinels_able_to_failover${op(0, R)}`, '1x20'], [`quorum_redis_sentinel_quorum${op(0, R)}`, '2x20'], [`quorum_redis_instances_desired${op(0, R)}`, '3x20'], [`quorum_redis_available${op(0, R)}`, '1x20']],
      evalTime: '7m',
      fires: { labels: R, value: 1 },
    },
    {
      name: 'does not fire: no replica to promote by design (replicas: 0), nor with no primary (RedisPrimaryMissing says it)',
      series: [
        [`quorum_redis_sentinels_able_to_failover${op(0, R)}`, '0x20'], [`quorum_redis_sentinel_quorum${op(0, R)}`, '2x20'], [`quorum_redis_instances_desired${op(0, R)}`, '1x20'], [`quorum_redis_available${op(0, R)}`, '1x20'],
        [`quorum_redis_sentinels_able_to_failover${op(0, { namespace: 'ns', redis: 'b' })}`, '0x20'], [`quorum_redis_sentinel_quorum${op(0, { namespace: 'ns', redis: 'b' })}`, '2x20'], [`quorum_redis_instances_desired${op(0, { namespace: 'ns', redis: 'b' })}`, '3x20'], [`quorum_redis_available${op(0, { namespace: 'ns', redis: 'b' })}`, '0x20'],
      ],
      evalTime: '7m',
    },
  ],
  RedisReplicaLinkDown: [
    { name: 'fires: a link down for over 2 minutes', series: [[`quorum_redis_replica_link_up${op(0, I('cache-1'))}`, '1 0x10'], [`quorum_redis_replica_link_up${op(0, I('cache-2'))}`, '1x10']], evalTime: '4m', fires: { labels: I('cache-1'), value: 0 } },
    { name: 'does not fire: a resync of a minute', series: [[`quorum_redis_replica_link_up${op(0, I('cache-1'))}`, '1 0 0 1x8']], evalTime: '4m' },
  ],
  RedisReplicationLagHigh: [
    { name: 'fires: 32 MiB behind for over 5 minutes', series: [[`quorum_redis_replica_lag_bytes${op(0, I('cache-1'))}`, '33554432x20']], evalTime: '7m', fires: { labels: I('cache-1'), value: 33554432 } },
    { name: 'does not fire: a burst of lag for 2 minutes', series: [[`quorum_redis_replica_lag_bytes${op(0, I('cache-1'))}`, '0 33554432x4 100x15']], evalTime: '7m' },
  ],
  RedisMemoryNearMax: [
    {
      name: 'fires: 95 % of maxmemory for over 10 minutes',
      series: [[`quorum_redis_memory_used_bytes${op(0, I('cache-0'))}`, '950x30'], [`quorum_redis_memory_max_bytes${op(0, I('cache-0'))}`, '1000x30']],
      evalTime: '12m',
      fires: { labels: I('cache-0'), value: 0.95 },
    },
    {
      name: 'does not fire: no maxmemory (0); nor half of it',
      series: [[`quorum_redis_memory_used_bytes${op(0, I('cache-0'))}`, '950x30'], [`quorum_redis_memory_max_bytes${op(0, I('cache-0'))}`, '0x30'], [`quorum_redis_memory_used_bytes${op(0, I('cache-1'))}`, '500x30'], [`quorum_redis_memory_max_bytes${op(0, I('cache-1'))}`, '1000x30']],
      evalTime: '12m',
    },
  ],
  RedisEvictingKeys: [
    { name: 'fires: 10 keys evicted every 30 s for half an hour', series: [[`quorum_redis_evicted_keys${op(0, I('cache-0'))}`, '0+10x60']], evalTime: '30m', fires: { labels: I('cache-0'), value: 200 } },
    { name: 'does not fire: one burst of evictions 20 minutes ago', series: [[`quorum_redis_evicted_keys${op(0, I('cache-0'))}`, '0 500x60']], evalTime: '30m' },
  ],
  // Against each schedule's interval: 2 intervals and 30 minutes. Within the 5-minute lookback (interval 4m): a
  // sparser series would go stale between its samples.
  RedisBackupTooOld: [
    {
      name: 'fires: an hourly schedule whose last success is 3 hours old (both replicas serve it)',
      series: [
        [`quorum_redis_backup_schedule_last_success_timestamp_seconds${op(0, S('hourly'))}`, '0x45'],
        [`quorum_redis_backup_schedule_last_success_timestamp_seconds${op(1, S('hourly'))}`, '0x45'],
        [`quorum_redis_backup_schedule_created_timestamp_seconds${op(0, S('hourly'))}`, '0x45'],
        [`quorum_redis_backup_schedule_interval_seconds${op(0, S('hourly'))}`, `${HOUR}x45`],
        [`quorum_redis_backup_schedule_interval_seconds${op(1, S('hourly'))}`, `${HOUR}x45`],
      ],
      interval: '4m',
      evalTime: '3h',
      fires: { labels: S('hourly'), value: 3 * HOUR },
    },
    {
      name: 'fires: an hourly schedule that never succeeded, created 3 hours ago',
      series: [[`quorum_redis_backup_schedule_created_timestamp_seconds${op(0, S('hourly'))}`, '0x45'], [`quorum_redis_backup_schedule_interval_seconds${op(0, S('hourly'))}`, `${HOUR}x45`]],
      interval: '4m',
      evalTime: '3h',
      fires: { labels: S('hourly'), value: 3 * HOUR },
    },
    {
      name: 'does not fire: a daily schedule 27 hours after its success, an hourly one 2 hours after, nor a suspended one (no interval)',
      series: [
        [`quorum_redis_backup_schedule_last_success_timestamp_seconds${op(0, S('daily'))}`, '0x405'],
        [`quorum_redis_backup_schedule_interval_seconds${op(0, S('daily'))}`, `${24 * HOUR}x405`],
        [`quorum_redis_backup_schedule_last_success_timestamp_seconds${op(0, S('hourly'))}`, `${25 * HOUR}x405`],
        [`quorum_redis_backup_schedule_interval_seconds${op(0, S('hourly'))}`, `${HOUR}x405`],
        [`quorum_redis_backup_schedule_last_success_timestamp_seconds${op(0, S('suspended'))}`, '0x405'],
        [`quorum_redis_backup_schedule_created_timestamp_seconds${op(0, S('suspended'))}`, '0x405'],
      ],
      interval: '4m',
      evalTime: '27h',
    },
  ],
  RedisBackupFailing: [
    {
      name: 'fires: a failure after the last success (one replica has only the failure)',
      series: [[`quorum_redis_backup_last_success_timestamp_seconds${op(0, R)}`, '100x10'], [`quorum_redis_backup_last_failure_timestamp_seconds${op(0, R)}`, '200x10'], [`quorum_redis_backup_last_failure_timestamp_seconds${op(1, R)}`, '200x10']],
      evalTime: '1m',
      fires: { labels: R, value: 200 },
    },
    {
      name: 'fires: failures and never a success',
      series: [[`quorum_redis_backup_last_failure_timestamp_seconds${op(0, R)}`, '200x10']],
      evalTime: '1m',
      fires: { labels: R, value: 200 },
    },
    {
      name: 'does not fire: a success after the failure',
      series: [[`quorum_redis_backup_last_success_timestamp_seconds${op(0, R)}`, '300x10'], [`quorum_redis_backup_last_failure_timestamp_seconds${op(0, R)}`, '200x10']],
      evalTime: '1m',
    },
  ],
  RedisRolloutHalted: [
    { name: 'fires: a rolling update halted at a pod', series: [[`quorum_redis_rollout_halted${op(0, { ...I('cache-1'), reason: 'CrashLooping' })}`, '1x10']], evalTime: '1m', fires: { labels: { ...I('cache-1'), reason: 'CrashLooping' }, value: 1 } },
    { name: 'does not fire: a rolling update under way', series: [[`quorum_redis_rollout_updated_pods${op(0, R)}`, '1x10'], [`quorum_redis_rollout_pods${op(0, R)}`, '6x10']], evalTime: '1m' },
  ],
  RedisStepStalled: [
    { name: 'fires: a step past its bound for a minute', series: [[`quorum_redis_step_stalled${op(0, { ...R, step: 'create-pod' })}`, '0 1x10']], evalTime: '3m', fires: { labels: { ...R, step: 'create-pod' }, value: 1 } },
    { name: 'does not fire: a step retrying within its bound', series: [[`quorum_redis_step_stalled${op(0, { ...R, step: 'create-pod' })}`, '0x10'], [`quorum_redis_step_failures${op(0, { ...R, step: 'create-pod' })}`, '0+1x10']], evalTime: '3m' },
  ],
};

test('promtool test rules: every alert fires in a case and stays silent in another', async () => {
  const rules = alertRules();
  const tests = ALERTS.flatMap((alert) => {
    const cases = CASES[alert];
    assert.ok(cases.some((c) => c.fires) && cases.some((c) => !c.fires), `${alert} has a case where it fires and one where it does not`);
    return cases.map((c) => {
      const labels = c.fires ? { ...rules[alert].labels, ...c.fires.labels } : {};
      const annotations = (value: number): Record<string, string> => Object.fromEntries(Object.entries(rules[alert].annotations).map(([k, v]) => [k, renderAlertTemplate(v, labels, value)]));
      return {
        name: `${alert}: ${c.name}`,
        interval: c.interval ?? '30s',
        input_series: c.series.map(([series, values]) => ({ series, values })),
        alert_rule_test: [{ eval_time: c.evalTime, alertname: alert, exp_alerts: c.fires ? [{ exp_labels: labels, exp_annotations: annotations(c.fires.value) }] : [] }],
      };
    });
  });
  const file = join(work, 'redis-rules.test.yml');
  await writeFile(file, stringify({ rule_files: [rulesFile], evaluation_interval: '30s', tests }));
  assert.match(await promtoolRun(['test', 'rules', file]), /SUCCESS/);
});
