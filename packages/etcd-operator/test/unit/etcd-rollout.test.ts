// A rolling upgrade 3.5 → 3.6 as etcd itself sees it, on real local members restarted one at a time on the
// newer binary over their own data: the facts the rollout planner (cluster/plan.ts) builds on, checked
// against the etcd it drives rather than assumed.
// - A member restarted on another binary keeps its ID and catches up: its applied index reaches the commit
//   index the leader reported before it was read (the gate's race-free "caught up").
// - While the members are mixed, the cluster version stays at the lower minor, and a member can go back to
//   the older binary (rollback).
// - Leadership moves to an updated member through the leader (the leader is restarted last, as a follower).
// - Once every member runs the newer minor, the cluster version moves up, and an older binary is refused from
//   then on: the end of the rollback window that the operator's versionPath() and act-time guard enforce.
import assert from 'node:assert/strict';
import { after, before, describe, test } from 'node:test';
import { eventually } from '@quorum/runtime/testing';
import { EtcdClient } from '../../src/etcd/index.ts';
import { startLocalEtcd, type LocalEtcdCluster } from '../support/local-etcd.ts';


describe('a rolling upgrade 3.5.35 → 3.6.16 of three real members', () => {
  let cluster: LocalEtcdCluster | undefined;
  const clients = new Map<string, EtcdClient>();
  const client = (name: string): EtcdClient => {
    const endpoint = env().member(name).clientURL;
    let c = clients.get(endpoint);
    if (!c) clients.set(endpoint, (c = new EtcdClient({ endpoint, timeoutMs: 5000 })));
    return c;
  };
  const env = (): LocalEtcdCluster => {
    assert.ok(cluster, 'cluster started');
    return cluster;
  };
  /** Member name → ID, and which member leads, as every member agrees. */
  async function view(): Promise<{ ids: Map<string, string>; leader: string }> {
    return eventually('an agreed leader', async () => {
      const statuses = await Promise.all(env().members.map(async (m) => ({ name: m.name, status: await client(m.name).status() })));
      const leaders = new Set(statuses.map((s) => s.status.leaderId));
      if (leaders.size !== 1 || leaders.has('0')) return undefined;
      const leader = statuses.find((s) => s.status.memberId === s.status.leaderId);
      return leader ? { ids: new Map(statuses.map((s) => [s.name, s.status.memberId])), leader: leader.name } : undefined;
    });
  }
  const clusterVersion = async (name: string): Promise<string | undefined> => (await client(name).version()).cluster;
  let idsBefore: Map<string, string>;
  let firstLeader: string;

  before(async () => {
    cluster = await startLocalEtcd({ members: 3, version: '3.5.35' });
    const v = await view();
    idsBefore = v.ids;
    firstLeader = v.leader;
    for (let i = 0; i < 50; i++) await client(firstLeader).put(`/rollout/${i}`, `v${i}`);
    assert.equal(await eventually('a decided cluster version', () => clusterVersion(firstLeader)), '3.5.0');
  });

  after(async () => {
    for (const c of clients.values()) c.close();
    await cluster?.stop();
  });

  const followers = (): string[] => env().members.map((m) => m.name).filter((n) => n !== firstLeader).sort();

  test('a follower restarted on 3.6 keeps its ID and catches up to a commit index read before it; the cluster version stays 3.5.0', async () => {
    const follower = followers()[0]!;
    await env().restart(follower, '3.6.16');
    // Writes while it rejoins: the commit index moves on, and the member must reach the one read first.
    for (let i = 50; i < 100; i++) await client(firstLeader).put(`/rollout/${i}`, `v${i}`);
    const commit = (await client(firstLeader).status()).raftIndex;
    const applied = await eventually('the updated member applied up to the earlier commit index', async () => {
      const s = await client(follower).status();
      return s.raftAppliedIndex !== undefined && BigInt(s.raftAppliedIndex) >= BigInt(commit) ? s : undefined;
    });
    assert.equal(applied.version, '3.6.16');
    assert.equal(applied.memberId, idsBefore.get(follower), 'same member ID: etcd found its WAL');
    assert.equal((await view()).ids.get(follower), idsBefore.get(follower));
    // A mixed cluster runs at the lowest minor: the leader (3.5) decides, and the 3.6 member agrees.
    assert.equal(await clusterVersion(firstLeader), '3.5.0');
    assert.equal(await clusterVersion(follower), '3.5.0');
    assert.equal((await client(follower).get('/rollout/99'))?.value, 'v99');
  });

  test('rollback: while the cluster version is 3.5.0, the updated member goes back to 3.5 on its data', async () => {
    const follower = followers()[0]!;
    await env().restart(follower, '3.5.35');
    assert.equal((await client(follower).status()).version, '3.5.35');
    assert.equal((await client(follower).status()).memberId, idsBefore.get(follower));
    await env().restart(follower, '3.6.16');
    assert.equal((await client(follower).status()).version, '3.6.16');
  });

  test('leader last: leadership moves to an updated member, the old leader restarts on 3.6 as a follower, and the cluster version moves only then', async () => {
    const [first, second] = followers() as [string, string];
    await env().restart(second, '3.6.16');
    assert.equal(await clusterVersion(first), '3.5.0', 'the leader still runs 3.5');
    // MoveLeader goes through the leader (a follower answers "not leader"); the target is an updated member.
    await client(firstLeader).moveLeader(idsBefore.get(first)!, { timeoutMs: 10_000 });
    assert.equal((await view()).leader, first);
    await env().restart(firstLeader, '3.6.16');
    assert.equal((await view()).leader, first, 'the restarted old leader came back as a follower');
    const moved = await eventually('cluster version 3.6.0', async () => ((await clusterVersion(first)) === '3.6.0' ? '3.6.0' : undefined));
    assert.equal(moved, '3.6.0');
    const ids = (await view()).ids;
    assert.deepEqual([...ids].sort(), [...idsBefore].sort(), 'membership unchanged, same IDs');
    const range = await client(firstLeader).range('/rollout/', { end: '/rollout0' });
    assert.equal(range.count, 100, 'no write lost');
  });

  test('once the cluster version is 3.6.0, a 3.5 binary is refused: the rollback window is closed', async () => {
    const [member] = followers() as [string];
    await assert.rejects(
      env().restart(member, '3.5.35'),
      // etcd's words: "invalid downgrade; server version is lower than determined cluster version".
      (err: Error) => /exited while starting/.test(err.message) && /server version is lower than determined cluster version/.test(err.message),
    );
    // Back on 3.6 on the same data: nothing was harmed by the refused start.
    await env().restart(member, '3.6.16');
    assert.equal((await client(member).status()).memberId, idsBefore.get(member));
  });
});
