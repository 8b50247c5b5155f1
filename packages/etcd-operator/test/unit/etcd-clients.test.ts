// The operator's etcd clients are kept per member endpoint (a pod IP): those no reconcile asks for any more (a
// replaced member, a deleted cluster) are closed and dropped once idle, but never while a call is under way
// (issue 23, finding 9). A clock of the test's own; a TCP server that accepts and never answers holds a call.
import assert from 'node:assert/strict';
import { createServer, type Socket } from 'node:net';
import { test } from 'node:test';
import { EtcdClients, IDLE_CLIENT_MS } from '../../src/etcd/clients.ts';

test('a client no reconcile asked for in IDLE_CLIENT_MS is closed and dropped; one in use, or with a call under way, is kept', async (t) => {
  const sockets = new Set<Socket>();
  const silent = createServer((s) => sockets.add(s));
  await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
  t.after(() => {
    for (const s of sockets) s.destroy();
    silent.close();
  });
  const port = (silent.address() as { port: number }).port;

  let now = 1_000_000;
  const clients = new EtcdClients({ now: () => now });
  const gone = clients.get('http://10.0.0.1:2379');
  const alive = clients.get('http://10.0.0.2:2379');
  const busy = clients.get(`http://127.0.0.1:${port}`);
  const call = new AbortController();
  const pending = busy.status({ signal: call.signal, timeoutMs: 10 * IDLE_CLIENT_MS }).catch((err: unknown) => err);
  await new Promise((resolve) => setTimeout(resolve, 50));
  assert.equal(busy.inFlight, 1, 'the call waits on a server that never answers');

  for (let minute = 0; minute <= IDLE_CLIENT_MS / 60_000; minute++) {
    now += 60_000;
    assert.equal(clients.get('http://10.0.0.2:2379'), alive, 'asked for at each resync: the same client');
  }
  assert.equal(clients.size, 2, 'the idle endpoint is dropped; the one with a call under way is kept');
  assert.notEqual(clients.get('http://10.0.0.1:2379'), gone, 'asked for again: a new client');
  assert.equal(clients.get(`http://127.0.0.1:${port}`), busy, 'the busy client is the same one');

  call.abort();
  await pending;
  assert.equal(busy.inFlight, 0);
  now += IDLE_CLIENT_MS + 60_001;
  clients.get('http://10.0.0.2:2379');
  assert.equal(clients.size, 1, 'once its call ended and it stayed idle, the busy client goes too; only the one asked for is left');
});
