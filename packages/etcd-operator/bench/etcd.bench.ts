// The operator's figures on localkube, each against its floor measured in the same run. The operator runs
// with STEP_DEADLINE_SECONDS=60, so a step that makes no progress for a minute is a StepStalled event.
//
// Benchmarks (one JSON line each on stdout; progress on stderr). Phases, chosen with
// QUORUM_BENCH_PHASES=available,upgrade,tls,soak,idle (default: all five):
//
// available
//   etcd.available_s.3, etcd.floor_s.3   medians over QUORUM_BENCH_RUNS (default 5, at least 5 is what the
//                                        issue asks) interleaved pairs, each run in a fresh namespace that
//                                        is deleted (and gone) before the next run starts. The order within a
//                                        pair alternates (operator first, then floor first) so that a drift
//                                        in the machine's load does not favour either side.
//   etcd.available_ratio.3               median of the per-pair ratios operator / floor; .min and .max give
//                                        the spread.
//   etcd.available_s.N, etcd.floor_s.N,  N = 1 and 5: one pair each.
//   etcd.available_ratio.N
//     operator: apply an EtcdCluster → Available with N voting members, all ready, generation observed.
//     floor:    the same member pods, built by the operator's own memberPod()/memberPVC()/peerService()
//               (same image, args, peer-wait init container, probes, anti-affinity, and one PVC each of
//               the same class and size mounted at /var/lib/etcd), all created at once with a static
//               initial cluster, → every pod Ready. The floor's objects carry another managed-by label and
//               no owner, so the operator leaves them alone. Both sides are polled every 200 ms.
//   etcd.recovery_s, etcd.recovery_floor_s, etcd.recovery_ratio
//                                        a follower pod deleted → Available again, vs a ReplicaSet's
//                                        replacement of a bare etcd pod (one run).
//   etcd.scale_3_5_s, etcd.scale_5_3_s   one cluster, patch → Available with the new count (one run).
// soak (test/support/soak.ts; QUORUM_SOAK_RUNS runs, default 5, of QUORUM_SOAK_CLUSTERS clusters, default
// 12, QUORUM_SOAK_ROUNDS rounds, default 2); times are medians over the runs, with .min/.max; counts are sums
//   etcd.scale_3_5_p50_s, etcd.scale_3_5_p99_s
//                                        per run over every cluster and round: patch to 5 → Available with 5.
//   etcd.scale_5_3_p50_s, etcd.soak_bootstrap_p50_s
//   etcd.stalled_steps                   StepStalled occurrences (no progress for 60 s). Goal: 0.
//   etcd.retrying_steps                  StepRetrying occurrences (retried for 30 s).
//   etcd.peer_inactive_events            `peer became inactive` lines in all member pods' etcd logs (pods
//                                        removed by a scale-down are read just before it).
// upgrade (QUORUM_BENCH_RUNS runs, each a fresh 3-member cluster on 3.5.35, with a data checker writing 20/s
// through the client Service with a retrying client: 3 retries, 250 ms apart)
//   upgrade.duration_s.3                 spec.version 3.5.35 → 3.6.16 → every member on 3.6.16, the rollout done
//                                        (status.rollout gone, currentVersion 3.6.16, every pod Ready).
//   upgrade.floor_s.3                    the floor, in the same run on the same cluster: its three members'
//                                        plain restarts (each pod deleted, recreated by the operator on its
//                                        volume, → Ready and the cluster Available), one after the other, summed.
//                                        The order within a run alternates (floor first, then upgrade first).
//   upgrade.duration_ratio.3             median of the per-run ratios; .min and .max give the spread. Goal ≤ 1.2.
//   upgrade.failed_requests              writes that failed after every retry during the upgrades, summed. Goal 0.
//   upgrade.retried_requests             writes that needed a retry (informational), summed.
//   upgrade.lost_writes                  acknowledged writes missing afterwards, summed. Must be 0.
// tls (QUORUM_BENCH_RUNS interleaved pairs, each cluster in a fresh namespace, deleted before the next)
//   tls.available_s.3, tls.plain_s.3    apply → Available with 3 members, with spec.tls {peer: {}, client: {}}
//                                        (operator-managed certificates: two CAs, a Secret per member, the
//                                        client Secret, all issued by the operator) and without.
//   tls.available_ratio.3                median of the per-pair ratios, with .min and .max.
// idle
//   etcd.idle50.*                        the operator at rest with 50 one-member clusters: RSS, CPU, API
//                                        requests and writes per minute, lease renewals per minute.
import { randomUUID } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { Namespaces, PersistentVolumeClaims, Pods, Services, resource, type Client, type KubeObject } from '@quorum/runtime';
import { eventually, type TestEnv } from '@quorum/localkube/testing';
import { applyDefaults, etcdImage } from '../src/api/defaults.ts';
import type { EtcdCluster } from '../src/api/etcdcluster.ts';
import { LABELS, memberHost, memberName, peerURL } from '../src/names.ts';
import { METRICS_READER_CLUSTER_ROLE } from '../src/deploy/manifests.ts';
import { memberPVC, memberPod, peerService } from '../src/cluster/resources.ts';
import { EtcdClusters } from '../src/resources.ts';
import { applyCluster, clientServiceEndpoint, PLAINTEXT, peerWaitImage, setUpOperator, waitAvailable } from '../test/integration/support.ts';
import { converged, percentile, runSoak } from '../test/support/soak.ts';
import { DataChecker } from '../src/testing/data-checker.ts';
import { benchRuns, interleavedPairs, median, progressTo, report, reportRatio, seconds, selectedPhases } from './figures.ts';

const progress = progressTo('etcd bench');
// The image the operator's members run by default (a spec without version or image).
const IMAGE = etcdImage(applyDefaults({ replicas: 1 }));
const ReplicaSets = resource('apps/v1', 'ReplicaSet', 'replicasets', true);

const PHASES = ['available', 'upgrade', 'tls', 'soak', 'idle'] as const;
type Phase = (typeof PHASES)[number];
const phases = selectedPhases(PHASES);
const runs = benchRuns();
const soakClusters = Number(process.env['QUORUM_SOAK_CLUSTERS'] ?? 12);
const soakRounds = Number(process.env['QUORUM_SOAK_ROUNDS'] ?? 2);
const soakRuns = Number(process.env['QUORUM_SOAK_RUNS'] ?? 5);
// Both sides are polled at the same rate, so neither gains from a finer clock.
const POLL_MS = 200;

type PodObj = KubeObject & { status?: { conditions?: { type: string; status: string }[] } };
const ready = (p: PodObj): boolean => p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;

/** Another managed-by value for the floor's objects: the operator only looks at objects it manages. */
const FLOOR_MANAGER = 'quorum-bench-floor';

/** A copy of one of the operator's objects that the operator does not own or manage (labels and selectors alike). */
function unmanaged(obj: KubeObject): KubeObject {
  const copy = JSON.parse(JSON.stringify(obj, (k, v: unknown) => (k === LABELS.managedBy && v === 'quorum' ? FLOOR_MANAGER : v))) as KubeObject;
  delete copy.metadata.ownerReferences;
  return copy;
}

/**
 * The floor: the operator's own member pods and PVCs for an n-member cluster with a static initial cluster,
 * all created at once (the least the same pods need), timed until every pod is Ready.
 */
async function floorCluster(client: Client, ns: string, n: number): Promise<number> {
  const name = 'f';
  // Only what the object builders read; the uid makes the initial-cluster token as unique as a real one.
  const cluster: EtcdCluster = { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name, namespace: ns, uid: randomUUID() }, spec: { replicas: n, ...PLAINTEXT } };
  const spec = applyDefaults(cluster.spec);
  const members = Array.from({ length: n }, (_, i) => memberName(name, i));
  const initialCluster = members.map((m) => `${m}=${peerURL(name, ns, m)}`);
  // As the operator bootstraps a new cluster: every initial member's name must resolve before etcd starts.
  const waitForNames = members.map((m) => memberHost(name, ns, m));
  const selector = Object.entries((unmanaged(peerService(cluster)) as KubeObject & { spec: { selector: Record<string, string> } }).spec.selector).map(([k, v]) => `${k}=${v}`).join(',');
  const t0 = performance.now();
  await client.create(Services, unmanaged(peerService(cluster)));
  await Promise.all(members.map(async (m) => {
    await client.create(PersistentVolumeClaims, unmanaged(memberPVC(cluster, spec, m)));
    await client.create(Pods, unmanaged(memberPod(cluster, spec, { member: m, initialClusterState: 'new', initialCluster, waitForNames, peerWaitImage })));
  }));
  await eventually(`${n} floor pods ready`, async () => {
    const pods = (await client.list(Pods, { namespace: ns, labelSelector: selector })).items as PodObj[];
    return pods.length === n && pods.every(ready);
  }, { timeoutMs: 300_000, intervalMs: POLL_MS });
  return seconds(t0);
}

/** apply → Available with n members, polled like the floor. */
/** Plaintext unless `extra` says otherwise: the floors are plaintext pods, and the bench talks plain http. */
async function operatorCluster(client: Client, ns: string, n: number, extra: Record<string, unknown> = {}): Promise<number> {
  const t0 = performance.now();
  await applyCluster(client, ns, 'b', { replicas: n, ...PLAINTEXT, ...extra });
  await eventually(`${ns}/b Available with ${n}`, async () => converged(await client.get(EtcdClusters, { namespace: ns, name: 'b' }), n), { timeoutMs: 300_000, intervalMs: POLL_MS });
  return seconds(t0);
}

/** Deletes a namespace and waits until it is gone, so that one run's teardown does not slow the next run. */
async function dropNamespace(client: Client, ns: string): Promise<void> {
  await client.delete(Namespaces, ns).catch(() => undefined);
  await eventually(`namespace ${ns} gone`, async () => (await client.find(Namespaces, ns)) === undefined, { timeoutMs: 300_000, intervalMs: 1000 }).catch((err: Error) => progress(`warning: ${err.message}; going on`));
}

/**
 * A token of a service account bound to the operator's metrics-reader ClusterRole: the operator serves /metrics
 * over HTTPS only to callers a SubjectAccessReview allows (issue 23), as a Prometheus would be bound.
 */
let readerTokenOnce: Promise<string> | undefined;

async function readerToken(client: Client): Promise<string> {
  // One service account, binding and 6-hour token per bench process (a bench run is shorter), not three API calls per metrics read.
  readerTokenOnce ??= issueReaderToken(client);
  return readerTokenOnce;
}

async function issueReaderToken(client: Client): Promise<string> {
  const ns = 'quorum-system';
  const sa = 'bench-metrics-reader';
  await client.request('POST', `/api/v1/namespaces/${ns}/serviceaccounts`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: sa, namespace: ns } }).catch(ignoreExists);
  const binding = { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: { name: sa }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: METRICS_READER_CLUSTER_ROLE }, subjects: [{ kind: 'ServiceAccount', name: sa, namespace: ns }] };
  await client.request('POST', '/apis/rbac.authorization.k8s.io/v1/clusterrolebindings', binding).catch(ignoreExists);
  const review = await client.request<{ status: { token: string } }>('POST', `/api/v1/namespaces/${ns}/serviceaccounts/${sa}/token`, { apiVersion: 'authentication.k8s.io/v1', kind: 'TokenRequest', spec: { expirationSeconds: 21_600 } });
  return review.status.token;
}

function ignoreExists(err: unknown): void {
  if ((err as { code?: number }).code !== 409) throw err;
}

/** GET https://<pod>:8443/metrics with the token; the certificate is the operator's self-signed one. */
function scrape(podIP: string, token: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: podIP, port: 8443, path: '/metrics', headers: { authorization: `Bearer ${token}` }, rejectUnauthorized: false, timeout: 10_000 }, (res) => {
      let body = '';
      res.setEncoding('utf8').on('data', (chunk: string) => (body += chunk)).on('end', () => (res.statusCode === 200 ? resolve(body) : reject(new Error(`GET /metrics: ${res.statusCode}: ${body}`))));
    });
    req.on('timeout', () => req.destroy(new Error('GET /metrics: timed out'))).on('error', reject).end();
  });
}

async function metrics(client: Client): Promise<Map<string, number>> {
  const pods = (await client.list(Pods, { namespace: 'quorum-system', labelSelector: 'app.kubernetes.io/component=operator' })).items as (KubeObject & { status?: { podIP?: string } })[];
  const lease = await client.get(resource('coordination.k8s.io/v1', 'Lease', 'leases', true), { namespace: 'quorum-system', name: 'quorum-etcd-operator' }) as unknown as { spec: { holderIdentity: string } };
  const leader = pods.find((p) => p.metadata.name === lease.spec.holderIdentity)!;
  const text = await scrape(leader.status!.podIP!, await readerToken(client));
  const out = new Map<string, number>();
  for (const line of text.split('\n')) {
    const m = /^([a-z_]+)(\{[^}]*\})? ([0-9.e+-]+)$/.exec(line);
    if (!m) continue;
    // Lease renewals (every 2 s, by design of leader election) are counted apart from the operator's own calls.
    const lease = /resource="leases"/.test(m[2] ?? '') ? '_lease' : '';
    const key = m[1] === 'rest_client_requests_total' ? `requests${lease}${/method="(PATCH|POST|PUT|DELETE)"/.test(m[2] ?? '') ? '_write' : ''}` : m[1]!;
    out.set(key, (out.get(key) ?? 0) + Number(m[3]));
  }
  return out;
}

async function availablePhase(env: TestEnv): Promise<void> {
  const client = env.client;
  // 1, then 3, then 5: the one-member runs also warm the image and volume paths before the measured pairs.
  for (const n of [1, 3, 5]) {
    const pairs = n === 3 ? Math.max(1, runs) : 1;
    const ops: number[] = [];
    const floors: number[] = [];
    let kept: string | undefined;
    for (let i = 0; i < pairs; i++) {
      const order = i % 2 === 0 ? (['operator', 'floor'] as const) : (['floor', 'operator'] as const);
      for (const side of order) {
        const ns = await env.namespace(`bench-${side === 'operator' ? 'op' : 'floor'}-${n}`);
        progress(`${n} member(s), pair ${i + 1}/${pairs}: ${side}`);
        const s = side === 'operator' ? await operatorCluster(client, ns, n) : await floorCluster(client, ns, n);
        progress(`  ${side}: ${s.toFixed(1)} s`);
        (side === 'operator' ? ops : floors).push(s);
        // The last operator cluster of 3 stays for the recovery and scale measurements.
        if (n === 3 && side === 'operator' && i === pairs - 1) kept = ns;
        else await dropNamespace(client, ns);
      }
    }
    const ratios = ops.map((o, i) => o / floors[i]!);
    report(`etcd.available_s.${n}`, median(ops), 's');
    report(`etcd.floor_s.${n}`, median(floors), 's');
    report(`etcd.available_ratio.${n}`, median(ratios), 'ratio');
    if (pairs > 1) {
      report(`etcd.available_ratio.${n}.min`, Math.min(...ratios), 'ratio');
      report(`etcd.available_ratio.${n}.max`, Math.max(...ratios), 'ratio');
    }
    if (kept) await recoveryAndScale(client, kept);
  }
}

async function recoveryAndScale(client: Client, ns: string): Promise<void> {
  progress('recovery: delete a follower pod');
  const status = (await client.get(EtcdClusters, { namespace: ns, name: 'b' })).status!;
  const follower = status.members!.find((m) => !m.leader)!.name;
  const oldUid = (await client.get(Pods, { namespace: ns, name: follower })).metadata.uid;
  let t0 = performance.now();
  await client.delete(Pods, { namespace: ns, name: follower });
  await eventually('Available again', async () => {
    const c = await client.get(EtcdClusters, { namespace: ns, name: 'b' });
    const pod = await client.find(Pods, { namespace: ns, name: follower });
    return pod && pod.metadata.uid !== oldUid && ready(pod) && c.status?.conditions?.some((x) => x.type === 'Available' && x.status === 'True') && c.status.members?.every((m) => m.ready);
  }, { timeoutMs: 180_000, intervalMs: POLL_MS });
  const recovery = seconds(t0);
  progress('recovery floor: a ReplicaSet replaces its deleted etcd pod');
  const labels = { floor: 'rs' };
  await client.create(ReplicaSets, { apiVersion: 'apps/v1', kind: 'ReplicaSet', metadata: { name: 'floor', namespace: ns }, spec: { replicas: 1, selector: { matchLabels: labels }, template: { metadata: { labels }, spec: { containers: [{ name: 'etcd', image: IMAGE, command: ['/usr/local/bin/etcd', '--data-dir=/tmp/d', '--listen-metrics-urls=http://0.0.0.0:2381'], readinessProbe: { httpGet: { path: '/health', port: 2381 }, periodSeconds: 2 } }] } } } } as KubeObject);
  const list = async (): Promise<PodObj[]> => (await client.list(Pods, { namespace: ns, labelSelector: 'floor=rs' })).items;
  const first = await eventually('floor pod ready', async () => (await list()).find((p) => ready(p) && !p.metadata.deletionTimestamp), { timeoutMs: 60_000 });
  t0 = performance.now();
  await client.delete(Pods, { namespace: ns, name: first.metadata.name! });
  await eventually('replacement ready', async () => (await list()).some((p) => p.metadata.uid !== first.metadata.uid && ready(p)), { timeoutMs: 60_000, intervalMs: POLL_MS });
  const recoveryFloor = seconds(t0);
  report('etcd.recovery_s', recovery, 's');
  report('etcd.recovery_floor_s', recoveryFloor, 's');
  report('etcd.recovery_ratio', recovery / recoveryFloor, 'ratio');

  for (const [from, to] of [[3, 5], [5, 3]] as const) {
    progress(`scale ${from} → ${to}`);
    t0 = performance.now();
    await client.mergePatch(EtcdClusters, { namespace: ns, name: 'b' }, { spec: { replicas: to } });
    await waitAvailable(client, ns, 'b', to, 300_000);
    report(`etcd.scale_${from}_${to}_s`, seconds(t0), 's');
  }
  await dropNamespace(client, ns);
}

const UPGRADE_FROM = '3.5.35';
const UPGRADE_TO = '3.6.16';

/** Each member's pod deleted in turn (a plain restart on its volume, by the operator) → Ready and Available; the sum. */
async function plainRestarts(client: Client, ns: string, name: string): Promise<number> {
  let total = 0;
  const members = (await client.get(EtcdClusters, { namespace: ns, name })).status!.members!.map((m) => m.name);
  for (const member of members) {
    const uid = (await client.get(Pods, { namespace: ns, name: member })).metadata.uid;
    const t0 = performance.now();
    await client.delete(Pods, { namespace: ns, name: member });
    await eventually(`${member} back`, async () => {
      const pod = await client.find(Pods, { namespace: ns, name: member });
      const c = await client.get(EtcdClusters, { namespace: ns, name });
      return pod && pod.metadata.uid !== uid && ready(pod) && converged(c, 3);
    }, { timeoutMs: 300_000, intervalMs: POLL_MS });
    total += seconds(t0);
  }
  return total;
}

/** spec.version moved → the rollout done, every member on the new version and Ready. */
async function upgradeTo(client: Client, ns: string, name: string, version: string): Promise<number> {
  const t0 = performance.now();
  await client.mergePatch(EtcdClusters, { namespace: ns, name }, { spec: { version } });
  await eventually(`${ns}/${name} on ${version}`, async () => {
    const c = await client.get(EtcdClusters, { namespace: ns, name });
    const s = c.status;
    return !s?.rollout && s?.currentVersion === version && s.observedGeneration === c.metadata.generation && converged(c, 3);
  }, { timeoutMs: 900_000, intervalMs: POLL_MS });
  return seconds(t0);
}

async function upgradePhase(env: TestEnv): Promise<void> {
  const client = env.client;
  const ups: number[] = [];
  const floors: number[] = [];
  let failed = 0;
  let retried = 0;
  let lost = 0;
  for (let i = 0; i < Math.max(1, runs); i++) {
    const ns = await env.namespace('bench-upgrade');
    await applyCluster(client, ns, 'u', { replicas: 3, ...PLAINTEXT, version: UPGRADE_FROM });
    await eventually(`${ns}/u Available on ${UPGRADE_FROM}`, async () => {
      const c = await client.get(EtcdClusters, { namespace: ns, name: 'u' });
      return converged(c, 3) && c.status?.clusterVersion === '3.5.0' ? true : undefined;
    }, { timeoutMs: 300_000, intervalMs: POLL_MS });
    const checker = new DataChecker({ endpoints: [await clientServiceEndpoint(client, ns, 'u')], ratePerSecond: 20, retries: 3 });
    checker.start();
    await eventually('the checker writing', () => Promise.resolve(checker.stats().acknowledged >= 20), { timeoutMs: 60_000 });
    let up = 0;
    let floor = 0;
    const before = checker.stats();
    // Alternate which goes first, so that the cluster's age (and the machine's drift) favours neither.
    for (const side of i % 2 === 0 ? ['floor', 'upgrade'] : ['upgrade', 'floor']) {
      progress(`upgrade run ${i + 1}/${runs}: ${side}`);
      if (side === 'floor') floor = await plainRestarts(client, ns, 'u');
      else {
        const start = checker.stats();
        up = await upgradeTo(client, ns, 'u', UPGRADE_TO);
        const end = checker.stats();
        failed += end.unacknowledged - start.unacknowledged;
        retried += end.retried - start.retried;
      }
    }
    await checker.stop();
    const verified = await checker.verify({ timeoutMs: 60_000 });
    lost += verified.lost.length + verified.corrupted.length;
    await checker.close();
    progress(`  upgrade ${up.toFixed(1)} s, floor ${floor.toFixed(1)} s (ratio ${(up / floor).toFixed(2)}); writes: ${checker.stats().acknowledged - before.acknowledged} acknowledged, failed so far ${failed}, retried so far ${retried}`);
    ups.push(up);
    floors.push(floor);
    await dropNamespace(client, ns);
  }
  report('upgrade.duration_s.3', median(ups), 's');
  report('upgrade.floor_s.3', median(floors), 's');
  reportRatio('upgrade.duration_ratio.3', ups.map((u, i) => u / floors[i]!));
  report('upgrade.failed_requests', failed, 'requests');
  report('upgrade.retried_requests', retried, 'requests');
  report('upgrade.lost_writes', lost, 'writes');
}

async function tlsPhase(env: TestEnv): Promise<void> {
  const cluster = (side: string) => async (i: number): Promise<number> => {
    const ns = await env.namespace(`bench-${side}`);
    progress(`tls pair ${i + 1}/${runs}: ${side}`);
    const s = await operatorCluster(env.client, ns, 3, side === 'tls' ? { tls: { peer: {}, client: {} } } : {});
    progress(`  ${side}: ${s.toFixed(1)} s`);
    await dropNamespace(env.client, ns);
    return s;
  };
  const { ours, floor, ratios } = await interleavedPairs(Math.max(1, runs), cluster('tls'), cluster('plain'));
  report('tls.available_s.3', median(ours), 's');
  report('tls.plain_s.3', median(floor), 's');
  reportRatio('tls.available_ratio.3', ratios);
}

async function soakPhase(env: TestEnv): Promise<void> {
  // Each run is a whole soak in a fresh namespace; a figure is the median of its per-run values, with
  // the spread (.min, .max): one run's percentile on this noisy 2-core machine is not a figure.
  const per: Record<string, number[]> = {};
  const add = (name: string, value: number): void => void (per[name] ??= []).push(value);
  for (let run = 1; run <= soakRuns; run++) {
    progress(`soak run ${run}/${soakRuns}: ${soakClusters} clusters, ${soakRounds} rounds of 3 → 5 → 3`);
    const r = await runSoak(env, { clusters: soakClusters, rounds: soakRounds, log: (m) => progress(`soak: ${m}`) });
    add('etcd.scale_3_5_p50_s', percentile(r.scale35Seconds, 0.5));
    add('etcd.scale_3_5_p99_s', percentile(r.scale35Seconds, 0.99));
    add('etcd.scale_5_3_p50_s', percentile(r.scale53Seconds, 0.5));
    add('etcd.soak_bootstrap_p50_s', percentile(r.bootstrapSeconds, 0.5));
    add('etcd.stalled_steps', r.stalledSteps);
    add('etcd.retrying_steps', r.retryingSteps);
    add('etcd.peer_inactive_events', r.peerInactiveEvents);
    if (!r.eventsComplete) progress('soak: warning: not every MemberRemoved event was listed; the step counts may be short');
    for (const w of r.warnings) progress(`soak: ${w.cluster} ${w.reason} ×${w.count}: ${w.note}`);
    progress(`soak run ${run}: 3 → 5 p50 ${percentile(r.scale35Seconds, 0.5).toFixed(1)} s, p99 ${percentile(r.scale35Seconds, 0.99).toFixed(1)} s; stalled ${r.stalledSteps}; peer became inactive by cluster ${JSON.stringify(r.peerInactiveByCluster)} over ${r.podsLogged} pods`);
    await dropNamespace(env.client, r.namespace);
  }
  const units: Record<string, string> = { 'etcd.stalled_steps': 'steps', 'etcd.retrying_steps': 'steps', 'etcd.peer_inactive_events': 'lines' };
  for (const [name, values] of Object.entries(per)) {
    const unit = units[name] ?? 's';
    // Counts are summed over the runs (a stalled step in any run counts); times are medians with spread.
    if (unit !== 's') {
      report(name, values.reduce((a, b) => a + b, 0), unit);
      continue;
    }
    report(name, median(values), unit);
    report(`${name}.min`, Math.min(...values), unit);
    report(`${name}.max`, Math.max(...values), unit);
  }
}

async function idlePhase(env: TestEnv): Promise<void> {
  const client = env.client;
  progress('50 one-member clusters');
  const ns = await env.namespace('bench-idle');
  for (let i = 0; i < 50; i += 10) await Promise.all(Array.from({ length: 10 }, (_, j) => applyCluster(client, ns, `idle-${i + j}`, { replicas: 1, ...PLAINTEXT })));
  await eventually('50 clusters Available', async () => {
    const list = await client.list(EtcdClusters, { namespace: ns });
    return list.items.length === 50 && list.items.every((c) => c.status?.phase === 'Running');
  }, { timeoutMs: 900_000, intervalMs: 2000 });
  progress('settling 30 s, then measuring 60 s of rest');
  await new Promise((r) => setTimeout(r, 30_000));
  const before = await metrics(client);
  await new Promise((r) => setTimeout(r, 60_000));
  const after = await metrics(client);
  const delta = (k: string): number => (after.get(k) ?? 0) - (before.get(k) ?? 0);
  report('etcd.idle50.rss_mib', (after.get('process_resident_memory_bytes') ?? 0) / 1024 / 1024, 'MiB');
  report('etcd.idle50.cpu_s_per_min', delta('process_cpu_seconds_total'), 's/min');
  report('etcd.idle50.api_requests_per_min', delta('requests') + delta('requests_write'), 'requests/min');
  report('etcd.idle50.writes_per_min', delta('requests_write'), 'writes/min');
  report('etcd.idle50.lease_renewals_per_min', delta('requests_lease_write'), 'writes/min');
}

const run: Record<Phase, (env: TestEnv) => Promise<void>> = { available: availablePhase, upgrade: upgradePhase, tls: tlsPhase, soak: soakPhase, idle: idlePhase };
let env: TestEnv | undefined;
try {
  progress(`operator: build, load, install (phases: ${[...phases].join(', ')})`);
  env = await setUpOperator({ stepDeadlineSeconds: 60 });
  for (const phase of PHASES) {
    if (!phases.has(phase)) continue;
    // One phase failing (e.g. a soak cluster that never converges) still lets the others report.
    try {
      await run[phase](env);
    } catch (err) {
      progress(`phase ${phase} failed: ${(err as Error).message}`);
      process.exitCode = 1;
    }
  }
} finally {
  await env?.stop();
}
