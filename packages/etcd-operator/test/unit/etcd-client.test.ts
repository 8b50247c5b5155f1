// The etcd admin client against real etcd processes on 127.0.0.1 (3.6 in depth, 3.5 briefly).
import assert from 'node:assert/strict';
import { createServer as createHttpServer } from 'node:http';
import { createServer, type Socket } from 'node:net';
import { after, before, describe, test } from 'node:test';
import { setTimeout as sleep } from 'node:timers/promises';
import {
  EtcdClient,
  EtcdClusterClient,
  EtcdError,
  EtcdProtocolError,
  EtcdUnavailableError,
  GrpcCode,
  LearnerNotReadyError,
  MemberNotFoundError,
  NotLeaderError,
  QuorumUnavailableError,
  UnhealthyClusterError,
  isMemberId,
  memberIdFromHex,
  memberIdToHex,
  type Member,
} from '../../src/etcd/index.ts';
import { prefixEnd } from '../../src/etcd/client.ts';
import { etcdError } from '../../src/etcd/errors.ts';
import { freePorts, startLocalEtcd, type LocalEtcdCluster } from '../support/local-etcd.ts';

const TIMEOUT_MS = 5000;

/**
 * The one call the client deliberately has no method for (raising an alarm by hand), so the alarm test
 * can set up the state it reads and disarms.
 */
async function raiseAlarm(endpoint: string, memberId: string, alarm: string): Promise<void> {
  const res = await fetch(`${endpoint}/v3/maintenance/alarm`, {
    method: 'POST',
    body: JSON.stringify({ action: 'ACTIVATE', memberID: memberId, alarm }),
    signal: AbortSignal.timeout(5000),
  });
  assert.equal(res.status, 200, await res.text());
}

async function eventually<T>(what: string, fn: () => Promise<T | undefined>, timeoutMs = 15_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  let last: unknown;
  while (Date.now() < deadline) {
    try {
      const value = await fn();
      if (value !== undefined) return value;
    } catch (err) {
      last = err;
    }
    await sleep(200);
  }
  throw new Error(`timed out waiting for ${what}${last instanceof Error ? `: ${last.message}` : ''}`);
}

describe('memberIdToHex', () => {
  test('prints uint64 IDs as etcdctl does, and back', () => {
    assert.equal(memberIdToHex('13668033151171901709'), 'bdae9bbc11dd390d');
    assert.equal(memberIdToHex('18446744073709551615'), 'ffffffffffffffff');
    // etcdctl's %x does not pad.
    assert.equal(memberIdToHex('255'), 'ff');
    assert.equal(memberIdFromHex('bdae9bbc11dd390d'), '13668033151171901709');
    assert.equal(memberIdFromHex('0xFF'), '255');
  });

  test('rejects what is not a decimal uint64', () => {
    for (const bad of ['', '-1', '1.5', '0x10', 'abc', '18446744073709551616', '007']) {
      assert.equal(isMemberId(bad), false, bad);
      assert.throws(() => memberIdToHex(bad), RangeError);
    }
    assert.throws(() => memberIdFromHex('12345678901234567'), RangeError);
  });
});

describe('prefixEnd', () => {
  test('increments the last byte below 0xff, on the UTF-8 bytes', () => {
    assert.deepEqual(prefixEnd('/a/'), new Uint8Array(Buffer.from('/a0')));
    // π is CF 80 in UTF-8; the end is CF 81, which is ρ.
    assert.deepEqual(prefixEnd('/π'), new Uint8Array(Buffer.from('/ρ')));
    // ÿ is C3 BF: the end C3 C0 is not valid UTF-8, which is why it is bytes.
    assert.deepEqual(prefixEnd('ÿ'), new Uint8Array([0xc3, 0xc0]));
    // Nothing to increment: "\0" means the end of the keyspace.
    assert.deepEqual(prefixEnd(''), new Uint8Array([0]));
  });
});

describe('etcd errors as types', () => {
  test("a member's refusals for want of a quorum are QuorumUnavailableError; other timeouts are not", () => {
    const typed = (message: string): EtcdError => etcdError('http://e:2379', '/v3/kv/range', 503, GrpcCode.Unavailable, message);
    for (const message of [
      'etcdserver: no leader',
      'etcdserver: leader changed',
      'etcdserver: request timed out',
      'etcdserver: request timed out, possibly due to previous leader failure',
      'etcdserver: request timed out, possibly due to connection lost',
    ]) {
      const err = typed(message);
      assert.ok(err instanceof QuorumUnavailableError, message);
      assert.equal(err.etcdMessage, message);
    }
    // This member applying slowly, and a leadership transfer: timeouts, but not about the quorum.
    for (const message of ['etcdserver: request timed out, waiting for the applied index took too long', 'etcdserver: request timed out, leader transfer took too long', 'etcdserver: not leader']) {
      assert.ok(!(typed(message) instanceof QuorumUnavailableError), message);
    }
    assert.ok(typed('etcdserver: not leader') instanceof NotLeaderError);
  });
});

describe('EtcdClient retries (against a scripted HTTP server)', () => {
  test('a read is sent again once after a reset; a write never is', async () => {
    const seen: string[] = [];
    let resets = 0;
    let headerless = false;
    const server = createHttpServer((req, res) => {
      seen.push(req.url ?? '');
      if (resets > 0) {
        resets--;
        req.socket.destroy();
        return;
      }
      if (req.url === '/v3/kv/range') {
        res.writeHead(502, { 'content-type': 'text/html' }).end('<html>bad gateway</html>');
        return;
      }
      if (headerless) {
        res.writeHead(200, { 'content-type': 'application/json' }).end('{}');
        return;
      }
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(JSON.stringify({ header: { cluster_id: '1', member_id: '2', revision: '7' }, version: '3.6.16', dbSize: '20480', leader: '2', raftIndex: '9', raftTerm: '3' }));
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    const address = server.address();
    assert.ok(address && typeof address === 'object');
    const client = new EtcdClient({ endpoint: `http://127.0.0.1:${address.port}/`, timeoutMs: 2000 });
    try {
      assert.equal(client.endpoint, `http://127.0.0.1:${address.port}`);
      resets = 1;
      const status = await client.status();
      assert.deepEqual(seen, ['/v3/maintenance/status', '/v3/maintenance/status']);
      assert.equal(status.memberId, '2');
      assert.equal(status.revision, '7');
      // Defaults for fields protobuf JSON leaves out.
      assert.equal(status.isLearner, false);
      assert.deepEqual(status.errors, []);
      assert.equal(status.dbSizeInUse, undefined);

      seen.length = 0;
      resets = 2;
      await assert.rejects(client.put('k', 'v'), (err: unknown) => err instanceof EtcdUnavailableError && err.reason === 'reset');
      await assert.rejects(client.memberPromote('5'), (err: unknown) => err instanceof EtcdUnavailableError && err.reason === 'reset');
      assert.equal(resets, 0);
      assert.deepEqual(seen, ['/v3/kv/put', '/v3/cluster/member/promote']);

      // Something that is not the etcd gateway answering.
      await assert.rejects(client.get('k'), EtcdProtocolError);
      // A 200 without the write's revision is no proof the write was committed.
      headerless = true;
      await assert.rejects(client.put('k', 'v'), (err: unknown) => err instanceof EtcdProtocolError && /header\.revision/.test(err.message));
    } finally {
      client.close();
      server.closeAllConnections();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    }
  });
});

describe('EtcdClient against a 3-member etcd 3.6 cluster', () => {
  let cluster: LocalEtcdCluster | undefined;
  let clients: EtcdClusterClient;
  const extra: EtcdClient[] = [];

  const env = (): LocalEtcdCluster => {
    assert.ok(cluster, 'cluster started');
    return cluster;
  };

  async function leader(): Promise<{ id: string; client: EtcdClient }> {
    return eventually('an agreed leader', async () => {
      const view = await clients.leaderStatus();
      if (view.leaderId === undefined || view.leaderEndpoint === undefined) return undefined;
      return { id: view.leaderId, client: clients.client(view.leaderEndpoint)! };
    });
  }

  before(async () => {
    cluster = await startLocalEtcd({ members: 3, version: '3.6.16' });
    clients = new EtcdClusterClient({ endpoints: cluster.endpoints, timeoutMs: TIMEOUT_MS });
  });

  after(async () => {
    clients?.close();
    for (const c of extra) c.close();
    await cluster?.stop();
  });

  test('status: three voting members agree on one leader', async () => {
    // 3.6 records its storage version a moment after the cluster forms: wait for that, the positive signal.
    const view = await eventually('every member reports a storage version', async () => {
      const v = await clients.leaderStatus();
      return v.statuses.length === 3 && v.statuses.every((s) => s.status.storageVersion) ? v : undefined;
    }, 15_000);
    assert.equal(view.failures.length, 0);
    assert.equal(view.statuses.length, 3);
    assert.ok(view.leaderId && view.leaderId !== '0');
    assert.ok(view.leaderEndpoint);
    const clusterIds = new Set(view.statuses.map((s) => s.status.clusterId));
    assert.equal(clusterIds.size, 1);
    const memberIds = new Set(view.statuses.map((s) => s.status.memberId));
    assert.equal(memberIds.size, 3);
    assert.ok(memberIds.has(view.leaderId));
    for (const { status } of view.statuses) {
      assert.equal(status.leaderId, view.leaderId);
      assert.equal(status.version, '3.6.16');
      assert.equal(status.isLearner, false);
      assert.deepEqual(status.errors, []);
      assert.ok(isMemberId(status.memberId));
      assert.match(status.revision, /^[0-9]+$/);
      assert.match(status.raftIndex, /^[0-9]+$/);
      assert.match(status.raftTerm, /^[1-9][0-9]*$/);
      assert.match(status.raftAppliedIndex ?? '', /^[0-9]+$/);
      assert.ok(status.dbSize > 0);
      assert.equal(typeof status.dbSizeInUse, 'number');
      // 3.6 migrates the storage version from 3.5.0 shortly after the cluster forms.
      assert.match(status.storageVersion ?? '', /^3\.[56]\.0$/);
    }
    // The leader's own status names itself.
    const own = view.statuses.find((s) => s.endpoint === view.leaderEndpoint)!;
    assert.equal(own.status.memberId, view.leaderId);
  });

  test('memberList: local and linearizable views list the three started members', async () => {
    const statuses = (await clients.leaderStatus()).statuses;
    for (const linearizable of [false, true]) {
      const members = await clients.client(env().endpoints[1]!)!.memberList({ linearizable });
      assert.equal(members.length, 3);
      const byName = new Map(members.map((m) => [m.name, m]));
      for (const m of env().members) {
        const listed = byName.get(m.name);
        assert.ok(listed, m.name);
        assert.deepEqual(listed.peerURLs, [m.peerURL]);
        assert.deepEqual(listed.clientURLs, [m.clientURL]);
        assert.equal(listed.isLearner, false);
        const status = statuses.find((s) => s.endpoint === m.clientURL)!;
        assert.equal(listed.id, status.status.memberId);
      }
    }
  });

  test('health is true on every member', async () => {
    for (const client of clients) {
      assert.equal(await client.health(), true);
      assert.deepEqual(await client.healthCheck(), { healthy: true, reason: '' });
    }
  });

  test('put/get round-trip text through base64', async () => {
    const [a, b] = clients.clients();
    const key = '/quorum/check/π';
    const value = 'value ✓ with "quotes" and\nnewline';
    const { revision } = await a!.put(key, value);
    assert.match(revision, /^[1-9][0-9]*$/);
    assert.deepEqual(await b!.get(key), { value, modRevision: revision });
    assert.equal(await b!.get('/quorum/check/missing'), undefined);
    const serializable = await eventually('serializable read', async () => {
      const kv = await clients.clients()[2]!.get(key, { serializable: true });
      return kv?.modRevision === revision ? kv : undefined;
    });
    assert.equal(serializable.value, value);
  });

  test('range: a prefix in pages at one revision, an older revision, limit/more/count; delete', async () => {
    const [a, b] = clients.clients();
    const prefix = '/quorum/range/π';
    const keys = ['1', '2', '3', '4', '5'].map((k) => `${prefix}${k}`);
    // Just outside the prefix on both sides: '/quorum/range/ρ' is prefixEnd itself (exclusive).
    await a!.put('/quorum/range/o', 'before');
    await a!.put('/quorum/range/ρ', 'after');
    for (const key of keys) await a!.put(key, `v-${key}`);
    const end = prefixEnd(prefix);

    const all = await b!.range(prefix, { end });
    assert.deepEqual(all.kvs.map((kv) => kv.key), keys);
    assert.deepEqual(all.kvs.map((kv) => kv.value), keys.map((k) => `v-${k}`));
    assert.equal(all.count, 5);
    assert.equal(all.more, false);
    assert.match(all.revision, /^[1-9][0-9]*$/);
    for (const kv of all.kvs) {
      assert.equal(kv.version, '1');
      assert.equal(kv.createRevision, kv.modRevision);
    }

    const first = await b!.range(prefix, { end, limit: 2 });
    assert.deepEqual(first.kvs.map((kv) => kv.key), keys.slice(0, 2));
    assert.equal(first.more, true);
    assert.equal(first.count, 5, 'count ignores the limit');

    // Rewritten after the snapshot: a read at the old revision still sees the old value, page after page.
    const snapshot = all.revision;
    const rewritten = await a!.put(keys[3]!, 'new');
    assert.ok(BigInt(rewritten.revision) > BigInt(snapshot));
    const paged: string[] = [];
    let start = prefix;
    for (;;) {
      const page = await b!.range(start, { end, limit: 2, revision: snapshot });
      assert.equal(page.revision, rewritten.revision, 'header.revision is the current one, not the one asked for');
      paged.push(...page.kvs.map((kv) => `${kv.key}=${kv.value}`));
      if (!page.more) break;
      start = `${page.kvs.at(-1)!.key}\0`;
    }
    assert.deepEqual(paged, keys.map((k) => `${k}=v-${k}`));
    const now = (await b!.range(keys[3]!)).kvs[0];
    assert.equal(now?.value, 'new');
    assert.equal(now?.version, '2');
    assert.equal(now?.createRevision, all.kvs[3]!.createRevision);
    assert.equal((await b!.get(keys[3]!, { revision: snapshot }))?.value, `v-${keys[3]}`);

    // A revision the store has not reached is etcd's refusal, not unavailability.
    await assert.rejects(b!.range(prefix, { end, revision: String(BigInt(rewritten.revision) + 1000n) }), (err: unknown) => {
      assert.ok(err instanceof EtcdError, String(err));
      assert.equal(err.code, GrpcCode.OutOfRange);
      assert.match(err.etcdMessage, /future revision/);
      return true;
    });
    await assert.rejects(b!.range(prefix, { limit: 0 }), RangeError);
    await assert.rejects(b!.range(prefix, { revision: 'latest' }), RangeError);

    // An empty value is left out of protobuf JSON; it still reads back as ''.
    await a!.put(`${prefix}6`, '');
    assert.equal((await b!.get(`${prefix}6`))?.value, '');

    const deleted = await a!.delete(prefix, { end });
    assert.equal(deleted.deleted, 6);
    assert.ok(BigInt(deleted.revision) > BigInt(rewritten.revision));
    const empty = await b!.range(prefix, { end });
    assert.deepEqual(empty, { kvs: [], more: false, count: 0, revision: deleted.revision });
    assert.equal((await a!.delete(keys[0]!)).deleted, 0);
    // The neighbours were outside the range.
    assert.equal((await b!.get('/quorum/range/o'))?.value, 'before');
    assert.equal((await b!.get('/quorum/range/ρ'))?.value, 'after');
  });

  test('version: the binary, the cluster version the leader decided, and the storage version', async () => {
    const { client } = await leader();
    // The leader decides the cluster version a moment after the cluster forms ("not_decided" until then).
    const versions = await eventually('a decided cluster version', async () => {
      const v = await client.version();
      return v.cluster ? v : undefined;
    });
    assert.deepEqual(versions, { server: '3.6.16', cluster: '3.6.0', storage: '3.6.0' });
  });

  test('alarms: none, then NOSPACE raised and disarmed', async () => {
    const client = clients.clients()[0]!;
    assert.deepEqual(await client.alarms(), []);
    const me = (await client.status()).memberId;
    await raiseAlarm(client.endpoint, me, 'NOSPACE');
    const alarms = await client.alarms();
    assert.deepEqual(alarms, [{ memberId: me, alarm: 'NOSPACE' }]);
    // With NOSPACE the cluster refuses writes: etcd's answer, not unavailability.
    await assert.rejects(client.put('/quorum/nospace', 'x'), (err: unknown) => {
      assert.ok(err instanceof EtcdError, String(err));
      assert.equal(err.code, GrpcCode.ResourceExhausted);
      assert.match(err.etcdMessage, /database space exceeded/);
      return true;
    });
    for (const alarm of alarms) await client.disarm(alarm);
    assert.deepEqual(await client.alarms(), []);
    await client.put('/quorum/nospace', 'x');
  });

  test('memberAdd as learner, start it, promote once caught up: four voters', async () => {
    const { client: lead } = await leader();
    const slot = await env().reserve('m3');
    // etcd's strict reconfiguration check refuses changes until every voter has been connected for 5 s.
    const added = await eventually('memberAdd', async () => {
      try {
        return await lead.memberAdd([slot.peerURL], { learner: true });
      } catch (err) {
        if (err instanceof UnhealthyClusterError) return undefined;
        throw err;
      }
    });
    assert.equal(added.member.isLearner, true);
    assert.equal(added.member.name, '');
    assert.deepEqual(added.member.peerURLs, [slot.peerURL]);
    assert.deepEqual(added.member.clientURLs, []);
    assert.ok(isMemberId(added.member.id));
    assert.equal(added.members.length, 4);

    // Not started yet, so certainly not in sync.
    await assert.rejects(lead.memberPromote(added.member.id), (err: unknown) => {
      assert.ok(err instanceof LearnerNotReadyError, String(err));
      assert.ok(err instanceof EtcdError);
      assert.equal(err.code, GrpcCode.FailedPrecondition);
      return true;
    });

    const started = await env().startAdded(slot, added.members);
    const learner = new EtcdClient({ endpoint: started.clientURL, timeoutMs: TIMEOUT_MS });
    extra.push(learner);
    const learnerStatus = await learner.status();
    assert.equal(learnerStatus.memberId, added.member.id);
    assert.equal(learnerStatus.isLearner, true);

    let notReady = 0;
    const promoted = await eventually('promotion', async () => {
      try {
        return await lead.memberPromote(added.member.id);
      } catch (err) {
        if (err instanceof LearnerNotReadyError) {
          notReady++;
          return undefined;
        }
        throw err;
      }
    });
    assert.ok(notReady < 50);
    assert.equal(promoted.length, 4);

    const members = await lead.memberList({ linearizable: true });
    assert.equal(members.length, 4);
    assert.ok(members.every((m) => !m.isLearner));
    const m3 = members.find((m) => m.id === added.member.id);
    assert.equal(m3?.name, 'm3');
    assert.deepEqual(m3?.clientURLs, [slot.clientURL]);
    assert.equal((await learner.status()).isLearner, false);
  });

  test('memberRemove: back to three', async () => {
    const { client: lead } = await leader();
    const before = await lead.memberList({ linearizable: true });
    const m3 = before.find((m) => m.name === 'm3');
    assert.ok(m3);
    const remaining = await eventually('memberRemove', async () => {
      try {
        return await lead.memberRemove(m3.id);
      } catch (err) {
        if (err instanceof UnhealthyClusterError) return undefined;
        throw err;
      }
    });
    assert.equal(remaining.length, 3);
    assert.ok(!remaining.some((m: Member) => m.id === m3.id));
    const after = await lead.memberList({ linearizable: true });
    assert.deepEqual(after.map((m) => m.name).sort(), ['m0', 'm1', 'm2']);
    await env().member('m3').stop();
  });

  test('removing an unknown member is etcd saying no (member not found)', async () => {
    const client = clients.clients()[0]!;
    await assert.rejects(client.memberRemove('1234567890123'), (err: unknown) => {
      assert.ok(err instanceof MemberNotFoundError, String(err));
      assert.ok(err instanceof EtcdError);
      assert.equal(err.code, GrpcCode.NotFound);
      assert.match(err.message, /member not found/);
      assert.match(err.etcdMessage, /member not found/);
      assert.equal(err.endpoint, client.endpoint);
      return true;
    });
    await assert.rejects(client.memberRemove('0xabc'), RangeError);
  });

  test('moveLeader: sent to the leader, leadership moves to the chosen follower', async () => {
    const { id: oldLeader, client: lead } = await leader();
    const view = await clients.leaderStatus();
    const follower = view.statuses.find((s) => s.status.memberId !== oldLeader)!;
    const followerClient = clients.client(follower.endpoint)!;

    // A follower refuses: only the leader can hand over leadership.
    await assert.rejects(followerClient.moveLeader(oldLeader), NotLeaderError);

    await lead.moveLeader(follower.status.memberId);
    const moved = await eventually('new leader', async () => {
      const v = await clients.leaderStatus();
      return v.leaderId === follower.status.memberId ? v : undefined;
    });
    assert.equal(moved.leaderEndpoint, follower.endpoint);
  });

  test('a stopped member gives EtcdUnavailableError quickly', async () => {
    const stopped = new EtcdClient({ endpoint: env().member('m3').clientURL, timeoutMs: 2000 });
    extra.push(stopped);
    for (const call of [() => stopped.status(), () => stopped.memberList(), () => stopped.health(), () => stopped.memberAdd(['http://127.0.0.1:1'])]) {
      const started = Date.now();
      await assert.rejects(call(), (err: unknown) => {
        assert.ok(err instanceof EtcdUnavailableError, String(err));
        assert.equal(err.reason, 'refused');
        return true;
      });
      assert.ok(Date.now() - started < 2000, `took ${Date.now() - started} ms`);
    }
  });

  test('a member that accepts but never answers times out as EtcdUnavailableError', async () => {
    const sockets = new Set<Socket>();
    const silent = createServer((s) => sockets.add(s));
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const address = silent.address();
    assert.ok(address && typeof address === 'object');
    const client = new EtcdClient({ endpoint: `http://127.0.0.1:${address.port}`, timeoutMs: 300 });
    try {
      const started = Date.now();
      await assert.rejects(client.status(), (err: unknown) => {
        assert.ok(err instanceof EtcdUnavailableError, String(err));
        assert.equal(err.reason, 'timeout');
        return true;
      });
      const took = Date.now() - started;
      assert.ok(took >= 250 && took < 1500, `took ${took} ms`);
      // The caller's own abort is not unavailability.
      const abort = new AbortController();
      const pending = client.status({ signal: abort.signal, timeoutMs: 5000 });
      setTimeout(() => abort.abort(), 50);
      await assert.rejects(pending, { name: 'AbortError' });
    } finally {
      client.close();
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => silent.close(() => resolve()));
    }
  });

  test('leaderStatus only counts answers: silence never makes a majority', async () => {
    const dead = (await freePorts(2)).map((p) => `http://127.0.0.1:${p}`);
    const mostly = new EtcdClusterClient({ endpoints: [...env().endpoints, ...dead], timeoutMs: 2000 });
    const few = new EtcdClusterClient({ endpoints: [env().endpoints[0]!, ...dead], timeoutMs: 2000 });
    try {
      const three = await mostly.leaderStatus();
      assert.equal(three.statuses.length, 3);
      assert.equal(three.failures.length, 2);
      assert.ok(three.failures.every((f) => f.error instanceof EtcdUnavailableError));
      assert.ok(three.leaderId);
      const one = await few.leaderStatus();
      assert.equal(one.statuses.length, 1);
      assert.equal(one.leaderId, undefined);
      assert.equal(one.leaderEndpoint, undefined);
    } finally {
      mostly.close();
      few.close();
    }
  });
});

describe('EtcdClient against etcd 3.5', () => {
  let cluster: LocalEtcdCluster | undefined;
  let clients: EtcdClusterClient | undefined;

  before(async () => {
    cluster = await startLocalEtcd({ members: 3, version: '3.5.35' });
    clients = new EtcdClusterClient({ endpoints: cluster.endpoints, timeoutMs: TIMEOUT_MS });
  });

  after(async () => {
    clients?.close();
    await cluster?.stop();
  });

  test('status and memberList', async () => {
    assert.ok(clients && cluster);
    const view = await clients.leaderStatus();
    assert.equal(view.statuses.length, 3);
    assert.ok(view.leaderId);
    for (const { status } of view.statuses) {
      assert.equal(status.version, '3.5.35');
      assert.equal(status.storageVersion, undefined);
      assert.equal(status.leaderId, view.leaderId);
    }
    const members = await clients.clients()[0]!.memberList({ linearizable: true });
    assert.deepEqual(members.map((m) => m.name).sort(), ['m0', 'm1', 'm2']);
    assert.deepEqual(new Set(members.map((m) => m.id)), new Set(view.statuses.map((s) => s.status.memberId)));
    // 3.5 also repeats the message as "error": the same typed error comes out.
    await assert.rejects(clients.clients()[0]!.memberRemove('42'), MemberNotFoundError);
  });

  test('version: 3.5 reports no storage version', async () => {
    assert.ok(clients);
    const client = clients.clients()[0]!;
    const versions = await eventually('a decided cluster version', async () => {
      const v = await client.version();
      return v.cluster ? v : undefined;
    });
    assert.deepEqual(versions, { server: '3.5.35', cluster: '3.5.0' });
  });

  test('put, paged range at a revision, delete', async () => {
    assert.ok(clients);
    const [a, b] = clients.clients();
    const { revision } = await a!.put('/q/35/a', '1');
    await a!.put('/q/35/b', '2');
    await a!.put('/q/35/a', 'changed');
    const page = await b!.range('/q/35/', { end: prefixEnd('/q/35/'), limit: 1, revision });
    assert.deepEqual(page.kvs.map((kv) => [kv.key, kv.value]), [['/q/35/a', '1']]);
    // At `revision` only a existed: no second page.
    assert.equal(page.more, false);
    assert.equal(page.count, 1);
    assert.equal((await b!.range('/q/35/', { end: prefixEnd('/q/35/') })).count, 2);
    assert.equal((await a!.delete('/q/35/', { end: prefixEnd('/q/35/') })).deleted, 2);
  });
});
