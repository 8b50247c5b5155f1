// The shipped alerts fire and resolve on a real Prometheus (issue 10, "observability that has been seen
// working"): `localkube addon enable prometheus` with deploy/monitoring/'s scrape configs and rules, exactly
// as shipped (the same file promtool tests). Prometheus finds the members and the operator by itself and
// scrapes both; then two of three members are stopped and kept stopped (the cluster paused, their pods
// deleted: the survivor has no leader and no quorum), EtcdNoLeader and EtcdQuorumAtRisk fire after their
// `for:` (1 and 2 minutes), and once the cluster is resumed and heals they resolve.
// The operator's /metrics is HTTPS behind TokenReview + SubjectAccessReview (issue 23): Prometheus' service
// account is bound to the metrics-reader ClusterRole, as docs/monitoring.md tells users to; a caller without a
// token gets 401 and one whose account is not bound gets 403, from localkube's real reviews.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive addons/prometheus
// @shared operator
// @timeout 20m: waits for alerts with for: 1-2 minutes
import assert from 'node:assert/strict';
import { request } from 'node:https';
import { after, before, test } from 'node:test';
import { ClusterRoleBindings, Pods, ServiceAccounts } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { EtcdClusters } from '../../src/resources.ts';
import { ETCD_JOB, OPERATOR_JOB } from '../../src/monitoring/scrape.ts';
import { METRICS_READER_CLUSTER_ROLE, OPERATOR_METRICS_PORT } from '../../src/deploy/manifests.ts';
import { OPERATOR_SELECTOR } from '../../src/names.ts';
import { applyCluster, eventually, getCluster, PLAINTEXT, setUpOperator, waitAvailable } from './support.ts';

let env: TestEnv;
let ns: string;
let prometheus: string;
const NAME = 'watched';

interface Sample {
  metric: Record<string, string>;
  value: [number, string];
}

interface Alert {
  labels: Record<string, string>;
  annotations: Record<string, string>;
  state: 'pending' | 'firing';
  activeAt: string;
}

async function api<T>(path: string): Promise<T> {
  const res = await fetch(`${prometheus}${path}`, { signal: AbortSignal.timeout(10_000) });
  const body = (await res.json()) as { status: string; data: T; error?: string };
  if (body.status !== 'success') throw new Error(`prometheus ${path}: ${body.error ?? res.status}`);
  return body.data;
}

const query = async (promql: string): Promise<Sample[]> => (await api<{ result: Sample[] }>(`/api/v1/query?query=${encodeURIComponent(promql)}`)).result;
/** This cluster's alerts, pending or firing, by name. */
async function alerts(): Promise<Map<string, Alert>> {
  const all = (await api<{ alerts: Alert[] }>('/api/v1/alerts')).alerts;
  return new Map(all.filter((a) => a.labels['namespace'] === ns && a.labels['cluster'] === NAME).map((a) => [a.labels['alertname'] ?? '', a]));
}
const describeAlerts = (m: Map<string, Alert>): string => [...m.values()].map((a) => `${a.labels['alertname']} ${a.state} since ${a.activeAt}: ${a.annotations['summary']}`).join('\n') || 'none';

before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('monitoring');
  prometheus = (await env.kube.enablePrometheus()).url;
  await env.client.create(ClusterRoleBindings, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: readerBinding() },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: METRICS_READER_CLUSTER_ROLE },
    subjects: [{ kind: 'ServiceAccount', name: 'prometheus', namespace: 'localkube-monitoring' }],
  });
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, storage: { volumeClaimTemplate: { resources: { requests: { storage: '256Mi' } } } } });
  await waitAvailable(env.client, ns, NAME, 3);
});
after(async () => {
  await env.client.delete(ClusterRoleBindings, readerBinding()).catch(() => undefined);
  await env.kube.disablePrometheus().catch((err: unknown) => process.stderr.write(`disabling prometheus: ${(err as Error).message}\n`));
  await env.stop();
});

test('Prometheus finds and scrapes every member and the operator, and no alert is pending for a healthy cluster', async () => {
  const members = await eventually('every member scraped, up, with a leader', async () => {
    const up = await query(`up{job="${ETCD_JOB}", namespace="${ns}", cluster="${NAME}"} == 1`);
    const leader = await query(`etcd_server_has_leader{namespace="${ns}", cluster="${NAME}"} == 1`);
    return up.length === 3 && leader.length === 3 ? up.map((s) => s.metric['member']).sort() : undefined;
  }, { timeoutMs: 90_000, intervalMs: 2000 });
  const status = await getCluster(env.client, ns, NAME);
  assert.deepEqual(members, status.members.map((m) => m.name).sort(), 'the member label names the members');
  await eventually('the operator scraped, reporting this cluster', async () => {
    const up = await query(`up{job="${OPERATOR_JOB}"} == 1`);
    const ready = await query(`max by (namespace, cluster) (quorum_etcdcluster_ready_voting_members{namespace="${ns}", cluster="${NAME}"}) == 3`);
    const leader = await query(`max by (namespace, cluster) (quorum_etcdcluster_has_leader{namespace="${ns}", cluster="${NAME}"}) == 1`);
    return up.length > 0 && ready.length === 1 && leader.length === 1;
  }, { timeoutMs: 90_000, intervalMs: 2000 });
  // The rules are loaded (the positive signal), and none is active for this cluster.
  const groups = (await api<{ groups: { rules: { name: string }[] }[] }>('/api/v1/rules')).groups.flatMap((g) => g.rules.map((r) => r.name));
  assert.ok(groups.includes('EtcdNoLeader') && groups.includes('EtcdQuorumAtRisk'), `the shipped rules are loaded: ${groups.join(', ')}`);
  // While the new cluster came up, its members were not all ready: an alert may have been pending then. Once
  // every member is scraped, up and led, the next evaluations (every 5 s) clear it.
  let last = new Map<string, Alert>();
  await eventually('no alert pending or firing for the healthy cluster', async () => {
    last = await alerts();
    return last.size === 0;
  }, { timeoutMs: 60_000, intervalMs: 2000 }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\nalerts of ${ns}/${NAME}: ${describeAlerts(last)}`, { cause: err });
  });
});

/** Named after the test's namespace: files side by side must not share a cluster-scoped name. */
const readerBinding = (): string => `quorum-metrics-reader-${ns}`;

/** The status of a GET of the operator's /metrics at `host` (its certificate is self-signed: not verified). */
function scrapeStatus(host: string, token?: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = request({ host, port: OPERATOR_METRICS_PORT, path: '/metrics', rejectUnauthorized: false, headers: token ? { authorization: `Bearer ${token}` } : {}, timeout: 10_000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

test("the operator's /metrics: 401 without a token, 403 for a service account not bound to the metrics-reader role", async () => {
  const selector = Object.entries(OPERATOR_SELECTOR).map(([k, v]) => `${k}=${v}`).join(',');
  const operator = (await env.client.list(Pods, { labelSelector: selector })).items.find((p) => p.status?.podIP && p.status.phase === 'Running');
  assert.ok(operator?.status?.podIP, 'a running operator pod');
  const host = operator.status.podIP;
  assert.equal(await scrapeStatus(host), 401);
  assert.equal(await scrapeStatus(host, 'not-a-token'), 401);
  await env.client.create(ServiceAccounts, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'stranger', namespace: ns } });
  const issued = await env.client.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/stranger/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 600 } });
  assert.equal(await scrapeStatus(host, issued.status.token), 403);
});

test('two of three members stopped: EtcdNoLeader and EtcdQuorumAtRisk fire; healed, they resolve', async () => {
  // Kept stopped: paused, the operator recreates nothing (it still reports status).
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { paused: true } });
  const victims = (await getCluster(env.client, ns, NAME)).members.map((m) => m.name).slice(0, 2);
  const stoppedAt = Date.now();
  for (const m of victims) await env.client.delete(Pods, { namespace: ns, name: m }, { gracePeriodSeconds: 0 });
  await eventually('two member pods gone', async () => (await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${NAME}` })).items.length === 1, { timeoutMs: 60_000 });

  // EtcdNoLeader is `for: 1m`, EtcdQuorumAtRisk `for: 2m`; scrapes and evaluations every 5 s.
  let seen = new Map<string, Alert>();
  const firing = await eventually('EtcdNoLeader and EtcdQuorumAtRisk firing', async () => {
    seen = await alerts();
    return seen.get('EtcdNoLeader')?.state === 'firing' && seen.get('EtcdQuorumAtRisk')?.state === 'firing' ? seen : undefined;
  }, { timeoutMs: 300_000, intervalMs: 2000 }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\nalerts of ${ns}/${NAME}: ${describeAlerts(seen)}`, { cause: err });
  });
  process.stderr.write(`alerts firing ${Math.round((Date.now() - stoppedAt) / 1000)} s after two members stopped:\n${describeAlerts(firing)}\n`);
  assert.equal(firing.get('EtcdNoLeader')?.labels['severity'], 'critical');
  assert.match(firing.get('EtcdQuorumAtRisk')?.annotations['description'] ?? '', /^Only [01] voting members/, 'the description says how many voting members are ready');

  const resumedAt = Date.now();
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { paused: false } });
  const healed = await waitAvailable(env.client, ns, NAME, 3, 240_000);
  const names = healed.members.map((m) => m.name);
  assert.ok(victims.every((v) => names.includes(v)), `the same members came back on their data: ${names.join(', ')}`);
  await eventually('both alerts resolved', async () => {
    seen = await alerts();
    return !seen.has('EtcdNoLeader') && !seen.has('EtcdQuorumAtRisk');
  }, { timeoutMs: 120_000, intervalMs: 2000 }).catch((err: unknown) => {
    throw new Error(`${(err as Error).message}\nalerts of ${ns}/${NAME}: ${describeAlerts(seen)}`, { cause: err });
  });
  process.stderr.write(`alerts resolved ${Math.round((Date.now() - resumedAt) / 1000)} s after the cluster was resumed\n`);
});
