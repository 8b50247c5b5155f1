// A Redis recovering by itself from losing pods, on localkube with real redis-server and redis-sentinel:
// - a Sentinel and the primary lost together: the two Sentinels left fail over, and the one made anew monitors
//   the new primary (not the one the Redis started with), no acknowledged write lost;
// - every pod deleted at once: the set comes back by itself, on the same primary, with the same data;
// - with `sentinel.replicas: 0` the operator is the authority: the primary's pod deleted, it promotes the replica,
//   no acknowledged write lost;
// - then that Redis's CA rotated (redis.quorum.dev/rotate-ca: TrustNew, a 5 s overlap, Reissue, DropOld, each
//   certificate reloaded in place) and its certificate renewed on request (redis.quorum.dev/rotate-certificates),
//   with the data checker writing through a client that trusts the two-CA bundle: no acknowledged write lost, every
//   instance ends serving a certificate only the new CA verifies, and the old CA is gone from the bundle. (The
//   Sentinel-less Redis keeps it short: three Sentinels would add three rolling restarts, unit-tested instead.)
// - and a config change of that Redis rolled out with the operator's own FAILOVER TO, no acknowledged write lost.
// What this file needs, for the test harness (docs/testing.md):
// An in-process operator of its own namespace; it installs nothing (the files that install hold redis-operator).
// @exclusive none
// @timeout 16m: image assembly on a cold cache, two creates, three recoveries with 120-240 s bounds each, a CA rotation, a rollout
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, test } from 'node:test';
import { connect } from 'node:tls';
import { pemCertificates } from '@quorum/kit';
import { Events, Pods, Secrets, type OpenObject } from '@quorum/runtime';
import { eventually } from '@quorum/localkube/testing';
import { Redis } from 'ioredis';
import type { RedisStatus } from '../../src/api/redis.ts';
import { RedisDataChecker } from '../../src/testing/data-checker.ts';
import { Redises } from '../../src/resources.ts';
import { available, redisReaders, settled, startRedisEnv, type RedisTestEnv } from './support.ts';

// The operator of this file keeps a CA rotation's two-CA bundle 5 s before the servers move to the new CA (7 days by default).
process.env['CA_ROTATION_OVERLAP_SECONDS'] = '5';

const NAME = 'mend';
const SOLO = 'solo';
let t: RedisTestEnv;
let redis: ReturnType<typeof redisReaders>;
let solo: ReturnType<typeof redisReaders>;

before(async () => {
  t = await startRedisEnv();
  redis = redisReaders(t, NAME);
  solo = redisReaders(t, SOLO);
  // Both made now, to come up side by side.
  await redis.create({ replicas: 2, storage: { size: '64Mi' } });
  await solo.create({ replicas: 1, sentinel: { replicas: 0 }, storage: { size: '64Mi' } });
});

after(async () => {
  await t?.stopOperator();
  await t?.env.stop();
});

const seconds = (since: number): string => ((Date.now() - since) / 1000).toFixed(1);

async function settledStatus(reader: ReturnType<typeof redisReaders>, what: string, instances: number, sentinels: number, timeoutMs = 240_000): Promise<RedisStatus> {
  return eventually(what, async () => {
    const s = await reader.status();
    return settled(s, instances, 0, sentinels) ? s! : undefined;
  }, { timeoutMs, intervalMs: 500 });
}

async function checkerOf(reader: ReturnType<typeof redisReaders>, name: string): Promise<RedisDataChecker> {
  return new RedisDataChecker({ host: await reader.serviceIP(name), port: 6379, password: await reader.password(), tls: await reader.serviceTLS(name), writers: 4 });
}

async function assertNoneLost(checker: RedisDataChecker): Promise<void> {
  const report = await checker.verify(60_000);
  console.log(`checker: ${report.acknowledged} acknowledged, ${report.unacknowledged} unacknowledged, ${report.lost.length} lost`);
  assert.deepEqual(report.lost, []);
  assert.ok(report.acknowledged >= 100);
}

/** With the checker writing: deletes `pods` at once, waits for a primary other than `old` taking acknowledged writes. */
async function failOverAfterDeleting(reader: ReturnType<typeof redisReaders>, checker: RedisDataChecker, old: string, pods: string[]): Promise<RedisStatus> {
  await eventually('acknowledged writes before the fault', () => checker.acknowledged >= 50, { timeoutMs: 30_000, intervalMs: 100 });
  const deleted = Date.now();
  await Promise.all(pods.map((name) => t.env.client.delete(Pods, { namespace: t.ns, name })));
  const s = await eventually(`a primary other than ${old}, Available`, async () => {
    const st = await reader.status();
    return available(st) && st?.primary !== undefined && st.primary !== old ? st : undefined;
  }, { timeoutMs: 120_000, intervalMs: 250 });
  const acked = checker.acknowledged;
  await eventually(`writes acknowledged through ${s.primary}`, () => checker.acknowledged >= acked + 50, { timeoutMs: 60_000, intervalMs: 100 });
  console.log(`${pods.join(' and ')} deleted → ${s.primary} primary and writes acknowledged through it: ${seconds(deleted)} s`);
  return s;
}

test('a Redis of 1 primary, 2 replicas and 3 Sentinels, and one of 1 primary, 1 replica and no Sentinel, settle', async () => {
  await Promise.all([settledStatus(redis, `${NAME} settled`, 3, 3), settledStatus(solo, `${SOLO} settled`, 2, 0)]);
});

test('a Sentinel and the primary lost together: the two left fail over, and the Sentinel made anew monitors the new primary', async () => {
  const old = (await redis.status())!.primary!;
  const lostSentinel = `${NAME}-sentinel-0`;
  const checker = await checkerOf(redis, NAME);
  checker.start();
  let primary = '';
  try {
    primary = (await failOverAfterDeleting(redis, checker, old, [old, lostSentinel])).primary!;
  } finally {
    await checker.stop();
  }
  await settledStatus(redis, 'settled again, 3 Sentinels agreeing', 3, 3);
  const pw = await redis.password();
  const sentinel = new Redis({ host: await redis.podIP(lostSentinel), port: 26379, password: pw, tls: await redis.podTLS(lostSentinel), maxRetriesPerRequest: 1 });
  try {
    const [host] = (await sentinel.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', NAME)) as string[];
    assert.ok(host?.startsWith(`${primary}.`), `${lostSentinel} monitors ${primary}, not ${host}`);
  } finally {
    sentinel.disconnect();
  }
  await assertNoneLost(checker);
});

test('every pod deleted at once: the set comes back by itself, on the same primary, with the same data', async () => {
  const before = (await redis.status())!;
  const checker = await checkerOf(redis, NAME);
  checker.start();
  try {
    await eventually('acknowledged writes', () => checker.acknowledged >= 200, { timeoutMs: 30_000, intervalMs: 100 });
  } finally {
    await checker.stop();
  }
  const listed = (await t.env.client.list(Pods, { namespace: t.ns, labelSelector: `app.kubernetes.io/instance=${NAME}` })).items;
  assert.equal(listed.length, 6, `3 instances and 3 Sentinels: ${listed.map((p) => p.metadata.name).join(', ')}`);
  const oldUIDs = new Set(listed.map((p) => p.metadata.uid));
  const deleted = Date.now();
  await Promise.all(listed.map((p) => t.env.client.delete(Pods, { namespace: t.ns, name: p.metadata.name! })));
  // The positive signal before "settled": every pod is a new one (a settled status read now could be the old one).
  await eventually('every pod made anew', async () => {
    const now = (await t.env.client.list(Pods, { namespace: t.ns, labelSelector: `app.kubernetes.io/instance=${NAME}` })).items;
    return now.length === 6 && now.every((p) => !oldUIDs.has(p.metadata.uid) && !p.metadata.deletionTimestamp);
  }, { timeoutMs: 120_000, intervalMs: 500 });
  // What the status says while it settles, each change once, with when (a slow recovery shows where it waited).
  let said = '';
  const s = await eventually('settled after every pod was deleted', async () => {
    const st = await redis.status();
    const now = (st?.conditions ?? []).filter((c) => c.status === 'True' && c.type !== 'Available').map((c) => `${c.type}: ${c.message}`).join(' | ');
    if (now !== said) console.log(`+${seconds(deleted)} s ${(said = now)}`);
    return settled(st, 3, 0, 3) ? st! : undefined;
  }, { timeoutMs: 240_000, intervalMs: 500 });
  console.log(`every pod deleted → settled: ${seconds(deleted)} s (primary ${s.primary}, before ${before.primary})`);
  if (Date.now() - deleted > 30_000) {
    for (const pod of listed.map((p) => p.metadata.name!)) {
      const container = pod.includes('-sentinel-') ? 'sentinel' : 'redis';
      console.log(`── ${pod} (slow recovery):\n${await t.env.kube.kubectl(['logs', '--request-timeout=5s', '-n', t.ns, pod, '-c', container, '--tail=25'], { allowFailure: true })}`);
    }
  }
  // Why a slow recovery was slow (about 70 s in some runs, 11 s in most): containers that exited on the way back.
  const restarted = (await t.env.client.list(Pods, { namespace: t.ns, labelSelector: `app.kubernetes.io/instance=${NAME}` })).items.flatMap((p) =>
    (p.status?.containerStatuses ?? []).filter((c) => c.restartCount > 0).map((c) => `${p.metadata.name}/${c.name}: ${c.restartCount} restart(s), last exit ${c.lastState?.terminated?.exitCode ?? '?'} ${c.lastState?.terminated?.reason ?? ''} ${c.lastState?.terminated?.message?.trim().slice(-200) ?? ''}`));
  console.log(`containers restarted on the way back: ${restarted.join('; ') || 'none'}`);
  assert.equal(s.primary, before.primary, 'the primary the Sentinels last decided comes back as primary');
  await assertNoneLost(checker);
});

test('with no Sentinel, the operator promotes the replica when the primary pod is deleted', async () => {
  const old = (await solo.status())!.primary!;
  const checker = await checkerOf(solo, SOLO);
  checker.start();
  try {
    await failOverAfterDeleting(solo, checker, old, [old]);
  } finally {
    await checker.stop();
  }
  const s = await settledStatus(solo, `${old} back as a replica, settled`, 2, 0);
  assert.equal(s.instances?.find((i) => i.name === old)?.role, 'replica');
  await assertNoneLost(checker);
});

/** A key of a Secret of the test namespace, decoded. */
async function secretKey(name: string, key: string): Promise<string> {
  return Buffer.from((await t.env.client.get(Secrets, { namespace: t.ns, name })).data?.[key] ?? '', 'base64').toString('utf8');
}

/** The fingerprint of the certificate each solo instance serves, verified by `ca` alone (a TLS handshake, no command); undefined for one that fails. */
async function servedCertificates(ca: string): Promise<(string | undefined)[]> {
  return Promise.all([`${SOLO}-0`, `${SOLO}-1`].map(async (pod) => {
    const host = await solo.podIP(pod);
    return new Promise<string | undefined>((resolve) => {
      const socket = connect({ host, port: 6379, ca, servername: `${pod}.${SOLO}-headless.${t.ns}.svc`, timeout: 3000 }, () => {
        resolve(socket.getPeerCertificate().fingerprint256);
        socket.destroy();
      });
      socket.on('error', () => resolve(undefined));
      socket.on('timeout', () => socket.destroy());
      socket.on('close', () => resolve(undefined));
    });
  }));
}

const annotate = (annotations: Record<string, string>): Promise<unknown> => t.env.client.mergePatch(Redises, { namespace: t.ns, name: SOLO }, { metadata: { annotations } });

test('its CA rotated and its certificate renewed on request, a client trusting the two-CA bundle writing: 0 acknowledged writes lost, only the new CA left', async () => {
  const oldCA = new X509Certificate(await secretKey(`${SOLO}-ca`, 'tls.crt'));
  const started = Date.now();
  await annotate({ 'redis.quorum.dev/rotate-ca': 'e2e' });
  // TrustNew: the bundle clients read holds both CAs, for the overlap; status says until when.
  const bundle = await eventually('the two-CA bundle in solo-tls', async () => {
    const b = await secretKey(`${SOLO}-tls`, 'ca.crt');
    return pemCertificates(b).length === 2 ? b : undefined;
  }, { timeoutMs: 30_000, intervalMs: 200 });
  const status = await eventually('status.tls.caRotation TrustNew', async () => ((await solo.status())?.tls?.caRotation?.phase === 'TrustNew' ? (await solo.status())!.tls!.caRotation : undefined), { timeoutMs: 10_000, intervalMs: 200 });
  assert.ok(status?.reissueAfter !== undefined && status.since !== undefined && Date.parse(status.reissueAfter) - Date.parse(status.since) === 5000, JSON.stringify(status));
  const checker = new RedisDataChecker({ host: await solo.serviceIP(SOLO), port: 6379, password: await solo.password(), tls: { ca: bundle, servername: `${SOLO}.${t.ns}.svc` }, writers: 4 });
  checker.start();
  try {
    await eventually('acknowledged writes before Reissue', () => checker.acknowledged >= 50, { timeoutMs: 30_000, intervalMs: 100 });
    const newCA = await eventually('the old CA gone from both Secrets, every instance serving a certificate of the new CA alone', async () => {
      const [only, ...more] = pemCertificates(await secretKey(`${SOLO}-ca`, 'ca.crt'));
      if (only === undefined || more.length > 0 || new X509Certificate(only).fingerprint256 === oldCA.fingerprint256) return undefined;
      if ((await secretKey(`${SOLO}-tls`, 'ca.crt')).trim() !== only.trim()) return undefined;
      return (await servedCertificates(only)).every((f) => f !== undefined) ? only : undefined;
    }, { timeoutMs: 150_000, intervalMs: 500 });
    console.log(`CA rotated (TrustNew, 5 s overlap, Reissue, DropOld), every instance on the new CA: ${seconds(started)} s`);
    assert.deepEqual(await servedCertificates(oldCA.toString()), [undefined, undefined], 'the old CA verifies nothing served');
    const acked = checker.acknowledged;
    await eventually('writes acknowledged after the rotation', () => checker.acknowledged >= acked + 50, { timeoutMs: 30_000, intervalMs: 100 });

    // A renewal asked for: a new certificate of the same CA, loaded in place; the clients keep writing.
    const renewing = Date.now();
    const previous = new X509Certificate(await secretKey(`${SOLO}-tls`, 'tls.crt')).fingerprint256;
    await annotate({ 'redis.quorum.dev/rotate-certificates': 'e2e' });
    await eventually('the renewed certificate served by every instance', async () => {
      const current = new X509Certificate(await secretKey(`${SOLO}-tls`, 'tls.crt')).fingerprint256;
      return current !== previous && (await servedCertificates(newCA)).every((f) => f === current);
    }, { timeoutMs: 90_000, intervalMs: 500 });
    console.log(`certificate renewed on request and served: ${seconds(renewing)} s`);
    const renewedAcked = checker.acknowledged;
    await eventually('writes acknowledged after the renewal', () => checker.acknowledged >= renewedAcked + 50, { timeoutMs: 30_000, intervalMs: 100 });
  } finally {
    await checker.stop();
  }
  assert.equal((await solo.status())?.tls?.caRotation, undefined, 'no rotation left under way');
  const events = (await t.env.client.list(Events, { namespace: t.ns })).items as (OpenObject & { reason?: string; regarding?: { name?: string }; note?: string })[];
  const steps = events.filter((e) => e.regarding?.name === SOLO && e.reason === 'CARotation').map((e) => e.note ?? '');
  for (const step of ['TrustNew', 'Reissue', 'DropOld']) assert.ok(steps.some((n) => n.includes(`CA rotation, ${step}`)), `a CARotation event for ${step}: ${steps.join(' | ')}`);
  await assertNoneLost(checker);
});

test('with no Sentinel, a config change is rolled out with the operator\'s FAILOVER TO: the replica, then the primary moved, then the old one; 0 acknowledged writes lost', async () => {
  const before = (await solo.status())!;
  const checker = await checkerOf(solo, SOLO);
  checker.start();
  let after: RedisStatus | undefined;
  try {
    await eventually('acknowledged writes before the change', () => checker.acknowledged >= 50, { timeoutMs: 30_000, intervalMs: 100 });
    const started = Date.now();
    const generation = await solo.patchSpec({ config: [{ name: 'hz', value: '20' }] });
    after = await eventually('every instance rolled, settled again', async () => {
      const s = await solo.status();
      return settled(s, 2, generation, 0) ? s : undefined;
    }, { timeoutMs: 240_000, intervalMs: 500 });
    console.log(`config change without Sentinels → rolled out and settled: ${seconds(started)} s (primary ${after.primary}, before ${before.primary})`);
  } finally {
    await checker.stop();
  }
  assert.notEqual(after.primary, before.primary, 'FAILOVER TO moved the primary to the updated replica before the old one was rolled');
  const events = (await t.env.client.list(Events, { namespace: t.ns })).items;
  assert.ok(events.some((e) => e.reason === 'PlannedFailover' && e.regarding?.name === SOLO && /FAILOVER TO/.test(e.note ?? '')), 'the operator asked the primary itself');
  await assertNoneLost(checker);
});
