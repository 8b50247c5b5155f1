// The data-safety checker against real etcd 3.6 clusters on loopback: it must pass when data survives
// and, just as importantly, fail when acknowledged data goes missing or changes.
import { after, before, describe, test } from 'node:test';
import { eventually } from '@quorum/runtime/testing';
import assert from 'node:assert/strict';
import { setTimeout as sleep } from 'node:timers/promises';
import { EtcdClient } from '../../src/etcd/client.ts';
import { DataChecker, VerifyTimeoutError } from '../../src/testing/data-checker.ts';
import { EtcdClusterClient } from '../../src/etcd/cluster-client.ts';
import { startLocalEtcd, type LocalEtcdCluster } from '../support/local-etcd.ts';


/** Index of the member that currently leads, so the member-loss test kills the leader (the harsher case). */
async function leaderIndex(cluster: LocalEtcdCluster): Promise<number> {
  const clients = new EtcdClusterClient({ endpoints: cluster.endpoints });
  try {
    const { leaderEndpoint } = await clients.leaderStatus();
    assert.ok(leaderEndpoint, 'the cluster has a leader');
    const index = cluster.endpoints.indexOf(leaderEndpoint);
    assert.ok(index >= 0, `leader ${leaderEndpoint} is one of ${cluster.endpoints.join(', ')}`);
    return index;
  } finally {
    clients.close();
  }
}

/** The tampering "behind its back": the operator's client, not the checker's. */
async function tamper(endpoint: string, fn: (client: EtcdClient) => Promise<void>): Promise<void> {
  const client = new EtcdClient({ endpoint });
  try {
    await fn(client);
  } finally {
    client.close();
  }
}

describe('DataChecker against a real etcd 3.6 cluster', { timeout: 120_000 }, () => {
  let healthy: LocalEtcdCluster;
  let memberLoss: LocalEtcdCluster;
  let quorumLoss: LocalEtcdCluster;
  let outage: LocalEtcdCluster;
  const checkers: DataChecker[] = [];
  const checker = (c: DataChecker): DataChecker => {
    checkers.push(c);
    return c;
  };

  before(async () => {
    const start = (): Promise<LocalEtcdCluster> => startLocalEtcd({ members: 3 });
    [healthy, memberLoss, quorumLoss, outage] = await Promise.all([start(), start(), start(), start()]);
  });

  after(async () => {
    await Promise.all(checkers.map((c) => c.close()));
    await Promise.all([healthy, memberLoss, quorumLoss, outage].map((c) => c?.stop()));
  });

  test('steady writes at 50/s for 2 s: all acknowledged, none lost', async () => {
    const c = checker(new DataChecker({ endpoints: healthy.endpoints, ratePerSecond: 50 }));
    c.start();
    await sleep(2000);
    const running = c.stats();
    await c.stop();
    const stats = c.stats();
    assert.equal(stats.running, false);
    assert.equal(stats.inFlight, 0);
    assert.ok(stats.acknowledged >= 80 && stats.acknowledged <= 110, `acknowledged ${stats.acknowledged}`);
    assert.equal(stats.unacknowledged, 0, stats.lastError);
    assert.ok(running.writesPerSecond > 35 && running.writesPerSecond < 65, `writes/s ${running.writesPerSecond}`);

    const report = await c.verify({ timeoutMs: 10_000 });
    assert.equal(report.acknowledged, stats.acknowledged);
    assert.equal(report.unacknowledged, 0);
    assert.deepEqual(report.lost, []);
    assert.deepEqual(report.corrupted, []);
    assert.ok(!Number.isNaN(Date.parse(report.verifiedAt)));
  });

  test('with retries, a write that fails at one endpoint is sent again to the next and counted as retried, not failed', async () => {
    // The first endpoint is a port nothing listens on: every write sent there first fails at once.
    const dead = 'http://127.0.0.1:1';
    const c = checker(new DataChecker({ endpoints: [dead, healthy.endpoints[0]!], ratePerSecond: 50, retries: 1, timeoutMs: 1000 }));
    c.start();
    await eventually('writes through both endpoints', () => c.stats().acknowledged >= 40);
    await c.stop();
    const stats = c.stats();
    assert.equal(stats.unacknowledged, 0, stats.lastError);
    assert.ok(stats.retried >= 15 && stats.retried < stats.acknowledged, `retried ${stats.retried} of ${stats.acknowledged}`);
    assert.match(stats.lastError ?? '', /127\.0\.0\.1:1/);
    const report = await c.verify({ timeoutMs: 10_000, endpoints: [healthy.endpoints[0]!] });
    assert.deepEqual(report.lost, []);
    // Without retries the same writes fail.
    const plain = checker(new DataChecker({ endpoints: [dead, healthy.endpoints[0]!], ratePerSecond: 50, timeoutMs: 1000 }));
    plain.start();
    await eventually('some writes failed', () => plain.stats().unacknowledged >= 5);
    await plain.stop();
    assert.equal(plain.stats().retried, 0);
  });

  test('detects acknowledged keys deleted behind its back, exactly those', async () => {
    const c = checker(new DataChecker({ endpoints: healthy.endpoints, ratePerSecond: 100 }));
    c.start();
    await eventually('40 writes acknowledged', () => c.stats().acknowledged >= 40);
    await c.stop();
    const keys = c.acknowledgedKeys();
    assert.ok(keys.length >= 40, `acknowledged ${keys.length}`);
    // Baseline, with small pages so pagination is exercised too.
    assert.deepEqual((await c.verify({ timeoutMs: 10_000, pageSize: 7 })).lost, []);

    const victims = [keys[0]!, keys[Math.floor(keys.length / 2)]!, keys[keys.length - 1]!];
    await tamper(healthy.endpoints[1]!, async (client) => {
      for (const key of victims) assert.equal((await client.delete(key)).deleted, 1);
    });
    const report = await c.verify({ timeoutMs: 10_000, pageSize: 7 });
    assert.equal(report.acknowledged, keys.length);
    assert.deepEqual(report.lost, [...victims].sort());
    assert.deepEqual(report.corrupted, []);
  });

  test('detects a changed value and a key it never wrote', async () => {
    const c = checker(new DataChecker({ endpoints: healthy.endpoints, ratePerSecond: 100 }));
    c.start();
    await eventually('20 writes acknowledged', () => c.stats().acknowledged >= 20);
    await c.stop();
    const keys = c.acknowledgedKeys();
    assert.ok(keys.length >= 20, `acknowledged ${keys.length}`);
    const victim = keys[5]!;
    const stranger = `${c.prefix}zz-not-written-by-checker`;
    await tamper(healthy.endpoints[2]!, async (client) => {
      await client.put(victim, 'tampered');
      await client.put(stranger, 'x');
    });

    const report = await c.verify({ timeoutMs: 10_000 });
    assert.deepEqual(report.lost, []);
    assert.deepEqual(report.corrupted, [victim, stranger].sort());
  });

  test('SIGKILL of the leader mid-run: writes continue through the others, none lost', async () => {
    const victim = memberLoss.members[await leaderIndex(memberLoss)]!;
    const c = checker(new DataChecker({ endpoints: memberLoss.endpoints, ratePerSecond: 50, timeoutMs: 1000 }));
    c.start();
    // Waits for what happened, not for a time: on a busy machine 50 writes a second are not 50 answers a second.
    await eventually('writes acknowledged before the kill', () => c.stats().acknowledged >= 35);
    await victim.stop(false);
    const atKill = c.stats();
    // The election stalls the in-flight writes for about a second; then the two others take them again, and a
    // third of the writes go to the dead member, so failures are certain and must not count as acknowledged.
    await eventually('writes continue through the others', () => c.stats().acknowledged >= atKill.acknowledged + 40);
    await eventually('writes sent to the dead member fail', () => c.stats().unacknowledged >= 20);
    await c.stop();
    const stats = c.stats();
    assert.equal(stats.acknowledged + stats.unacknowledged, stats.attempted);
    // The client's words: no answer (refused, reset, timeout) or etcd's own refusal during the election.
    assert.match(stats.lastError ?? '', /etcd unavailable \((refused|reset|timeout)\)|etcdserver: /);

    const report = await c.verify({ timeoutMs: 15_000 });
    assert.equal(report.acknowledged, stats.acknowledged);
    assert.equal(report.unacknowledged, stats.unacknowledged);
    assert.deepEqual(report.lost, []);
    assert.deepEqual(report.corrupted, []);
  });

  test('quorum loss: writes time out as unacknowledged and verify gives up with a clear error', async () => {
    const c = checker(new DataChecker({ endpoints: [quorumLoss.endpoints[0]!], ratePerSecond: 50, timeoutMs: 500 }));
    c.start();
    await sleep(500);
    await Promise.all([quorumLoss.members[1]!.stop(false), quorumLoss.members[2]!.stop(false)]);
    const atKill = c.stats();
    await sleep(2000);
    await eventually('writes time out', () => c.stats().unacknowledged >= 3);
    await c.stop();
    const stats = c.stats();

    // Only writes already in flight at the kill may still have been acknowledged.
    assert.ok(stats.acknowledged - atKill.acknowledged <= 4, `acknowledged after quorum loss: ${stats.acknowledged - atKill.acknowledged}`);
    assert.ok(stats.unacknowledged >= 3, `unacknowledged ${stats.unacknowledged}`);
    assert.equal(stats.acknowledged + stats.unacknowledged, stats.attempted);

    const started = performance.now();
    await assert.rejects(c.verify({ timeoutMs: 1500 }), (err: unknown) => {
      assert.ok(err instanceof VerifyTimeoutError);
      assert.match(err.message, new RegExp(`could not read back ${stats.acknowledged} acknowledged key\\(s\\) .* within 1500 ms`));
      assert.match(err.message, /etcd unavailable \(timeout\)|etcdserver: /);
      return true;
    });
    assert.ok(performance.now() - started < 3000);
  });

  test('whole cluster stopped: writes are unacknowledged and verify times out with a clear error', async () => {
    const c = checker(new DataChecker({ endpoints: outage.endpoints, ratePerSecond: 50, timeoutMs: 500 }));
    c.start();
    await eventually('writes acknowledged before the outage', () => c.stats().acknowledged >= 15);
    await Promise.all(outage.members.map((m) => m.stop(false)));
    const atKill = c.stats();
    await eventually('writes refused during the outage', () => c.stats().unacknowledged >= 35);
    await c.stop();
    const stats = c.stats();

    assert.ok(atKill.acknowledged >= 15, `acknowledged before the outage: ${atKill.acknowledged}`);
    assert.ok(stats.acknowledged - atKill.acknowledged <= 4, `acknowledged after the outage: ${stats.acknowledged - atKill.acknowledged}`);
    // Refused connections fail fast, so the pace holds and every write is recorded as a failure.
    assert.ok(stats.unacknowledged >= 35, `unacknowledged ${stats.unacknowledged}`);
    assert.equal(stats.acknowledged + stats.unacknowledged, stats.attempted);
    assert.match(stats.lastError ?? '', /etcd unavailable \(refused\).*ECONNREFUSED/);

    const started = performance.now();
    await assert.rejects(c.verify({ timeoutMs: 1500 }), (err: unknown) => {
      assert.ok(err instanceof VerifyTimeoutError);
      assert.ok(err.attempts > 1, 'it retried');
      assert.match(err.message, new RegExp(`could not read back ${stats.acknowledged} acknowledged key\\(s\\) .* within 1500 ms`));
      assert.match(err.message, /etcd unavailable \(refused\).*ECONNREFUSED/);
      return true;
    });
    assert.ok(performance.now() - started < 2500);
  });
});
