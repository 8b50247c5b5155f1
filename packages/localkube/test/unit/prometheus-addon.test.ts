// The prometheus addon's configuration, without a cluster: by default it scrapes with deploy/monitoring/'s
// scrape configs and evaluates its rules, and the prometheus.yml it writes is one the real promtool accepts
// (the rule files checked where the pod mounts them are checked here from a copy).
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { parse } from 'yaml';
import { prometheusBinaries } from '../../src/build/go-binaries.ts';
import { DEFAULT_RULE_FILES, DEFAULT_SCRAPE_CONFIG_FILES, prometheusConfig, readRuleFiles, readScrapeConfigFiles } from '../../src/monitoring/prometheus.ts';

const SERVICE_ACCOUNT_TOKEN = '/var/run/secrets/kubernetes.io/serviceaccount/token';

test('the default configuration: itself and Quorum\'s jobs, every default rule file, a 5 s interval; promtool accepts it', async () => {
  const rules = await readRuleFiles(DEFAULT_RULE_FILES);
  const scrapeConfigs = await readScrapeConfigFiles(DEFAULT_SCRAPE_CONFIG_FILES);
  const config = parse(prometheusConfig({ rules, scrapeConfigs, intervalSeconds: 5 })) as { global: Record<string, string>; rule_files: string[]; scrape_configs: { job_name: string }[] };
  assert.deepEqual(config.scrape_configs.map((c) => c.job_name), ['prometheus', 'quorum-etcd', 'quorum-operator']);
  assert.deepEqual(config.rule_files, ['/etc/prometheus/rules/quorum-rules.yml']);
  assert.equal(config.global['evaluation_interval'], '5s');
  // The operator's /metrics is HTTPS behind TokenReview + SubjectAccessReview: its job sends the pod's token.
  assert.ok(prometheusConfig({ rules, scrapeConfigs, intervalSeconds: 5 }).includes(SERVICE_ACCOUNT_TOKEN));

  const dir = await mkdtemp(join(tmpdir(), 'prometheus-addon-'));
  try {
    // The same config with its rule files where this host has them.
    for (const [name, text] of Object.entries(rules)) await writeFile(join(dir, name), text);
    // promtool checks that a job's token file exists: the pod's service account token, which this host has not.
    const token = join(dir, 'token');
    await writeFile(token, 'token');
    const local = prometheusConfig({ rules, scrapeConfigs, intervalSeconds: 5 }).replaceAll('/etc/prometheus/rules/', `${dir}/`).replaceAll(SERVICE_ACCOUNT_TOKEN, token);
    await writeFile(join(dir, 'prometheus.yml'), local);
    const { promtool } = await prometheusBinaries();
    const { stdout } = await promisify(execFile)(promtool, ['check', 'config', join(dir, 'prometheus.yml')]);
    assert.match(stdout, /SUCCESS: 1 rule files found/);
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
});
