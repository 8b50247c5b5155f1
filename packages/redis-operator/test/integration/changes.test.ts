// Changes to a running Redis on localkube, with real redis-server and redis-sentinel and the data checker writing
// (a write counts once WAIT 1 confirms a replica has it): a config change rolled out (replicas first, a planned
// Sentinel failover, the old primary last) with 0 acknowledged writes lost; a config that makes redis-server exit
// halts the rollout at the first replica with the reason, and reverting it resumes; a scale-down from 2 replicas
// to 1 (reclaimPolicy Delete) removes the highest instance, failing over first if it is the primary, deletes its
// claim and makes every Sentinel forget it, again with 0 acknowledged writes lost; then spec.engine redis 7.0.15 →
// valkey 8.0.1 (Debian bookworm-backports) is rolled in place, Sentinels included, with 0 acknowledged writes lost.
// Its NetworkPolicy (on by default; localkube enforces NetworkPolicy): a pod of its namespace reaches 6379 and 26379,
// a pod of another namespace neither, while the Redis keeps working.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive redis-operator
// @timeout 12m: image assembly on a cold cache (apt downloads), then a create, three rollouts and a scale-down
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { restrictedContainerSecurity, restrictedPodSecurity } from '@quorum/kit';
import { NetworkPolicies, PersistentVolumeClaims, Pods } from '@quorum/runtime';
import { eventually } from '@quorum/localkube/testing';
import { Redis } from 'ioredis';
import type { RedisStatus } from '../../src/api/redis.ts';
import { redisImage } from '../../src/image/names.ts';
import { buildValkeyImage } from '../../src/image/valkey.ts';
import { podsOfEntries } from '../../src/redis/readings.ts';
import { RedisDataChecker } from '../../src/testing/data-checker.ts';
import { available, redisReaders, settled, startRedisEnv, type RedisTestEnv } from './support.ts';

const NAME = 'shop';
let t: RedisTestEnv;
let redis: ReturnType<typeof redisReaders>;
let otherNs = '';

before(async () => {
  t = await startRedisEnv();
  await t.env.kube.loadImage((await buildValkeyImage()).archive);
  redis = redisReaders(t, NAME);
  // Started now, to come up while the first test runs: a probe in the Redis's namespace and one in another.
  otherNs = await t.env.namespace('redis-out');
  await Promise.all([probePod(t.ns), probePod(otherNs)]);
});

after(async () => {
  await t?.stopOperator();
  await t?.env.stop();
});

const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);

async function settledStatus(what: string, instances: number, generation = 0, timeoutMs = 180_000): Promise<RedisStatus> {
  return eventually(what, async () => {
    const s = await redis.status();
    return settled(s, instances, generation) ? s! : undefined;
  }, { timeoutMs, intervalMs: 500 });
}

/** Runs `change` with the data checker writing through `<name>`, and proves no acknowledged write was lost. */
async function withChecker(change: (checker: RedisDataChecker) => Promise<void>): Promise<void> {
  const checker = new RedisDataChecker({ host: await redis.serviceIP(NAME), port: 6379, password: await redis.password(), tls: await redis.serviceTLS(NAME), writers: 4 });
  checker.start();
  try {
    await eventually('acknowledged writes before the change', () => checker.acknowledged >= 50, { timeoutMs: 30_000, intervalMs: 100 });
    await change(checker);
    const acked = checker.acknowledged;
    await eventually('writes acknowledged after the change', () => checker.acknowledged >= acked + 50, { timeoutMs: 30_000, intervalMs: 100 });
  } finally {
    await checker.stop();
  }
  const report = await checker.verify();
  console.log(`checker: ${report.acknowledged} acknowledged, ${report.unacknowledged} unacknowledged, ${report.lost.length} lost`);
  assert.deepEqual(report.lost, []);
}

async function onPod<T>(pod: string, port: number, use: (c: Redis) => Promise<T>): Promise<T> {
  const c = new Redis({ host: await redis.podIP(pod), port, password: await redis.password(), tls: await redis.podTLS(pod), maxRetriesPerRequest: 1 });
  try {
    return await use(c);
  } finally {
    c.disconnect();
  }
}

const configOf = (pod: string, key: string): Promise<string> => onPod(pod, 6379, async (c) => ((await c.config('GET', key)) as string[])[1] ?? '');

test('a Redis with 1 primary, 2 replicas and 3 Sentinels becomes settled', async () => {
  const started = Date.now();
  await redis.create({ replicas: 2, storage: { size: '64Mi', reclaimPolicy: 'Delete' } });
  await settledStatus('Available, 3 instances and 3 Sentinels agreeing', 3);
  console.log(`apply → settled: ${seconds(started)} s`);
});

const PROBE = 'probe';

/** A pod of the Redis image with redis-cli for probeRedis (a redis-server on a port of its own keeps it running: one on no port exits). */
async function probePod(namespace: string): Promise<void> {
  await t.env.client.create(Pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: PROBE, namespace },
    spec: {
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      securityContext: restrictedPodSecurity(),
      containers: [{ name: PROBE, image: redisImage(), imagePullPolicy: 'IfNotPresent', command: ['/usr/bin/redis-server', '--port', '16379', '--save', ''], securityContext: restrictedContainerSecurity() }],
    },
  });
}

/** From the probe of `namespace`, a TLS PING to host:port: `open` (PONG, or NOAUTH: the server answered), `refused` (a policy's REJECT), or what redis-cli said. */
async function probeRedis(namespace: string, host: string, port: number): Promise<string> {
  const out = await t.env.kube.kubectl(['exec', '-n', namespace, PROBE, '--', '/usr/bin/redis-cli', '--tls', '--insecure', '-h', host, '-p', String(port), 'PING'], { allowFailure: true });
  if (/PONG|NOAUTH/.test(out)) return 'open';
  return /Connection refused/.test(out) ? 'refused' : out.trim();
}

test("its NetworkPolicy: the Redis's namespace reaches 6379 and 26379, another namespace neither, and the Redis keeps working", async () => {
  const started = Date.now();
  const policy = await t.env.client.get(NetworkPolicies, { namespace: t.ns, name: NAME });
  assert.ok(policy.metadata.ownerReferences?.some((r) => r.kind === 'Redis' && r.name === NAME && r.controller === true), 'owned by the Redis');
  const status = (await redis.status())!;
  const [primary, sentinel] = [await redis.podIP(status.primary!), await redis.podIP(`${NAME}-sentinel-0`)];
  const running = async (namespace: string): Promise<boolean> => !!(await t.env.client.get(Pods, { namespace, name: PROBE })).status?.containerStatuses?.[0]?.state?.running;
  await eventually('both probes running', async () => (await running(t.ns)) && (await running(otherNs)), { timeoutMs: 60_000 });
  // The positive signal first: the policy agent has synced the namespace's probe into its allow rules.
  await eventually("the Redis's namespace reaches an instance and a Sentinel, by pod IP and Service", async () =>
    (await probeRedis(t.ns, primary, 6379)) === 'open' && (await probeRedis(t.ns, sentinel, 26379)) === 'open' && (await probeRedis(t.ns, await redis.serviceIP(NAME), 6379)) === 'open', { timeoutMs: 60_000, intervalMs: 1000 });
  for (const [what, host, port] of [['an instance', primary, 6379], ['the primary Service', await redis.serviceIP(NAME), 6379], ['a Sentinel', sentinel, 26379], ['the Sentinel Service', await redis.serviceIP(`${NAME}-sentinel`), 26379]] as const) {
    assert.equal(await probeRedis(otherNs, host, port), 'refused', `another namespace must not reach ${what} (${host}:${port})`);
  }
  // The Redis keeps working behind it: replicas linked, Sentinels agreeing (the next test writes through it).
  await settledStatus('still settled behind its policy', 3);
  console.log(`NetworkPolicy checks: ${seconds(started)} s`);
});

test('a config change is rolled out replicas first, then a planned failover, then the old primary: 0 acknowledged writes lost', async () => {
  const before = (await redis.status())!;
  const oldPrimary = before.primary!;
  let after: RedisStatus | undefined;
  await withChecker(async () => {
    const started = Date.now();
    const generation = await redis.patchSpec({ config: [{ name: 'hz', value: '20' }] });
    after = await settledStatus('every instance rolled, settled again', 3, generation);
    console.log(`config change → rolled out and settled: ${seconds(started)} s`);
  });
  assert.notEqual(after!.primary, oldPrimary, 'the primary moved to an updated replica before the old one was rolled');
  for (const i of after!.instances ?? []) assert.equal(await configOf(i.name, 'hz'), '20', `${i.name} runs the new config`);
  const labelled = (await t.env.client.list(Pods, { namespace: t.ns, labelSelector: 'redis.quorum.dev/role=primary' })).items.map((p) => p.metadata.name);
  assert.deepEqual(labelled, [after!.primary]);
});

test('a config redis-server refuses halts the rollout at the first replica with the reason; reverting it resumes', async () => {
  const primary = (await redis.status())!.primary!;
  await redis.patchSpec({ config: [{ name: 'hz', value: '20' }, { name: 'maxclients', value: 'many' }] });
  const halted = await eventually('the rollout halted', async () => (await redis.status())?.rollout?.halted, { timeoutMs: 120_000, intervalMs: 500 });
  console.log(`halted at ${halted.instance} (${halted.reason}): ${halted.message}`);
  assert.equal(halted.reason, 'CrashLooping');
  assert.notEqual(halted.instance, primary, 'a replica is rolled first');
  const s = (await redis.status())!;
  assert.ok(available(s), 'the primary still serves');
  assert.equal(s.primary, primary, 'nothing else was touched');
  assert.equal(s.phase, 'Degraded');
  const started = Date.now();
  const generation = await redis.patchSpec({ config: [{ name: 'hz', value: '20' }] });
  await settledStatus('the reverted spec rolled back out, settled', 3, generation);
  console.log(`revert → settled: ${seconds(started)} s`);
});

test('scaling down from 2 replicas to 1 removes the highest instance (after a failover if it is primary), its claim and the Sentinels\' memory of it', async () => {
  const removed = `${NAME}-2`;
  await withChecker(async () => {
    const started = Date.now();
    const generation = await redis.patchSpec({ replicas: 1 });
    const s = await settledStatus('2 instances, settled', 2, generation);
    console.log(`scale-down 2 → 1 replicas → settled: ${seconds(started)} s (primary ${s.primary})`);
    assert.ok(!s.instances?.some((i) => i.name === removed));
  });
  await eventually(`the claim data-${removed} deleted (reclaimPolicy Delete)`, async () => {
    const claims = (await t.env.client.list(PersistentVolumeClaims, { namespace: t.ns })).items.map((c) => c.metadata.name);
    return !claims.includes(`data-${removed}`);
  }, { timeoutMs: 60_000, intervalMs: 500 });
  const s = (await redis.status())!;
  const replica = s.instances!.find((i) => i.name !== s.primary)!.name;
  await eventually('every Sentinel knows exactly the one replica left', async () => {
    for (let i = 0; i < 3; i++) {
      const known = await onPod(`${NAME}-sentinel-${i}`, 26379, async (c) => podsOfEntries(await c.call('SENTINEL', 'REPLICAS', NAME)));
      if (known.join() !== replica) return false;
    }
    return true;
  }, { timeoutMs: 60_000, intervalMs: 1000 });
});

test('spec.engine redis 7.0.15 → valkey 8.0.1 is rolled in place, Sentinels included: 0 acknowledged writes lost', async () => {
  let after: RedisStatus | undefined;
  await withChecker(async () => {
    const started = Date.now();
    const generation = await redis.patchSpec({ engine: 'valkey', version: '8.0.1' });
    after = await settledStatus('every pod on Valkey, settled', 2, generation, 240_000);
    console.log(`engine redis → valkey → rolled out and settled: ${seconds(started)} s`);
  });
  assert.deepEqual(after!.instances?.map((i) => i.version), ['8.0.1', '8.0.1']);
  for (let i = 0; i < 3; i++) {
    const server = await onPod(`${NAME}-sentinel-${i}`, 26379, async (c) => (await c.info('server')).match(/valkey_version:(\S+)/)?.[1]);
    assert.equal(server, '8.0.1', `${NAME}-sentinel-${i} runs Valkey`);
  }
});
