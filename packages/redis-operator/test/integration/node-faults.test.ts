// A Redis through its primary's node faults, on localkube with real redis-server and redis-sentinel and the data
// checker writing through `<name>` (a write counts once WAIT 1 confirms a replica has it):
// - the primary's node network cut for 45 s: the Sentinels on the other side fail over, the old primary refuses
//   writes once its replicas are gone for min-replicas-max-lag, and on return it rejoins as a replica, the write it
//   took alone discarded;
// - the primary's node stopped, then started: the Sentinels fail over, the old instance comes back as a replica;
// - the primary's node drained: the operator moves the primary first (a planned failover), the budgets hold the
//   evictions until it has, and on uncordon every pod comes back.
// Every acknowledged write survives both.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive nodes
// @timeout 18m: image assembly on a cold cache, a create, then a drain and two node faults with 45-180 s bounds each
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Events, Nodes, PodDisruptionBudgets, Pods } from '@quorum/runtime';
import { eventually } from '@quorum/localkube/testing';
import type { RedisStatus } from '../../src/api/redis.ts';
import { RedisDataChecker } from '../../src/testing/data-checker.ts';
import { available, redisReaders, settled, startRedisEnv, type RedisTestEnv } from './support.ts';

const NAME = 'sturdy';
const CUT_SECONDS = 45;
let t: RedisTestEnv;
let redis: ReturnType<typeof redisReaders>;

before(async () => {
  t = await startRedisEnv();
  redis = redisReaders(t, NAME);
  await redis.create({ replicas: 2, storage: { size: '64Mi' } });
});

after(async () => {
  await t?.stopOperator();
  await t?.env.stop();
});

const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** Settled, and `rejoined` (if given) reported as a linked replica: an old primary back from a partition still says it is one until the Sentinels reconfigure it. */
async function settledStatus(what: string, rejoined?: string, timeoutMs = 240_000): Promise<RedisStatus> {
  return eventually(what, async () => {
    const s = await redis.status();
    const back = rejoined === undefined || s?.instances?.some((i) => i.name === rejoined && i.role === 'replica' && i.linkStatus === 'up');
    return settled(s, 3) && back ? s! : undefined;
  }, { timeoutMs, intervalMs: 500 }).catch(async (err: unknown) => {
    await explain();
    throw err;
  });
}

async function nodeOf(pod: string): Promise<string> {
  const node = (await t.env.client.get(Pods, { namespace: t.ns, name: pod })).spec?.nodeName;
  assert.ok(node, `${pod} is scheduled`);
  return node;
}

async function nodesReady(): Promise<void> {
  await eventually('every node Ready', async () => {
    const nodes = (await t.env.client.list(Nodes)).items;
    return nodes.every((n) => n.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
  }, { timeoutMs: 180_000, intervalMs: 1000 });
}

/** A command run by redis-cli inside an instance's own pod (kubectl exec reaches it through its kubelet, not the pod network). */
async function cliInPod(pod: string, ...command: string[]): Promise<string> {
  const out = await t.env.kube.kubectl(['exec', '-n', t.ns, pod, '-c', 'redis', '--', 'redis-cli', '-h', '127.0.0.1', '--tls', '--cacert', '/tls/ca.crt', '--no-auth-warning', ...command], { allowFailure: true });
  return out.trim();
}

/** Runs `fault` with the checker writing through `<name>`; proves writes resume after it and none acknowledged is lost. */
async function withChecker(fault: (checker: RedisDataChecker) => Promise<void>): Promise<void> {
  const checker = new RedisDataChecker({ host: await redis.serviceIP(NAME), port: 6379, password: await redis.password(), tls: await redis.serviceTLS(NAME), writers: 4 });
  checker.start();
  try {
    await eventually('acknowledged writes before the fault', () => checker.acknowledged >= 50, { timeoutMs: 30_000, intervalMs: 100 });
    await fault(checker);
  } finally {
    await checker.stop();
  }
  const report = await checker.verify();
  console.log(`checker: ${report.acknowledged} acknowledged, ${report.unacknowledged} unacknowledged, ${report.lost.length} lost`);
  assert.deepEqual(report.lost, []);
}

/** On a failure: what the operator reports, and what each instance and Sentinel says of itself (bounded: a pod may be unreachable). */
async function explain(): Promise<void> {
  console.log(`status: ${JSON.stringify(await redis.status())}`);
  const pods = (await t.env.client.list(Pods, { namespace: t.ns })).items.map((p) => ({ name: p.metadata.name!, node: p.spec?.nodeName, ready: p.status?.conditions?.find((c) => c.type === 'Ready')?.status, deleting: !!p.metadata.deletionTimestamp }));
  console.log(`pods: ${JSON.stringify(pods)}`);
  for (const { name } of pods) {
    const sentinel = name.includes('-sentinel-');
    const command = sentinel ? ['-p', '26379', 'SENTINEL', 'MASTER', NAME] : ['INFO', 'replication'];
    const out = await t.env.kube.kubectl(['exec', '--request-timeout=5s', '-n', t.ns, name, '-c', sentinel ? 'sentinel' : 'redis', '--', 'redis-cli', '-h', '127.0.0.1', '--tls', '--cacert', '/tls/ca.crt', '--no-auth-warning', ...command], { allowFailure: true });
    const logs = await t.env.kube.kubectl(['logs', '--request-timeout=5s', '-n', t.ns, name, '-c', sentinel ? 'sentinel' : 'redis', '--tail=12'], { allowFailure: true });
    console.log(`── ${name}: ${out.replace(/\s+/g, ' ').slice(0, 600)}\n${logs}`);
  }
}

/** Waits until the Service's writes go to a primary other than `old`, and are acknowledged there. */
async function failedOverFrom(old: string, checker: RedisDataChecker, since: number): Promise<RedisStatus> {
  try {
    return await failedOverFromOrThrow(old, checker, since);
  } catch (err) {
    await explain();
    throw err;
  }
}

async function failedOverFromOrThrow(old: string, checker: RedisDataChecker, since: number): Promise<RedisStatus> {
  const s = await eventually(`a primary other than ${old}, Available`, async () => {
    const st = await redis.status();
    return available(st) && st?.primary !== undefined && st.primary !== old ? st : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250 });
  const acked = checker.acknowledged;
  await eventually(`writes acknowledged through ${s.primary}`, () => checker.acknowledged >= acked + 50, { timeoutMs: 60_000, intervalMs: 100 });
  console.log(`fault → ${s.primary} primary and writes acknowledged through it: ${seconds(since)} s`);
  return s;
}

test('a Redis of 1 primary, 2 replicas and 3 Sentinels on three nodes', async () => {
  const s = await settledStatus('settled: 3 instances, 3 Sentinels agreeing');
  const instanceNodes = new Set(await Promise.all(s.instances!.map((i) => nodeOf(i.name))));
  assert.equal(instanceNodes.size, 3, 'the instances are spread over the three nodes');
});

test(`the primary's node network cut for ${CUT_SECONDS} s: the old primary refuses writes, fails over, and rejoins as a replica with its lone write discarded`, async () => {
  const old = (await settledStatus('settled before the fault')).primary!;
  const node = await nodeOf(old);
  let lone = '';
  await withChecker(async (checker) => {
    const cut = Date.now();
    await t.env.kube.cutNetwork(node);
    try {
      // Right after the cut the old primary may still take a write: its replicas only count as gone after
      // min-replicas-max-lag (10 s). Such a write never reached a replica, so it is never acknowledged.
      lone = await cliInPod(old, 'SET', 'quorum:lone-write', 'old-primary');
      console.log(`a write to the isolated old primary right after the cut: ${lone}`);
      const refused = await eventually('the isolated old primary refuses writes', async () => {
        const out = await cliInPod(old, 'SET', 'quorum:refused-write', 'old-primary');
        return /NOREPLICAS/.test(out) ? out : undefined;
      }, { timeoutMs: 30_000, intervalMs: 1000 });
      console.log(`the old primary refuses writes ${seconds(cut)} s after the cut: ${refused}`);
      await failedOverFrom(old, checker, cut);
      await pause(Math.max(0, cut + CUT_SECONDS * 1000 - Date.now()));
    } finally {
      await t.env.kube.restoreNetwork(node);
    }
    const healed = Date.now();
    const s = await settledStatus(`${old} back as a replica, settled`, old);
    assert.equal(s.instances?.find((i) => i.name === old)?.role, 'replica');
    console.log(`network restored → settled with ${old} a replica: ${seconds(healed)} s`);
  });
  const labelled = (await t.env.client.list(Pods, { namespace: t.ns, labelSelector: 'redis.quorum.dev/role=primary' })).items.map((p) => p.metadata.name);
  assert.deepEqual(labelled, [(await redis.status())!.primary], 'exactly one pod carries the primary label');
  // The write the old primary took alone is gone: it resynchronised from the new primary.
  assert.equal(await cliInPod(old, 'GET', 'quorum:lone-write'), '', `the lone write (${lone}) was discarded on ${old}`);
  assert.equal(await cliInPod(old, 'EXISTS', 'quorum:refused-write'), '0');
});

test("the primary's node stopped, then started: the Sentinels fail over, and the old instance rejoins as a replica", async () => {
  const old = (await settledStatus('settled before the fault')).primary!;
  const node = await nodeOf(old);
  // What else the stop takes down, printed for the failover time below (Sentinel resolves hostnames with
  // blocking lookups: a CoreDNS pod on the stopped node, still behind the kube-dns Service, may slow them).
  const onNode = async (namespace: string, selector: string): Promise<string[]> =>
    (await t.env.client.list(Pods, { namespace, labelSelector: selector })).items.filter((p) => p.spec?.nodeName === node).map((p) => p.metadata.name ?? '');
  console.log(`stopping ${node}: CoreDNS pods there ${JSON.stringify(await onNode('kube-system', 'k8s-app=kube-dns'))}, Redis pods there ${JSON.stringify(await onNode(t.ns, `app.kubernetes.io/instance=${NAME}`))}`);
  await withChecker(async (checker) => {
    const stopped = Date.now();
    await t.env.kube.stopNode(node);
    try {
      await failedOverFrom(old, checker, stopped);
    } finally {
      await t.env.kube.startNode(node);
    }
    const started = Date.now();
    await nodesReady();
    const s = await settledStatus(`${old} back as a replica, settled`, old);
    assert.equal(s.instances?.find((i) => i.name === old)?.role, 'replica');
    console.log(`node started → settled with ${old} a replica: ${seconds(started)} s`);
  });
});

// Last: a Sentinel evicted by the drain is made again on another node (Sentinels have no volume) and stays there
// after the uncordon, so two Sentinels may then share a node (docs/redis.md, Node drains), which the faults above
// must not meet.
test("the primary's node drained (kubectl drain): the primary moves first, the budgets hold the evictions, and every pod comes back on uncordon", async () => {
  const old = (await settledStatus('settled before the drain')).primary!;
  const node = await nodeOf(old);
  const budgets = (await t.env.client.list(PodDisruptionBudgets, { namespace: t.ns })).items.map((b) => `${b.metadata.name}:${String(b.spec?.minAvailable)}`).sort();
  assert.deepEqual(budgets, [`${NAME}-primary:1`, `${NAME}-replicas:1`, `${NAME}-sentinel:2`]);
  let drainOutput = '';
  await withChecker(async (checker) => {
    const started = Date.now();
    // Only this Redis's pods are evicted (the suite's shared pods on the node stay), through the eviction API as
    // any drain: kubectl cordons the node, then retries every refused eviction every 5 s until the timeout.
    const drain = t.env.kube.kubectl(['drain', node, `--pod-selector=app.kubernetes.io/instance=${NAME}`, '--ignore-daemonsets', '--delete-emptydir-data', '--timeout=180s'], { allowFailure: true });
    try {
      const s = await failedOverFrom(old, checker, started);
      assert.notEqual(await nodeOf(s.primary!), node, 'the new primary is on another node');
      drainOutput = await drain;
      console.log(`kubectl drain: ${drainOutput.trim().split('\n').filter((l) => /evict|drained|budget|error/i.test(l)).slice(-12).join(' | ')}`);
      assert.match(drainOutput, new RegExp(`node/${node} drained`), 'the drain finished within its 180 s');
      console.log(`drain of ${node} done: ${seconds(started)} s`);
      const events = (await t.env.client.list(Events, { namespace: t.ns })).items;
      assert.ok(events.some((e) => e.reason === 'PlannedFailover' && /node drain: the primary .* is cordoned/.test(e.note ?? '')), 'the operator asked for the failover as a planned change');
    } finally {
      await t.env.kube.kubectl(['uncordon', node]);
    }
    const uncordoned = Date.now();
    const s = await settledStatus(`${old} back as a replica after the uncordon, settled`, old);
    assert.equal(s.instances?.find((i) => i.name === old)?.role, 'replica');
    console.log(`uncordon → settled with ${old} a replica: ${seconds(uncordoned)} s`);
  });
});
