// How fast a Redis serves, and keeps serving, on localkube with real redis-server and redis-sentinel (Redis 7.0.15,
// TLS and auth by default, Sentinel down-after-milliseconds at its default of 5 s): `npm run bench -- redis-serving`
// (`npm run bench -- redis` runs it with the backup and RSS benches). QUORUM_BENCH_RUNS (default 5) pairs each,
// interleaved with the floor, the order alternating within each pair; QUORUM_BENCH_PHASES picks phases.
//   failover:  redis.failover_s             the primary's pod deleted → a SET through the `<name>` Service is
//                                           answered OK (new connection every 100 ms); median, and .max (of 5
//                                           runs: the p99 goal of the issue is read against it).
//              redis.failover_floor_s       the floor: the same pods, the operator stopped, Sentinel's own
//                                           failover: a Sentinel-protocol client asks a surviving Sentinel for
//                                           the primary and writes to it (what a Sentinel-aware client does).
//              redis.failover_ratio         per-pair ours / floor.
//   available: redis.available_s.3          a Redis of 1 primary + 2 replicas + 3 Sentinels applied → every pod
//                                           Ready and a SET through `<name>` confirmed by WAIT 2.
//              redis.available_floor_s.3    the floor: the same objects the operator made (Secrets, ConfigMap,
//                                           Services, claims, pods), created at once by hand with no operator, to
//                                           the same signal.
//              redis.available_ratio.3      per-pair ours / floor (goal ≤ 1.2).
//   rollout:   redis.rollout_lost_acked_writes  a config change rolled out (replicas, a planned failover, the old
//                                           primary) with the data checker writing: acknowledged writes lost (goal 0).
// The operator runs in this process (as in the integration tests), watching the bench's namespace.
import { Writable } from 'node:stream';
import { ConfigMaps, createLogger, PersistentVolumeClaims, Pods, Secrets, Services, type KubeObject, type Manager, type ResourceType } from '@quorum/runtime';
import { eventually } from '@quorum/localkube/testing';
import { Redis } from 'ioredis';
import { benchRuns, interleavedPairs, median, progressTo, report, reportRatio, selectedPhases } from '../../etcd-operator/bench/figures.ts';
import { createRedisOperator } from '../src/operator/operator.ts';
import { Redises } from '../src/resources.ts';
import { RedisDataChecker } from '../src/testing/data-checker.ts';
import { redisReaders, settled, startRedisEnv } from '../test/integration/support.ts';

const progress = progressTo('redis serving bench');
const runs = benchRuns();
const phases = selectedPhases(['failover', 'available', 'rollout'] as const);
const quiet = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));
const since = (t0: number): number => (performance.now() - t0) / 1000;

const t = await startRedisEnv();
await t.stopOperator();
const { env, ns } = t;
let operator: { manager: Manager; stop: AbortController; running: Promise<void> } | undefined;

async function startOperator(): Promise<void> {
  const manager = await createRedisOperator({ logger: quiet, manager: { client: env.client, namespace: ns, gracefulShutdownMs: 1000 } });
  const stop = new AbortController();
  operator = { manager, stop, running: manager.start(stop.signal).catch(() => undefined) };
}
async function stopOperator(): Promise<void> {
  operator?.stop.abort();
  await operator?.running;
  operator = undefined;
}

/**
 * One SET on a fresh TLS connection: the pod that took it (its replica-announce-ip names it), or undefined when
 * none did. A deleted pod keeps serving while it terminates: only a write to another pod counts as failed over.
 */
async function writtenOn(host: string, servername: string, password: string, ca: string): Promise<string | undefined> {
  const c = new Redis({ host, port: 6379, password, tls: { ca, servername }, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 500, commandTimeout: 1000, retryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    await c.connect();
    if ((await c.set('bench:failover', String(Date.now()))) !== 'OK') return undefined;
    const [, announced] = (await c.config('GET', 'replica-announce-ip')) as string[];
    return announced?.split('.')[0];
  } catch {
    return undefined;
  } finally {
    c.disconnect();
  }
}

async function until(what: string, check: () => Promise<boolean>, timeoutMs: number): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!(await check())) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await pause(100);
  }
}


async function failoverPhase(): Promise<void> {
  const NAME = 'fo';
  const redis = redisReaders(t, NAME);
  await startOperator();
  await redis.create({ replicas: 2, storage: { size: '64Mi' } });
  // The status alone can be stale (the floor stops the operator): every pod must be there and Ready too.
  const settledAgain = (): Promise<unknown> => eventually(`${NAME} settled, every pod Ready`, async () => settled(await redis.status(), 3) && (await podsReady(NAME)), { timeoutMs: 240_000, intervalMs: 500 });
  await settledAgain();
  const password = await redis.password();
  const { ca } = await redis.serviceTLS(NAME);
  const ours = async (run: number): Promise<number> => {
    const old = (await redis.status())!.primary!;
    const [service, servername] = [await redis.serviceIP(NAME), `${NAME}.${ns}.svc`];
    const t0 = performance.now();
    await env.client.delete(Pods, { namespace: ns, name: old });
    await until('a write through the Service to another pod', async () => ((await writtenOn(service, servername, password, ca)) ?? old) !== old, 120_000);
    const s = since(t0);
    progress(`ours ${run}: ${old} deleted → a write through ${NAME}: ${s.toFixed(1)} s`);
    await settledAgain();
    return s;
  };
  const floor = async (run: number): Promise<number> => {
    const old = (await redis.status())!.primary!;
    const sentinels = await Promise.all([0, 1, 2].map(async (i) => ({ name: `${NAME}-sentinel-${i}`, ip: await redis.podIP(`${NAME}-sentinel-${i}`) })));
    const ips = new Map(await Promise.all((await redis.status())!.instances!.map(async (i) => [i.name, await redis.podIP(i.name)] as const)));
    await stopOperator();
    const t0 = performance.now();
    await env.client.delete(Pods, { namespace: ns, name: old });
    await until('a write to the primary a Sentinel names', async () => {
      for (const s of sentinels) {
        const named = await askSentinel(s.ip, `${s.name}.${NAME}-headless.${ns}.svc`, password, ca, NAME);
        const pod = named?.split('.')[0];
        if (pod && pod !== old && ips.has(pod)) return (await writtenOn(ips.get(pod)!, named, password, ca)) === pod;
      }
      return false;
    }, 120_000);
    const s = since(t0);
    progress(`floor ${run}: ${old} deleted → a write to the primary the Sentinels name: ${s.toFixed(1)} s`);
    await startOperator();
    await settledAgain();
    return s;
  };
  const pairs = await interleavedPairs(runs, ours, floor);
  report('redis.failover_s', median(pairs.ours), 's');
  report('redis.failover_s.max', Math.max(...pairs.ours), 's');
  report('redis.failover_floor_s', median(pairs.floor), 's');
  reportRatio('redis.failover_ratio', pairs.ratios);
  await env.client.delete(Redises, { namespace: ns, name: NAME });
  await stopOperator();
}

/** The primary's host a Sentinel names (SENTINEL GET-MASTER-ADDR-BY-NAME), or undefined when it cannot be asked. */
async function askSentinel(ip: string, servername: string, password: string, ca: string, name: string): Promise<string | undefined> {
  const c = new Redis({ host: ip, port: 26379, password, tls: { ca, servername }, lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 500, commandTimeout: 1000, retryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    await c.connect();
    const [host] = (await c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', name)) as string[];
    return host;
  } catch {
    return undefined;
  } finally {
    c.disconnect();
  }
}

/** Every pod of `name` there (3 instances, 3 Sentinels), none terminating, all Ready. */
async function podsReady(name: string): Promise<boolean> {
  const pods = (await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items;
  return pods.length === 6 && pods.every((p) => !p.metadata.deletionTimestamp && p.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True'));
}

/** Every pod of `name` Ready and a SET through `<name>` confirmed by 2 replicas. */
async function serving(name: string, timeoutMs: number): Promise<void> {
  const redis = redisReaders(t, name);
  await until(`${name} serving`, async () => {
    if (!(await podsReady(name))) return false;
    const c = new Redis({ host: await redis.serviceIP(name), port: 6379, password: await redis.password(), tls: await redis.serviceTLS(name), lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 1000, commandTimeout: 3000, retryStrategy: () => null });
    c.on('error', () => undefined);
    try {
      await c.connect();
      await c.set('bench:available', '1');
      return ((await c.call('WAIT', '2', '2000')) as number) >= 2;
    } catch {
      return false;
    } finally {
      c.disconnect();
    }
  }, timeoutMs);
}

const KINDS: ResourceType[] = [Secrets, ConfigMaps, Services, PersistentVolumeClaims, Pods] as ResourceType[];
type Made = { kind: ResourceType; object: KubeObject };

/** What the operator made for `name`, as a user would write it by hand: no owner, status or server-set fields. */
async function madeFor(name: string): Promise<Made[]> {
  const objects: Made[] = [];
  for (const kind of KINDS) {
    for (const o of (await env.client.list(kind, { namespace: ns })).items) {
      const byName = o.metadata.name === name || o.metadata.name?.startsWith(`${name}-`) || o.metadata.name?.startsWith(`data-${name}-`);
      if (!byName) continue;
      const { uid: _u, resourceVersion: _r, creationTimestamp: _c, ownerReferences: _o, managedFields: _m, generation: _g, deletionTimestamp: _d, deletionGracePeriodSeconds: _dg, finalizers: _f, ...metadata } = o.metadata;
      const copy = { ...o, apiVersion: kind.apiVersion, kind: kind.kind, metadata: { ...metadata, annotations: Object.fromEntries(Object.entries(metadata.annotations ?? {}).filter(([k]) => !k.startsWith('pv.kubernetes.io/') && !k.startsWith('volume.'))) } } as KubeObject & { status?: unknown; spec?: Record<string, unknown> };
      delete copy.status;
      if (kind === Services && copy.spec) for (const f of ['clusterIP', 'clusterIPs']) delete copy.spec[f];
      if (kind === PersistentVolumeClaims && copy.spec) delete copy.spec['volumeName'];
      if (kind === Pods && copy.spec) delete copy.spec['nodeName'];
      objects.push({ kind, object: copy });
    }
  }
  return objects;
}

async function goneAll(name: string): Promise<void> {
  await until(`every object of ${name} gone`, async () => {
    for (const kind of KINDS) {
      const left = (await env.client.list(kind, { namespace: ns })).items.filter((o) => o.metadata.name === name || o.metadata.name?.startsWith(`${name}-`) || o.metadata.name?.startsWith(`data-${name}-`));
      if (left.length > 0) return false;
    }
    return true;
  }, 180_000);
}

async function availablePhase(): Promise<void> {
  const NAME = 'av';
  let byHand: Made[] = [];
  await startOperator();
  const ours = async (run: number): Promise<number> => {
    const t0 = performance.now();
    await redisReaders(t, NAME).create({ replicas: 2, storage: { size: '64Mi', reclaimPolicy: 'Delete' } });
    await serving(NAME, 300_000);
    const s = since(t0);
    progress(`ours ${run}: applied → serving: ${s.toFixed(1)} s`);
    if (byHand.length === 0) byHand = await madeFor(NAME);
    await env.client.delete(Redises, { namespace: ns, name: NAME });
    await goneAll(NAME);
    return s;
  };
  const floor = async (run: number): Promise<number> => {
    if (byHand.length === 0) await ours(-1); // the objects to create by hand come from the operator's first run
    const t0 = performance.now();
    await Promise.all(byHand.map(({ kind, object }) => env.client.create(kind, object)));
    await serving(NAME, 300_000);
    const s = since(t0);
    progress(`floor ${run}: created by hand → serving: ${s.toFixed(1)} s`);
    for (const { kind, object } of [...byHand].reverse()) await env.client.delete(kind, { namespace: ns, name: object.metadata.name! }).catch(() => undefined);
    await goneAll(NAME);
    return s;
  };
  const pairs = await interleavedPairs(runs, ours, floor);
  report('redis.available_s.3', median(pairs.ours), 's');
  report('redis.available_floor_s.3', median(pairs.floor), 's');
  reportRatio('redis.available_ratio.3', pairs.ratios);
  await stopOperator();
}

async function rolloutPhase(): Promise<void> {
  const NAME = 'ro';
  const redis = redisReaders(t, NAME);
  await startOperator();
  await redis.create({ replicas: 2, storage: { size: '64Mi' } });
  await eventually(`${NAME} settled`, async () => settled(await redis.status(), 3), { timeoutMs: 240_000, intervalMs: 500 });
  const lost: number[] = [];
  for (let run = 0; run < runs; run++) {
    const checker = new RedisDataChecker({ host: await redis.serviceIP(NAME), port: 6379, password: await redis.password(), tls: await redis.serviceTLS(NAME), writers: 4 });
    checker.start();
    try {
      await eventually('acknowledged writes', () => checker.acknowledged >= 50, { timeoutMs: 30_000, intervalMs: 100 });
      const generation = (await env.client.mergePatch(Redises, { namespace: ns, name: NAME }, { spec: { config: [{ name: 'hz', value: String(11 + run) }] } })).metadata.generation ?? 0;
      await eventually('rolled out, settled', async () => settled(await redis.status(), 3, generation), { timeoutMs: 300_000, intervalMs: 500 });
    } finally {
      await checker.stop();
    }
    const r = await checker.verify();
    progress(`rollout ${run}: ${r.acknowledged} acknowledged, ${r.lost.length} lost`);
    lost.push(r.lost.length);
  }
  report('redis.rollout_lost_acked_writes', Math.max(...lost), 'writes');
  await stopOperator();
}

// Last: the phases use the declarations above (a top-level await before them would meet them uninitialised).
try {
  if (phases.has('failover')) await failoverPhase();
  if (phases.has('available')) await availablePhase();
  if (phases.has('rollout')) await rolloutPhase();
} finally {
  await stopOperator();
  await env.stop();
}
