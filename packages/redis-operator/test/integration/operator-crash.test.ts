// The Redis operator killed right after every write it makes: each "process" is a fresh operator (empty caches,
// no memory) stopped by a failpoint the moment its write returns, through a create, a failover (the primary's pod
// deleted), a config rollout and a scale-down, with the data checker writing through `<name>` (a write counts
// once WAIT 1 confirms a replica has it). Every step must converge with exactly one primary, no acknowledged
// write lost, and nothing left behind.
// What this file needs, for the test harness (docs/testing.md):
// An in-process operator of its own namespace; it installs nothing (the files that install hold redis-operator).
// @exclusive none
// @timeout 25m: image assembly on a cold cache, then four crash runs, each bounded at 5 minutes
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, before, test } from 'node:test';
import { createLogger, PersistentVolumeClaims, Pods } from '@quorum/runtime';
import { eventually, type TestEnv } from '@quorum/localkube/testing';
import { createRedisOperator } from '../../src/operator/operator.ts';
import { RedisDataChecker } from '../../src/testing/data-checker.ts';
import { redisReaders, settled, startRedisEnv, type RedisTestEnv } from './support.ts';

const NAME = 'crashy';
const quiet = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, cb) => cb() }) });
let t: RedisTestEnv;
let env: TestEnv;
let redis: ReturnType<typeof redisReaders>;

class Crash extends Error {}

before(async () => {
  t = await startRedisEnv();
  // Only the crashing operators below act on this namespace.
  await t.stopOperator();
  env = t.env;
  redis = redisReaders(t, NAME);
});

after(async () => {
  await env?.stop();
});

/** Runs operator "processes" one after another until `done` holds; each dies right after its first write. */
async function runCrashingOperators(what: string, done: () => Promise<boolean>): Promise<void> {
  const writes: string[] = [];
  const started = Date.now();
  let lives = 0;
  while (!(await done())) {
    assert.ok(Date.now() - started < 300_000, `${what}: not converged after ${lives} operator lives; writes: ${writes.join(', ')}`);
    lives++;
    const stop = new AbortController();
    const manager = await createRedisOperator({
      logger: quiet,
      manager: { client: env.client, namespace: t.ns, gracefulShutdownMs: 1000 },
      afterWrite: (write) => {
        writes.push(write);
        stop.abort();
        throw new Crash(`failpoint after ${write}`);
      },
    });
    const running = manager.start(stop.signal).catch(() => undefined);
    // A life ends at its first write, or after a while with nothing to write (waiting on pods needs no write).
    await Promise.race([new Promise((r) => stop.signal.addEventListener('abort', r, { once: true })), new Promise((r) => setTimeout(r, 5000))]);
    stop.abort();
    await running;
  }
  console.log(`${what}: converged in ${((Date.now() - started) / 1000).toFixed(1)} s over ${lives} operator lives, ${writes.length} writes: ${writes.join(', ')}`);
}

// Converged: the status settled and the labels agree with it (separate writes: a life may end between them).
const isSettled = (instances: number, generation = 0) => async (): Promise<boolean> => settled(await redis.status(), instances, generation) && (await primaryLabelled());

async function primaryLabels(): Promise<{ labelled: string[]; primary: string | undefined }> {
  const labelled = (await env.client.list(Pods, { namespace: t.ns, labelSelector: 'redis.quorum.dev/role=primary' })).items.map((p) => p.metadata.name ?? '');
  return { labelled, primary: (await redis.status())?.primary };
}

/** Exactly one pod carries the primary label: the status's primary. */
const primaryLabelled = async (): Promise<boolean> => {
  const { labelled, primary } = await primaryLabels();
  return labelled.length === 1 && labelled[0] === primary;
};

async function onePrimaryLabelled(): Promise<void> {
  const { labelled, primary } = await primaryLabels();
  assert.deepEqual(labelled, [primary], 'exactly one pod carries the primary label');
}

/** Runs `change` with the checker writing; proves writes went on after it and none acknowledged was lost. */
async function withChecker(change: () => Promise<void>): Promise<void> {
  const checker = new RedisDataChecker({ host: await redis.serviceIP(NAME), port: 6379, password: await redis.password(), tls: await redis.serviceTLS(NAME), writers: 2 });
  checker.start();
  try {
    await eventually('acknowledged writes before the change', () => checker.acknowledged >= 50, { timeoutMs: 30_000, intervalMs: 100 });
    await change();
    const acked = checker.acknowledged;
    await eventually('writes acknowledged after the change', () => checker.acknowledged >= acked + 50, { timeoutMs: 30_000, intervalMs: 100 });
  } finally {
    await checker.stop();
  }
  const report = await checker.verify();
  console.log(`checker: ${report.acknowledged} acknowledged, ${report.unacknowledged} unacknowledged, ${report.lost.length} lost`);
  assert.deepEqual(report.lost, []);
}

test('created with the operator killed after every write: 1 primary, 2 replicas and 3 Sentinels settle', async () => {
  await redis.create({ replicas: 2, storage: { size: '64Mi', reclaimPolicy: 'Delete' } });
  await runCrashingOperators('create', isSettled(3));
  await onePrimaryLabelled();
});

test('the primary pod deleted with the operator killed after every write: it follows the Sentinels, 0 acknowledged writes lost', async () => {
  const old = (await redis.status())!.primary!;
  await withChecker(async () => {
    await env.client.delete(Pods, { namespace: t.ns, name: old });
    await runCrashingOperators('failover', async () => {
      const s = await redis.status();
      return settled(s, 3) && s?.primary !== old && (await primaryLabelled());
    });
  });
  await onePrimaryLabelled();
});

test('a config rollout with the operator killed after every write: 0 acknowledged writes lost', async () => {
  await withChecker(async () => {
    const generation = await redis.patchSpec({ config: [{ name: 'hz', value: '15' }] });
    await runCrashingOperators('rollout', isSettled(3, generation));
  });
  await onePrimaryLabelled();
});

test('a scale-down 2 → 1 replicas with the operator killed after every write: the highest instance and its claim go, 0 acknowledged writes lost', async () => {
  await withChecker(async () => {
    const generation = await redis.patchSpec({ replicas: 1 });
    await runCrashingOperators('scale-down', isSettled(2, generation));
  });
  await onePrimaryLabelled();
  assert.ok(!(await redis.status())!.instances!.some((i) => i.name === `${NAME}-2`));
  await eventually(`the claim data-${NAME}-2 deleted`, async () => {
    const claims = (await env.client.list(PersistentVolumeClaims, { namespace: t.ns })).items.map((c) => c.metadata.name);
    return !claims.includes(`data-${NAME}-2`);
  }, { timeoutMs: 60_000, intervalMs: 500 });
});
