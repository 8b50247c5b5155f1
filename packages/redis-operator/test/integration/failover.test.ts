// The Redis operator on localkube with real redis-server and redis-sentinel (Redis 7.0.15 from Debian 12): a
// Redis of 1 primary + 2 replicas + 3 Sentinels becomes Available and replicates through `<name>`; with the data
// checker writing (a write counts once WAIT 1 confirms a replica has it), the primary's pod is deleted: the
// Sentinels fail over, the `<name>` Service follows the new primary, the old pod comes back as a replica, and no
// acknowledged write is lost; the operator's metrics show each instance's role, link and load and count the failover.
// Bad input is refused with the field named. The operator runs in this process, then is replaced by the one
// installed with its Helm chart, deploy/helm/quorum-redis (its image, a Role in the namespace), which keeps the Redis Available;
// its /metrics is scraped over HTTPS as Prometheus would, with service-account tokens (TokenReview, SubjectAccessReview).
// What this file needs, for the test harness (docs/testing.md):
// @exclusive redis-operator
// @timeout 8m: image assembly on a cold cache (apt download), then a create, one failover and an install
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { helmBinary } from '@quorum/localkube';
import { request } from 'node:https';
import { ClusterRoleBindings, Pods, Secrets, ServiceAccounts } from '@quorum/runtime';
import { eventually, type TestEnv } from '@quorum/localkube/testing';
import { Redis } from 'ioredis';
import { buildOperatorImage } from '../../src/deploy/image.ts';
import { CHART_DIR } from '../../src/deploy/helm.ts';
import { uninstall } from '../../src/deploy/install.ts';
import { METRICS_READER_CLUSTER_ROLE } from '../../src/deploy/manifests.ts';
import { METRICS_PORT } from '../../src/operator/config.ts';
import { Redises } from '../../src/resources.ts';
import { RedisDataChecker } from '../../src/testing/data-checker.ts';
import { available, redisReaders, startRedisEnv, type RedisTestEnv } from './support.ts';

const NAME = 'cache';
let t: RedisTestEnv;
let env: TestEnv;
let ns = '';
let reader: ReturnType<typeof redisReaders>;
const RELEASE = 'quorum-redis';
let helmHome = '';
let operatorNs = '';

before(async () => {
  t = await startRedisEnv();
  ({ env, ns } = t);
  reader = redisReaders(t, NAME);
});

after(async () => {
  await t?.stopOperator();
  if (operatorNs) await helmRun(['uninstall', RELEASE, '--namespace', operatorNs, '--wait', '--timeout', '2m']).catch((err: unknown) => process.stderr.write(`helm uninstall: ${(err as Error).message}\n`));
  if (helmHome) await rm(helmHome, { recursive: true, force: true });
  // What a failed helm uninstall left (the cluster-scoped objects have fixed names).
  if (ns) await uninstall(env.client, { watchNamespace: ns }).catch(() => undefined);
  await env?.stop();
});

/** helm with its config, cache and data directories out of $HOME, against the test's cluster. */
async function helmRun(args: string[]): Promise<string> {
  helmHome ||= await mkdtemp(join(tmpdir(), 'quorum-redis-helm-'));
  const home = { HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_DATA_HOME: join(helmHome, 'data') };
  const { stdout } = await promisify(execFile)(await helmBinary(), [...args, '--kubeconfig', env.kubeconfig], { env: { ...process.env, ...home }, maxBuffer: 16 * 1024 * 1024 });
  return stdout;
}

const status = (): ReturnType<typeof reader.status> => reader.status();
const password = (): Promise<string> => reader.password();
const serviceIP = (name: string): Promise<string> => reader.serviceIP(name);
const podIP = (name: string): Promise<string> => reader.podIP(name);

test('a Redis with 1 primary, 2 replicas and 3 Sentinels becomes Available and replicates through its Service', async () => {
  const started = Date.now();
  // An ACL user besides the default one, its password from a Secret (spec.users).
  await env.client.create(Secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'app-user', namespace: ns }, stringData: { password: 'app "pass" \\ word' } });
  const users = [{ name: 'app', passwordSecret: { name: 'app-user' }, rules: '~app:* +@read +@write -@dangerous' }];
  await env.client.create(Redises, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'Redis', metadata: { name: NAME, namespace: ns }, spec: { replicas: 2, storage: { size: '64Mi' }, users } });
  const s = await eventually('Available, 3 instances, 3 Sentinels agreeing and able to fail over', async () => {
    const st = await status();
    return available(st) && st?.readyReplicas === 3 && st.sentinel?.agreeing === 3 && st.sentinel.ableToFailOver === 3 && st.instances?.every((i) => i.linkStatus !== 'down') ? st : undefined;
  }, { timeoutMs: 180_000, intervalMs: 500 });
  console.log(`apply → Available with 3 Sentinels able to fail over: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  assert.equal(s.primary, `${NAME}-0`);
  assert.deepEqual(s.instances?.map((i) => i.role), ['primary', 'replica', 'replica']);

  assert.deepEqual(s.tls, { mode: 'Operator', secretName: `${NAME}-tls`, notAfter: s.tls?.notAfter });
  const pw = await password();
  // TLS by default: a plaintext client is refused on 6379 (port 0: no plaintext listener), one with the CA is served.
  const plaintext = new Redis({ host: await serviceIP(NAME), port: 6379, password: pw, maxRetriesPerRequest: 0, enableReadyCheck: false, retryStrategy: () => null, connectTimeout: 3000, commandTimeout: 3000 });
  plaintext.on('error', () => undefined);
  try {
    await assert.rejects(plaintext.ping());
  } finally {
    plaintext.disconnect();
  }
  const primary = new Redis({ host: await serviceIP(NAME), port: 6379, password: pw, tls: await reader.serviceTLS(NAME), maxRetriesPerRequest: 1 });
  try {
    await primary.set('hello', 'world');
    assert.ok(((await primary.call('WAIT', '2', '5000')) as number) >= 2, 'both replicas confirm the write');
    const replica = new Redis({ host: await podIP(`${NAME}-2`), port: 6379, password: pw, tls: await reader.podTLS(`${NAME}-2`), maxRetriesPerRequest: 1 });
    try {
      assert.equal(await replica.get('hello'), 'world');
      await assert.rejects(replica.set('x', 'y'), /READONLY/);
    } finally {
      replica.disconnect();
    }
    // The ACL user reads and writes its own keys only, on every instance.
    const app = new Redis({ host: await podIP(`${NAME}-1`), port: 6379, username: 'app', password: 'app "pass" \\ word', tls: await reader.podTLS(`${NAME}-1`), maxRetriesPerRequest: 1 });
    try {
      assert.equal(await app.get('app:none'), null);
      await assert.rejects(app.get('hello'), /NOPERM/);
      await assert.rejects(app.call('FLUSHALL'), /NOPERM/);
    } finally {
      app.disconnect();
    }
    // Without the password nothing is served.
    const anonymous = new Redis({ host: await serviceIP(NAME), port: 6379, tls: await reader.serviceTLS(NAME), maxRetriesPerRequest: 0, enableReadyCheck: false, retryStrategy: () => null });
    anonymous.on('error', () => undefined);
    try {
      await assert.rejects(anonymous.get('hello'), /NOAUTH|Authentication required/);
    } finally {
      anonymous.disconnect();
    }
  } finally {
    primary.disconnect();
  }
});

test('the primary pod deleted: Sentinels fail over, the Service follows, the old pod rejoins as a replica, 0 acknowledged writes lost', async () => {
  const before = await status();
  const old = before?.primary;
  assert.ok(old);
  const checker = new RedisDataChecker({ host: await serviceIP(NAME), port: 6379, password: await password(), tls: await reader.serviceTLS(NAME), writers: 4 });
  checker.start();
  try {
    await failOverUnderLoad(checker, old);
  } finally {
    await checker.stop();
  }
  const report = await checker.verify();
  console.log(`checker: ${report.acknowledged} acknowledged, ${report.unacknowledged} unacknowledged, ${report.lost.length} lost`);
  assert.deepEqual(report.lost, []);
  assert.ok(report.acknowledged > 100);
});

async function failOverUnderLoad(checker: RedisDataChecker, old: string): Promise<void> {
  await eventually('acknowledged writes before the fault', () => checker.acknowledged >= 50, { timeoutMs: 30_000, intervalMs: 100 });
  const deleted = Date.now();
  await env.client.delete(Pods, { namespace: ns, name: old });
  const after = await eventually('a new primary serving through the Service', async () => {
    const st = await status();
    return available(st) && st?.primary !== undefined && st.primary !== old ? st : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250 }).catch(async (err: unknown) => {
    console.log(`status when no new primary served: ${JSON.stringify(await status())}`);
    throw err;
  });
  console.log(`primary pod deleted → ${after.primary} serving: ${((Date.now() - deleted) / 1000).toFixed(1)} s`);
  const ackedAtFailover = checker.acknowledged;
  await eventually('writes acknowledged through the new primary', () => checker.acknowledged >= ackedAtFailover + 50, { timeoutMs: 30_000, intervalMs: 100 });
  await eventually(`${old} back as a replica, every instance ready`, async () => {
    const st = await status();
    return st?.readyReplicas === 3 && st.instances?.find((i) => i.name === old)?.role === 'replica' && st.instances.find((i) => i.name === old)?.linkStatus === 'up' ? st : undefined;
  }, { timeoutMs: 120_000, intervalMs: 500 });
  const pods = (await env.client.list(Pods, { namespace: ns, labelSelector: 'redis.quorum.dev/role=primary' })).items.map((p) => p.metadata.name);
  assert.deepEqual(pods, [after.primary], 'exactly one pod carries the primary label');
}

/** A series' value in Prometheus text, by its labels in their registration order; undefined without it. */
function sample(text: string, metric: string, labels: Record<string, string>): number | undefined {
  const head = `${metric}{${Object.entries(labels).map(([k, v]) => `${k}="${v}"`).join(',')}} `;
  const line = text.split('\n').find((l) => l.startsWith(head));
  return line === undefined ? undefined : Number(line.slice(head.length));
}

test("the operator's metrics: each instance's role, link and load, the Sentinels' view, and the failover counted", async () => {
  const st = await status();
  const primary = st?.primary;
  assert.ok(primary);
  const replicas = (st?.instances ?? []).filter((i) => i.name !== primary).map((i) => i.name);
  const R = { namespace: ns, redis: NAME };
  // The load figures are the reconciler's last reading (every 2 s): wait for one taken after the failover settled.
  const text = await eventually('the metrics describe the set after the failover', async () => {
    const m = await t.metrics();
    const settled = sample(m, 'quorum_redis_connected_replicas', { ...R, instance: primary }) === 2 && replicas.every((r) => sample(m, 'quorum_redis_replica_link_up', { ...R, instance: r }) === 1);
    return settled ? m : undefined;
  }, { timeoutMs: 20_000, intervalMs: 500 });
  assert.equal(sample(text, 'quorum_redis_instance_role', { ...R, instance: primary, role: 'primary' }), 1);
  for (const r of replicas) assert.equal(sample(text, 'quorum_redis_instance_role', { ...R, instance: r, role: 'replica' }), 1, r);
  for (const i of [primary, ...replicas]) assert.ok((sample(text, 'quorum_redis_memory_used_bytes', { ...R, instance: i }) ?? 0) > 0, `${i}: used_memory`);
  assert.equal(sample(text, 'quorum_redis_available', R), 1);
  assert.equal(sample(text, 'quorum_redis_sentinels_reporting', R), 3);
  const failovers = sample(text, 'quorum_redis_sentinel_failovers_total', R);
  console.log(`quorum_redis_sentinel_failovers_total after one primary pod deleted: ${failovers}`);
  assert.ok(failovers !== undefined && failovers >= 1, 'the failover is counted');
});

test("a user's new password is rolled in (replicas first, then a planned failover): every instance takes it, the old one is refused", async () => {
  const changed = Date.now();
  await env.client.mergePatch(Secrets, { namespace: ns, name: 'app-user' }, { stringData: { password: 'a new password' } });
  const answers = async (instance: string, secret: string): Promise<boolean> => {
    const app = new Redis({ host: await podIP(instance), port: 6379, username: 'app', password: secret, tls: await reader.podTLS(instance), maxRetriesPerRequest: 0, enableReadyCheck: false, retryStrategy: () => null, lazyConnect: true });
    app.on('error', () => undefined);
    try {
      await app.connect();
      return (await app.get('app:none')) === null;
    } catch {
      return false;
    } finally {
      app.disconnect();
    }
  };
  const instances = [0, 1, 2].map((i) => `${NAME}-${i}`);
  await eventually('every instance takes the new password, and the rollout is over', async () => {
    const st = await status();
    if (st?.rollout !== undefined || !available(st) || st?.readyReplicas !== 3) return false;
    for (const instance of instances) if (!(await answers(instance, 'a new password'))) return false;
    return true;
  }, { timeoutMs: 240_000, intervalMs: 2000 });
  console.log(`new user password → taken by every instance: ${((Date.now() - changed) / 1000).toFixed(1)} s`);
  for (const instance of instances) assert.equal(await answers(instance, 'app "pass" \\ word'), false, `${instance} refuses the old password`);
});

test('bad input is refused with the field named, and nothing is created', async () => {
  const attempt = (name: string, spec: unknown): Promise<unknown> => env.client.create(Redises, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'Redis', metadata: { name, namespace: ns }, spec });
  await assert.rejects(attempt('bad-config', { config: [{ name: 'replicaof', value: 'evil 6379' }] }), /spec\.config\[0\]\.name/);
  await assert.rejects(attempt('bad-replicas', { replicas: -1 }), /spec\.replicas/);
  await assert.rejects(attempt('bad-version', { engine: 'valkey', version: '7.0.15' }), /spec\.version must be a supported version/);
  await assert.rejects(attempt('bad-engine', { engine: 'memcached' }), /spec\.engine/);
  // TLS cannot be turned off on a Redis that has it; nothing running is touched.
  await assert.rejects(env.client.mergePatch(Redises, { namespace: ns, name: NAME }, { spec: { tls: { disabled: true } } }), /spec\.tls\.disabled cannot change after creation/);
  assert.equal(((await env.client.get(Redises, { namespace: ns, name: NAME })).spec as { tls?: { disabled?: boolean } } | undefined)?.tls?.disabled, undefined);
  const names = (await env.client.list(Redises, { namespace: ns })).items.map((r) => r.metadata.name);
  assert.deepEqual(names, [NAME]);
});

test('installed with its Helm chart (its image, a Role in the namespace only), the operator takes the Redis over and reports it Available', async () => {
  await t.stopOperator();
  const image = await buildOperatorImage();
  await env.kube.loadImage(image.archive);
  operatorNs = await env.namespace('redis-helm');
  const started = Date.now();
  const tag = image.name.lastIndexOf(':');
  const values = `namespaces={${ns}},image.repository=${image.name.slice(0, tag)},image.tag=${image.name.slice(tag + 1)}`;
  await helmRun(['install', RELEASE, join(import.meta.dirname, '..', '..', '..', '..', CHART_DIR), '--namespace', operatorNs, '--set', values, '--wait', '--timeout', '3m']);
  console.log(`helm install → operator ready: ${((Date.now() - started) / 1000).toFixed(1)} s`);
  // The installed operator writes the status now: a label taken off by hand comes back from it. Its first status
  // can lack the primary for a moment (seen in 2 of 4 runs, not yet explained: possibly the NetworkPolicy agent
  // admitting the new operator pod's address late), so the test waits for the primary it reports.
  const primary = await eventually('the installed operator reports the primary', async () => (await status())?.primary, { timeoutMs: 60_000, intervalMs: 250 });
  await env.client.mergePatch(Pods, { namespace: ns, name: primary }, { metadata: { labels: { 'redis.quorum.dev/role': null } } });
  await eventually('the installed operator puts the primary label back', async () => {
    const p = await env.client.get(Pods, { namespace: ns, name: primary });
    return p.metadata.labels?.['redis.quorum.dev/role'] === 'primary' && available(await status());
  }, { timeoutMs: 60_000, intervalMs: 500 });
});

/** A GET of the operator's /metrics at `host` (its serving certificate is its own: not verified here). */
function scrape(host: string, token?: string): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port: METRICS_PORT, path: '/metrics', rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (body += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body }));
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function serviceAccountToken(namespace: string, name: string): Promise<string> {
  await env.client.create(ServiceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name, namespace } });
  const issued = await env.client.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } });
  return issued.status.token;
}

test("the Helm-installed operator's /metrics over HTTPS: 401 without a token, 403 for an unbound service account, the Redis's figures for one bound to its metrics-reader role", async () => {
  assert.ok(operatorNs, 'the Helm test above installed the operator');
  const pod = (await env.client.list(Pods, { namespace: operatorNs })).items.find((p) => p.status?.phase === 'Running' && p.status.podIP);
  assert.ok(pod?.status?.podIP, 'a running operator pod');
  const host = pod.status.podIP;
  assert.equal((await scrape(host)).status, 401);
  assert.equal((await scrape(host, 'not-a-token')).status, 401);
  assert.equal((await scrape(host, await serviceAccountToken(operatorNs, 'stranger'))).status, 403);
  // Cluster-scoped: named after this file's namespace, removed after.
  const binding = `${METRICS_READER_CLUSTER_ROLE}-${ns}`;
  await env.client.create(ClusterRoleBindings, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: binding },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: METRICS_READER_CLUSTER_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: 'scraper', namespace: operatorNs }],
  });
  try {
    const token = await serviceAccountToken(operatorNs, 'scraper');
    const R = { namespace: ns, redis: NAME };
    const primary = (await status())?.primary;
    assert.ok(primary);
    // RBAC bindings reach the authorizer's cache within moments; the figures follow the reconciler's readings.
    const scraped = await eventually('the bound service account reads the Redis figures', async () => {
      const r = await scrape(host, token);
      return r.status === 200 && sample(r.body, 'quorum_redis_instance_role', { ...R, instance: primary, role: 'primary' }) === 1 ? r.body : undefined;
    }, { timeoutMs: 30_000, intervalMs: 500 });
    assert.equal(sample(scraped, 'quorum_redis_available', R), 1);
    assert.equal(sample(scraped, 'quorum_redis_sentinels_reporting', R), 3);
  } finally {
    await env.client.delete(ClusterRoleBindings, binding).catch(() => undefined);
  }
});

