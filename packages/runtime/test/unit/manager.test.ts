// The manager's scope and shutdown, against a scripted HTTPS API server: informers of a manager scoped to
// several namespaces watch each of them (and cluster-scoped kinds whole); on a stop, the leader keeps renewing
// its Lease while its leader work drains and releases the Lease only after that (issue 23: it used to release
// first, so a successor could reconcile beside a draining leader).
import assert from 'node:assert/strict';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { ConfigMaps, Namespaces } from '../../src/client/resources.ts';
import { createLogger } from '../../src/manager/log.ts';
import { Manager } from '../../src/manager/manager.ts';
import { json, scriptedServer } from './retry-support.ts';

const silent = createLogger({ level: 'silent', destination: new Writable({ write: (_c, _e, done) => done() }) });
const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup();
});

test('a manager scoped to several namespaces: one informer per kind watching each, cluster-scoped kinds whole; a scope of its own overrides', async () => {
  const { client, close } = await scriptedServer((_req, res) => res.end());
  cleanups.push(close);
  const manager = new Manager(client, { logger: silent, namespaces: ['tenant-a', 'tenant-b'] });
  assert.equal(manager.informer(ConfigMaps).component, 'informer/configmaps(namespaces=tenant-a,tenant-b)');
  assert.equal(manager.informer(ConfigMaps), manager.informer(ConfigMaps), 'shared');
  assert.equal(manager.informer(ConfigMaps, { labelSelector: 'app=x' }).component, 'informer/configmaps(namespaces=tenant-a,tenant-b,labels=app=x)');
  assert.equal(manager.informer(ConfigMaps, { namespace: 'tenant-a' }).component, 'informer/configmaps(namespace=tenant-a)');
  assert.equal(manager.informer(Namespaces).component, 'informer/namespaces');
  assert.equal(new Manager(client, { logger: silent, namespaces: ['only'] }).informer(ConfigMaps).component, 'informer/configmaps(namespace=only)');
  assert.equal(new Manager(client, { logger: silent }).informer(ConfigMaps).component, 'informer/configmaps');
  assert.throws(() => new Manager(client, { logger: silent, namespaces: [] }), /at least one namespace/);
  assert.throws(() => new Manager(client, { logger: silent, namespace: 'a', namespaces: ['b'] }), /not both/);
});

type Lease = { apiVersion: string; kind: string; metadata: Record<string, unknown>; spec: { holderIdentity?: string | null } };

test('on a stop the leader renews its Lease while its controllers drain, and releases it only once they have', async () => {
  const timeline: string[] = [];
  let lease: Lease | undefined;
  let version = 0;
  const path = '/apis/coordination.k8s.io/v1/namespaces/ns/leases';
  const api = await scriptedServer((req, res, url) => {
    if (req.method === 'GET' && url.pathname === `${path}/candidates`) return lease ? json(res, 200, lease) : json(res, 404, { kind: 'Status', code: 404, reason: 'NotFound', message: 'not found' });
    let body = '';
    req.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => {
      const written = JSON.parse(body) as Lease;
      lease = { ...written, metadata: { ...written.metadata, name: 'candidates', namespace: 'ns', resourceVersion: String(++version) } };
      timeline.push(lease.spec.holderIdentity === null ? 'release' : req.method === 'POST' ? 'acquire' : 'renew');
      json(res, req.method === 'POST' ? 201 : 200, lease);
    });
  });
  cleanups.push(api.close);
  const manager = new Manager(api.client, { logger: silent, leaderElection: { name: 'candidates', namespace: 'ns', identity: 'me', leaseDurationMs: 1000, renewDeadlineMs: 600, retryPeriodMs: 100 } });
  const leading = Promise.withResolvers<void>();
  // A controller's drain: it finishes what is in flight for 800 ms (most of a lease duration) after the stop.
  manager.add({
    name: 'draining-controller',
    start: async (signal) => {
      leading.resolve();
      await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
      timeline.push('stop');
      await new Promise((resolve) => setTimeout(resolve, 800));
      timeline.push('drained');
    },
  });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  await leading.promise;
  stop.abort();
  await running;
  const at = (event: string): number => timeline.indexOf(event);
  assert.ok(at('drained') > at('stop'));
  assert.equal(timeline.at(-1), 'release', `released last: ${timeline.join(' ')}`);
  assert.equal(timeline.filter((e) => e === 'release').length, 1);
  const renewedWhileDraining = timeline.slice(at('stop'), at('drained')).filter((e) => e === 'renew').length;
  assert.ok(renewedWhileDraining >= 3, `renewed every retry period while draining: ${timeline.join(' ')}`);
  assert.equal(lease?.spec.holderIdentity, null);
});
