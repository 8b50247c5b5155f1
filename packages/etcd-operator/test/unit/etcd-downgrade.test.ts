// A downgrade 3.6 → 3.5 as etcd itself does it, on real local members: the facts the rollout planner's
// Downgrade path (cluster/plan.ts) builds on, checked against the etcd it drives.
// - VALIDATE, then ENABLE: the cluster version moves to 3.5.0 at once, every member reports the downgrade in its
//   status and migrates its storage version to 3.5.0; a second ENABLE is refused (so an unanswered one is
//   confirmed by reading the status, not by trying again).
// - Members restarted one at a time on 3.5 keep their IDs and data, the leader last after leadership moved.
// - CANCEL before any member went back: the downgrade ends and the cluster version returns to 3.6.0.
// - A member added before etcd ended a finished downgrade keeps it from ending, and cannot join while it is
//   enabled; CANCEL ends it (what the operator does before adding a member; 3.5 never answers it, a second
//   CANCEL confirms it), and the member then joins.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@quorum/runtime/testing';
import { EtcdClient } from '../../src/etcd/index.ts';
import { startLocalEtcd, type LocalEtcdCluster } from '../support/local-etcd.ts';


function harness(): { env: () => LocalEtcdCluster; client: (name: string) => EtcdClient; set: (c: LocalEtcdCluster) => void; close: () => Promise<void> } {
  let cluster: LocalEtcdCluster | undefined;
  const clients = new Map<string, EtcdClient>();
  const env = (): LocalEtcdCluster => {
    assert.ok(cluster, 'cluster started');
    return cluster;
  };
  return {
    env,
    set: (c) => { cluster = c; },
    client: (name) => {
      const endpoint = env().member(name).clientURL;
      let c = clients.get(endpoint);
      if (!c) clients.set(endpoint, (c = new EtcdClient({ endpoint, timeoutMs: 5000 })));
      return c;
    },
    close: async () => {
      for (const c of clients.values()) c.close();
      await cluster?.stop();
    },
  };
}

describe('a downgrade 3.6.16 → 3.5.35 of three real members', () => {
  const h = harness();
  const names = (): string[] => h.env().members.map((m) => m.name);
  async function leaderAndIds(): Promise<{ leader: string; ids: Map<string, string> }> {
    return eventually('an agreed leader', async () => {
      const statuses = await Promise.all(names().map(async (n) => ({ n, s: await h.client(n).status() })));
      const leaders = new Set(statuses.map((x) => x.s.leaderId));
      const leader = statuses.find((x) => x.s.memberId === x.s.leaderId);
      return leaders.size === 1 && leader ? { leader: leader.n, ids: new Map(statuses.map((x) => [x.n, x.s.memberId])) } : undefined;
    });
  }
  let idsBefore: Map<string, string>;

  before(async () => {
    h.set(await startLocalEtcd({ members: 3, version: '3.6.16' }));
    const { leader, ids } = await leaderAndIds();
    idsBefore = ids;
    for (let i = 0; i < 50; i++) await h.client(leader).put(`/dg/${i}`, `v${i}`);
    assert.equal(await eventually('cluster version 3.6.0', async () => (await h.client(leader).version()).cluster), '3.6.0');
    assert.deepEqual((await h.client(leader).status()).downgrade, { enabled: false }, '3.6 says there is no downgrade in flight');
  });
  after(() => h.close());

  test('VALIDATE, then ENABLE: the cluster version is 3.5.0 at once, every member migrates its storage version; a second ENABLE is refused', async () => {
    const first = names()[0]!;
    assert.equal(await h.client(first).downgrade('VALIDATE', '3.5'), '3.6');
    await assert.rejects(h.client(first).downgrade('VALIDATE', '3.4'), /invalid downgrade target version/);
    await h.client(first).downgrade('ENABLE', '3.5');
    for (const n of names()) {
      const s = await eventually(`${n} migrated its storage version`, async () => {
        const st = await h.client(n).status();
        return st.storageVersion === '3.5.0' ? st : undefined;
      });
      assert.deepEqual(s.downgrade, { enabled: true, targetVersion: '3.5.0' });
      // Each member applies the new cluster version on its own, not necessarily before its storage migration shows.
      assert.equal(await eventually(`${n} reports cluster version 3.5.0`, async () => {
        const v = (await h.client(n).version()).cluster;
        return v === '3.5.0' ? v : undefined;
      }), '3.5.0');
    }
    await assert.rejects(h.client(first).downgrade('ENABLE', '3.5'), /invalid downgrade target version/);
  });

  test('members go back to 3.5.35 one at a time, the leader last after leadership moved; same IDs, no data lost', async () => {
    const { leader } = await leaderAndIds();
    const followers = names().filter((n) => n !== leader).sort();
    for (const f of followers) {
      await h.env().restart(f, '3.5.35');
      const s = await h.client(f).status();
      assert.equal(s.version, '3.5.35');
      assert.equal(s.memberId, idsBefore.get(f));
      assert.equal(s.downgrade, undefined, '3.5 does not report downgrades');
    }
    await h.client(leader).moveLeader(idsBefore.get(followers[0]!)!, { timeoutMs: 10_000 });
    assert.equal((await leaderAndIds()).leader, followers[0]);
    await h.env().restart(leader, '3.5.35');
    const after = await leaderAndIds();
    assert.deepEqual([...after.ids].sort(), [...idsBefore].sort(), 'same members, same IDs');
    for (const n of names()) {
      assert.equal((await h.client(n).status()).version, '3.5.35');
      assert.equal((await h.client(n).version()).cluster, '3.5.0');
    }
    assert.equal((await h.client(after.leader).range('/dg/', { end: '/dg0' })).count, 50, 'no write lost');
  });
});

describe('a downgrade cancelled before any member went back', () => {
  const h = harness();
  before(async () => {
    h.set(await startLocalEtcd({ members: 1, version: '3.6.16' }));
    await eventually('cluster version 3.6.0', async () => ((await h.client(h.env().members[0]!.name).version()).cluster === '3.6.0' ? true : undefined));
  });
  after(() => h.close());

  test('CANCEL ends it, and the cluster version returns to 3.6.0', async () => {
    const c = h.client(h.env().members[0]!.name);
    await c.downgrade('ENABLE', '3.5');
    assert.deepEqual((await eventually('downgrade enabled', async () => ((await c.status()).downgrade?.enabled ? await c.status() : undefined))).downgrade, { enabled: true, targetVersion: '3.5.0' });
    await c.downgrade('CANCEL', '');
    assert.deepEqual((await c.status()).downgrade, { enabled: false });
    assert.equal(await eventually('cluster version 3.6.0 again', async () => ((await c.version()).cluster === '3.6.0' ? '3.6.0' : undefined)), '3.6.0');
  });
});

describe('a member added while a finished downgrade is still enabled', () => {
  const h = harness();
  before(async () => {
    h.set(await startLocalEtcd({ members: 1, version: '3.6.16' }));
    await eventually('cluster version 3.6.0', async () => ((await h.client(h.env().members[0]!.name).version()).cluster === '3.6.0' ? true : undefined));
  });
  after(() => h.close());

  test('it cannot join ("incompatible with current running cluster"), and keeps etcd from ending the downgrade; CANCEL ends it, then it joins', async () => {
    const name = h.env().members[0]!.name;
    await h.client(name).downgrade('ENABLE', '3.5');
    // Both, as the operator's downgrade step waits for both: a 3.6 member whose monitor has not yet written its
    // storage version (its first try can fail with "missing term information") reports storage version 3.5.0
    // while its cluster version is still 3.6.0; a 3.5 binary restarted then never becomes capable here, since
    // its leader cannot decide a cluster version while the added member answers nothing (seen under load).
    await eventually('cluster version and storage version 3.5.0', async () => {
      const [version, status] = await Promise.all([h.client(name).version(), h.client(name).status()]);
      return version.cluster === '3.5.0' && status.storageVersion === '3.5.0' ? true : undefined;
    });
    // Added before the last member goes back: etcd's leader ends a downgrade only when every member of the
    // membership answers /version, and a member that never started answers nothing.
    const slot = await h.env().reserve('late');
    const added = await h.client(name).memberAdd([slot.peerURL], { learner: true });
    await h.env().restart(name, '3.5.35');
    assert.equal((await h.client(name).status()).version, '3.5.35', 'every voting member runs 3.5');
    await assert.rejects(h.env().startAdded(slot, added.members, '3.5.35'), /incompatible with current running cluster/);
    // Still enabled, and ended by CANCEL; a second one is refused with the words the operator relies on.
    // 3.5 applies the CANCEL but never answers it (the request times out); a second one is refused with the
    // words the operator relies on to confirm the first (act.ts endFinishedDowngrade).
    await h.client(name).downgrade('CANCEL', '').catch((err: unknown) => assert.match(String(err), /request timed out|no answer within/));
    await assert.rejects(h.client(name).downgrade('CANCEL', ''), /no inflight downgrade job/);
    const joined = await h.env().startAdded(slot, added.members, '3.5.35');
    const learner = new EtcdClient({ endpoint: joined.clientURL, timeoutMs: 5000 });
    try {
      const s = await learner.status();
      assert.equal(s.memberId, added.member.id);
      assert.equal(s.version, '3.5.35');
    } finally {
      learner.close();
    }
  });
});
