// Space management end to end (issue 10 item 5): a small-quota cluster filled until etcd raises NOSPACE keeps
// serving reads through its client Service (readiness is /health?exclude=NOSPACE), reports Degraded NoSpace, and
// the operator recovers it (compaction, a defragmentation of each member with the leader last, the disarm)
// without losing an acknowledged write; and a cluster whose members are fragmented past
// spec.maintenance.defrag.thresholdPercent gets each member defragmented, the leader last.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import type { TestEnv } from '@quorum/localkube/testing';
import { EtcdClient } from '../../src/etcd/client.ts';
import { EtcdError, GrpcCode } from '../../src/etcd/errors.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { applyCluster, clientServiceEndpoint, eventually, getCluster, PLAINTEXT, setUpOperator, verifyNoWriteLost, waitAvailable } from './support.ts';

let env: TestEnv;
let ns: string;
const MiB = 1024 * 1024;

before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('space');
});
after(async () => {
  await env.stop();
});

/** Ready addresses of the client Service, from its EndpointSlices (what kube-proxy routes to). */
async function readyEndpoints(service: string): Promise<number> {
  const list = await env.client.request<{ items: { endpoints?: { conditions?: { ready?: boolean } }[] }[] }>('GET', `/apis/discovery.k8s.io/v1/namespaces/${ns}/endpointslices?labelSelector=${encodeURIComponent(`kubernetes.io/service-name=${service}`)}`);
  return list.items.flatMap((s) => s.endpoints ?? []).filter((e) => e.conditions?.ready === true).length;
}

/** Overwrites one key with large values until etcd refuses a write for want of space (its old revisions fill the quota). */
async function fillToNoSpace(client: EtcdClient): Promise<number> {
  const value = 'x'.repeat(256 * 1024);
  for (let i = 0; i < 1000; i++) {
    try {
      await client.put('/space/churn', `${i}:${value}`);
    } catch (err) {
      if (err instanceof EtcdError && err.code === GrpcCode.ResourceExhausted) return i;
      throw err;
    }
  }
  throw new Error('etcd never raised NOSPACE');
}

const condition = async (name: string, type: string): Promise<{ status: string; reason: string; message: string } | undefined> =>
  (await getCluster(env.client, ns, name)).cluster.status?.conditions?.find((c) => c.type === type);

test('NOSPACE: reads keep their endpoints, Degraded NoSpace, then compaction, defragmentation and disarm with no write lost', async () => {
  const NAME = 'nospace';
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, etcd: { quotaBackendBytes: 32 * MiB } });
  await waitAvailable(env.client, ns, NAME, 3);
  const endpoint = await clientServiceEndpoint(env.client, ns, NAME);
  const client = new EtcdClient({ endpoint, timeoutMs: 10_000 });
  const checker = new DataChecker({ endpoints: [endpoint], ratePerSecond: 20 });
  try {
    await client.put('/space/kept', 'before');
    checker.start();
    await new Promise((r) => setTimeout(r, 3000));
    // Paused first, so that the alarm stays raised long enough to watch readiness under it (the recovery
    // itself takes seconds); status is still reported while paused.
    await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { paused: true } });
    const writes = await fillToNoSpace(client);
    process.stderr.write(`NOSPACE after ${writes} writes of 256 KiB\n`);

    const degraded = await eventually('Degraded NoSpace', async () => {
      const c = await condition(NAME, 'Degraded');
      return c?.status === 'True' && c.reason === 'NoSpace' ? c : undefined;
    }, { timeoutMs: 60_000, intervalMs: 500 });
    assert.match(degraded.message, /writes are refused/);
    // Three readiness periods and more: with plain /health every member would have left the Service by now.
    for (let i = 0; i < 10; i++) {
      assert.equal(await readyEndpoints(`${NAME}-client`), 3, 'every member stays behind the client Service under NOSPACE');
      assert.equal((await client.get('/space/kept'))?.value, 'before', 'reads are served through the client Service');
      await new Promise((r) => setTimeout(r, 1000));
    }

    await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { spec: { paused: false } });
    await eventually('the alarm disarmed and Degraded cleared', async () => {
      const c = await condition(NAME, 'Degraded');
      return c?.status === 'False' && (await client.alarms()).length === 0 ? c : undefined;
    }, { timeoutMs: 180_000, intervalMs: 1000 });
    const state = await getCluster(env.client, ns, NAME);
    const defrags = state.cluster.status?.maintenance?.lastDefrag ?? [];
    assert.deepEqual(defrags.map((d) => d.reason).sort(), ['NoSpace', 'NoSpace', 'NoSpace'], JSON.stringify(defrags));
    for (const d of defrags) assert.ok(d.dbSizeAfter === undefined || d.dbSizeAfter < d.dbSizeBefore!, JSON.stringify(d));
    assert.equal(state.cluster.status?.maintenance?.noSpace, undefined);
    await client.put('/space/after', 'ok');
    assert.equal((await client.get('/space/kept'))?.value, 'before');
    await waitAvailable(env.client, ns, NAME, 3);
    await verifyNoWriteLost(checker, 'NOSPACE recovery', { minAcknowledged: 30 });
  } finally {
    await checker.close();
    client.close();
  }
});

test('defragmentation by threshold: each fragmented member, one at a time, the leader last', async () => {
  const NAME = 'defrag';
  await applyCluster(env.client, ns, NAME, { ...PLAINTEXT, replicas: 3, maintenance: { defrag: { thresholdPercent: 50 } } });
  await waitAvailable(env.client, ns, NAME, 3);
  const endpoint = await clientServiceEndpoint(env.client, ns, NAME);
  const client = new EtcdClient({ endpoint, timeoutMs: 10_000 });
  try {
    // 24 MiB written, deleted and compacted away: the backend files keep their pages, mostly free.
    const value = 'y'.repeat(256 * 1024);
    for (let i = 0; i < 96; i++) await client.put(`/frag/${i}`, value);
    const { revision } = await client.delete('/frag/', { end: '/frag0' });
    await client.compact(revision, { physical: true });
    // bbolt frees the compacted pages only at a later write transaction (until then they are pending, and
    // etcd counts them in use): a cluster in service keeps writing, so the test does too.
    for (let i = 0; i < 20; i++) await client.put('/frag-after', String(i));
    // Not yet: the probe says what the operator has recorded and its conditions, so a timeout names where it stopped.
    const done = await eventually('every member defragmented by threshold', async () => {
      const s = await getCluster(env.client, ns, NAME);
      const d = s.cluster.status?.maintenance?.lastDefrag ?? [];
      if (d.length === 3 && d.every((x) => x.reason === 'Threshold')) return s;
      throw new Error(`lastDefrag ${JSON.stringify(d)}; conditions ${JSON.stringify(s.cluster.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`))}`);
    }, { timeoutMs: 180_000, intervalMs: 1000 });
    const records = done.cluster.status!.maintenance!.lastDefrag!;
    const leader = done.cluster.status?.leader;
    const lastOne = [...records].sort((a, b) => Date.parse(a.at) - Date.parse(b.at)).at(-1)!;
    assert.equal(lastOne.member, leader, `the leader last: ${JSON.stringify(records)}`);
    for (const r of records) assert.ok(r.dbSizeAfter !== undefined && r.dbSizeAfter < r.dbSizeBefore! / 2, JSON.stringify(r));
    await waitAvailable(env.client, ns, NAME, 3);
    assert.equal((await condition(NAME, 'Degraded'))?.status, 'False');
  } finally {
    client.close();
  }
});
