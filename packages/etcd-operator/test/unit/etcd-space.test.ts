// etcd's NOSPACE alarm and defragmentation against real etcd binaries, through our client: a member with a
// tiny --quota-backend-bytes is filled until etcd raises NOSPACE; its status names the alarm (what the operator
// observes without another call), /health fails while /health?exclude=NOSPACE (the readiness probe) does not,
// and compaction, a defragmentation of each member and a disarm bring writes back.
import { after, before, describe, test } from 'node:test';
import assert from 'node:assert/strict';
import { EtcdClient } from '../../src/etcd/client.ts';
import { EtcdError, GrpcCode } from '../../src/etcd/errors.ts';
import { alarmsInStatus } from '../../src/etcd/client.ts';
import { eventually } from '@quorum/runtime/testing';
import { ETCD_VERSIONS, startLocalEtcd, type LocalEtcdCluster } from '../support/local-etcd.ts';

const QUOTA = 2 * 1024 * 1024;

for (const version of ETCD_VERSIONS) {
  describe(`NOSPACE and defragmentation on etcd ${version}`, () => {
    let cluster: LocalEtcdCluster | undefined;
    let clients: EtcdClient[] = [];

    before(async () => {
      cluster = await startLocalEtcd({ members: 3, version, extraArgs: [`--quota-backend-bytes=${QUOTA}`] });
      clients = cluster.endpoints.map((endpoint) => new EtcdClient({ endpoint, timeoutMs: 10_000 }));
    });
    after(async () => {
      for (const c of clients) c.close();
      await cluster?.stop();
    });

    test('filled to NOSPACE, then compact, defragment each member, disarm: writes work again, data kept', async () => {
      const [first] = clients;
      assert.ok(first);
      await first.put('kept', 'value');
      // Overwriting one key keeps every old revision until a compaction: the backend grows to the quota.
      const value = 'x'.repeat(64 * 1024);
      let refused: EtcdError | undefined;
      for (let i = 0; i < 200 && !refused; i++) {
        try {
          await first.put('churn', `${i}:${value}`);
        } catch (err) {
          if (!(err instanceof EtcdError)) throw err;
          refused = err;
        }
      }
      assert.ok(refused, 'etcd refused a write once the quota was reached');
      assert.equal(refused.code, GrpcCode.ResourceExhausted);

      // Every member's own status names the alarm (the cluster's alarms are replicated through raft). Each member
      // raises its own NOSPACE when its backend reaches the quota, so there is one per member that got there. A
      // follower applies the alarm a moment after the leader refused the write: wait for it on each member.
      for (const [i, c] of clients.entries()) {
        await eventually(`member ${i} to report NOSPACE in its status and health`, async () => {
          const s = await c.status();
          const alarms = alarmsInStatus(s.errors).map((a) => a.alarm);
          assert.ok(alarms.length >= 1 && alarms.every((a) => a === 'NOSPACE'), JSON.stringify(s.errors));
          assert.ok(s.dbSizeInUse !== undefined && s.dbSizeInUse > 0, 'dbSizeInUse is reported');
          // /health fails on every member for a cluster-wide alarm; excluding it, each member is healthy.
          assert.deepEqual(await c.healthCheck(), { healthy: false, reason: 'ALARM NOSPACE' });
          assert.equal((await c.healthCheck({ exclude: ['NOSPACE'] })).healthy, true);
          return true;
        }, { timeoutMs: 15_000, intervalMs: 200 });
      }

      // Reads still work under NOSPACE.
      assert.equal((await first.get('kept'))?.value, 'value');

      const before = await Promise.all(clients.map((c) => c.status()));
      const revision = before[0]!.revision;
      await first.compact(revision, { physical: true });
      // Again: etcd says it is compacted already, which the operator counts as done.
      await assert.rejects(first.compact(revision), (err: unknown) => err instanceof EtcdError && err.code === GrpcCode.OutOfRange && /compacted/.test(err.etcdMessage));
      for (const c of clients) await c.defragment({ timeoutMs: 30_000 });
      const afterDefrag = await Promise.all(clients.map((c) => c.status()));
      for (const [i, s] of afterDefrag.entries()) assert.ok(s.dbSize < before[i]!.dbSize / 2, `member ${i}: ${before[i]!.dbSize} -> ${s.dbSize}`);

      for (const alarm of await first.alarms()) await first.disarm(alarm);
      assert.deepEqual(await first.alarms(), []);
      // The disarm is applied by each follower a moment later, as the alarm was.
      for (const [i, c] of clients.entries()) {
        await eventually(`member ${i} to report no alarm and be healthy`, async () => {
          assert.deepEqual(alarmsInStatus((await c.status()).errors), []);
          assert.equal((await c.healthCheck()).healthy, true);
          return true;
        }, { timeoutMs: 15_000, intervalMs: 200 });
      }
      await first.put('after', 'ok');
      assert.equal((await first.get('kept'))?.value, 'value');
      assert.equal((await first.get('churn'))?.value.startsWith('x') ?? false, false);
    });
  });
}
