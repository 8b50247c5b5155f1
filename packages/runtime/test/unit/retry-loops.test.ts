// Every retry loop of the runtime has a bound and a voice. Each loop runs here against a scripted HTTPS API
// server (or a fake client) that fails on purpose, and the test checks what a person would see: the metric,
// one warn line per 30 s (on a fake clock) carrying the server's words, the recovery line, and /readyz.
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request as httpRequest, type IncomingMessage, type ServerResponse } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { after, test } from 'node:test';
import { Informer } from '../../src/cache/informer.ts';
import { ApiError } from '../../src/client/errors.ts';
import { ConfigMaps } from '../../src/client/resources.ts';
import { Controller } from '../../src/controller/controller.ts';
import { EventRecorder } from '../../src/helpers/events.ts';
import { createLogger, type Logger } from '../../src/manager/log.ts';
import { LeadershipLostError, Manager } from '../../src/manager/manager.ts';
import { RuntimeMetrics } from '../../src/manager/metrics.ts';
import type { KubeObject } from '../../src/object.ts';
import { RetryReporter } from '../../src/watch/retry-reporter.ts';
import { SHORT_WATCH_MS, watcher } from '../../src/watch/watcher.ts';
import { CertificateReloader, type WebhookLogLevel } from '../../src/webhook/cert-reloader.ts';
import { generateCertificates } from '../../src/webhook/certs.ts';
import { json, metricValue, recordingLog, scriptedServer, status } from './retry-support.ts';

type Json = Record<string, unknown>;

/** A pino logger at debug whose lines are kept, parsed. */
function capturedLogger(): { log: Logger; lines: Json[]; at: (level: string) => Json[] } {
  const lines: Json[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Json);
      done();
    },
  });
  return { log: createLogger({ level: 'debug', destination }), lines, at: (level) => lines.filter((l) => l['level'] === level) };
}

async function until<T>(what: string, check: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 5000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await check();
    if (value) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((r) => setTimeout(r, 10));
  }
}

const cm = (name: string, rv: string): KubeObject => ({ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, namespace: 'ns', resourceVersion: rv } });
const list = (items: KubeObject[], rv: string, cont?: string) => ({ kind: 'ConfigMapList', apiVersion: 'v1', metadata: { resourceVersion: rv, continue: cont }, items });
const bookmark = (rv: string) => `${JSON.stringify({ type: 'BOOKMARK', object: { kind: 'ConfigMap', apiVersion: 'v1', metadata: { resourceVersion: rv } } })}\n`;
const fastBackoff = { initialMs: 1, maxMs: 5, jitter: 0 };

/** Answers the creation of Lease ns/candidates like the API server (and hands the stored Lease to `onCreated`); false for any other request. */
function createsLease(req: IncomingMessage, res: ServerResponse, url: URL, onCreated: (lease: unknown) => void): boolean {
  if (req.method !== 'POST' || url.pathname !== '/apis/coordination.k8s.io/v1/namespaces/ns/leases') return false;
  let body = '';
  req.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => {
    const lease = { ...(JSON.parse(body) as Json), metadata: { name: 'candidates', namespace: 'ns', resourceVersion: '1' } };
    onCreated(lease);
    json(res, 201, lease);
  });
  return true;
}

const cleanups: (() => Promise<void>)[] = [];
after(async () => {
  for (const cleanup of cleanups) await cleanup();
});

test('an informer whose list fails 4 times: counted, warned once per 30 s with the server\'s words, recovery told', async () => {
  const clock = { ms: 0 };
  let lists = 0;
  const api = await scriptedServer((_req, res, url) => {
    clock.ms += 10_000; // each request takes "10 s" of the fake clock
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.write(bookmark('12'));
      return; // stays open
    }
    if (++lists <= 4) return status(res, 503, 'ServiceUnavailable', 'etcdserver: leader changed');
    json(res, 200, list([cm('a', '10')], '11'));
  });
  cleanups.push(api.close);
  const log = recordingLog();
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const informer = new Informer(api.client, ConfigMaps, { namespace: 'ns', log, metrics: metrics.retries, now: () => clock.ms, backoff: fastBackoff });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  await informer.waitForSync();
  await until('the recovery line', () => log.at('info').length > 0);
  stop.abort();
  await running;

  const component = 'informer/configmaps(namespace=ns)';
  assert.equal(informer.component, component);
  assert.equal(await metricValue(metrics, 'runtime_retries_total', { component, reason: 'ServiceUnavailable' }), 4);
  assert.equal(await metricValue(metrics, 'runtime_failing_since_seconds', { component }), 0);
  assert.equal(informer.counts.reconnects, 4);
  // Failures at 10, 20, 30 and 40 s: warned at 10 and 40 s, debug at 20 and 30 s.
  const warns = log.at('warn');
  assert.deepEqual(warns.map((w) => w.fields['failingForSeconds']), [0, 30], JSON.stringify(log.lines));
  assert.equal(log.at('debug').length, 2);
  for (const warn of warns) assert.match(warn.msg, /GET \/api\/v1\/namespaces\/ns\/configmaps: 503 ServiceUnavailable: etcdserver: leader changed/);
  // The list succeeds at 50 s and the watch's bookmark arrives at 60 s: 50 s after the first failure.
  const [recovered] = log.at('info');
  assert.equal(recovered!.msg, `${component}: recovered after 50 s and 4 failed attempts (last error: GET /api/v1/namespaces/ns/configmaps: 503 ServiceUnavailable: etcdserver: leader changed)`);
  assert.equal(informer.failing(), undefined);
});

test('an informer that cannot list makes /readyz fail past its bound, and the sync timeout names it and the error', async () => {
  const api = await scriptedServer((_req, res) => status(res, 403, 'Forbidden', 'configmaps is forbidden: User "system:serviceaccount:ns:op" cannot list resource "configmaps"'));
  cleanups.push(api.close);
  const { log, at } = capturedLogger();
  const manager = new Manager(api.client, { namespace: 'ns', probePort: 0, probeHost: '127.0.0.1', syncTimeoutMs: 1500, informerFailureBoundMs: 200, logger: log });
  manager.informer(ConfigMaps);
  const stop = new AbortController();
  const started = manager.start(stop.signal);
  started.catch(() => undefined);
  const readyz = (): Promise<{ code: number; body: string }> =>
    new Promise((resolve, reject) => {
      httpRequest({ host: '127.0.0.1', port: manager.probes.port, path: '/readyz' }, (res) => {
        let body = '';
        res.setEncoding('utf8').on('data', (d: string) => (body += d)).on('end', () => resolve({ code: res.statusCode ?? 0, body }));
      }).on('error', reject).end();
    });
  await until('the probe server', () => manager.probes.port > 0);
  const unready = await until('/readyz to name the stuck informer', async () => {
    const reply = await readyz();
    return reply.body.includes('informers-watching') && reply;
  });
  assert.equal(unready.code, 503);
  assert.match(unready.body, /informers-watching: informer\/configmaps\(namespace=ns\): cannot list or watch for \d+ ms \(bound 200 ms\): GET \/api\/v1\/namespaces\/ns\/configmaps: 403 Forbidden: configmaps is forbidden/);
  await assert.rejects(started, /caches not synced after 1\.5 s: informer\/configmaps\(namespace=ns\) \(failing for .*403 Forbidden: configmaps is forbidden/);
  const warns = at('warn');
  assert.equal(warns.length, 1, 'one warn line within 30 s, however often it retried');
  assert.equal(warns[0]!['component'], 'informer/configmaps(namespace=ns)');
  assert.match(String(warns[0]!['error']), /configmaps is forbidden/);
  assert.equal(await metricValue(manager.metrics, 'runtime_retries_total', { component: 'informer/configmaps(namespace=ns)', reason: 'Forbidden' }) !== undefined, true);
});

test('a 410 Gone straight after a list backs off instead of relisting in a hot loop', async () => {
  let lists = 0;
  const api = await scriptedServer((_req, res, url) => {
    if (url.searchParams.get('watch') !== 'true') {
      lists++;
      return json(res, 200, list([], '5'));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version: 5 (9)' } })}\n`);
  });
  cleanups.push(api.close);
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const log = recordingLog();
  const reporter = new RetryReporter({ component: 'watch/configmaps', log, metrics: metrics.retries });
  const stop = new AbortController();
  const consume = (async () => {
    for await (const _ of watcher(api.client, ConfigMaps, { namespace: 'ns', signal: stop.signal, reporter, backoff: { initialMs: 50, maxMs: 200, jitter: 0 } })) {
      /* drain */
    }
  })();
  await new Promise((r) => setTimeout(r, 600));
  stop.abort();
  await consume;
  assert.ok(lists >= 2 && lists <= 6, `relisted ${lists} times in 600 ms`);
  // One failure per list: the last may or may not have come before the stop.
  const gones = (await metricValue(metrics, 'runtime_retries_total', { component: 'watch/configmaps', reason: 'Expired' })) ?? 0;
  assert.ok(gones >= lists - 1 && gones <= lists, `${gones} failures for ${lists} lists`);
  assert.match(log.at('warn')[0]!.msg, /too old resource version: 5 \(9\)/);
});

test('a 410 Gone long after the list relists at once, counted as a routine retry, not a failure', async () => {
  let lists = 0;
  const api = await scriptedServer((_req, res, url) => {
    if (url.searchParams.get('watch') !== 'true') {
      lists++;
      return json(res, 200, list([], String(lists * 10)));
    }
    res.writeHead(200, { 'content-type': 'application/json' });
    res.write(bookmark('11'));
    if (lists === 1) setTimeout(() => res.end(`${JSON.stringify({ type: 'ERROR', object: { kind: 'Status', code: 410, reason: 'Expired', message: 'too old resource version' } })}\n`), SHORT_WATCH_MS + 100);
  });
  cleanups.push(api.close);
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const log = recordingLog();
  const reporter = new RetryReporter({ component: 'watch/configmaps', log, metrics: metrics.retries });
  const stop = new AbortController();
  const consume = (async () => {
    for await (const _ of watcher(api.client, ConfigMaps, { namespace: 'ns', signal: stop.signal, reporter })) {
      /* drain */
    }
  })();
  await until('the relist', () => lists === 2, 5000);
  stop.abort();
  await consume;
  assert.equal(await metricValue(metrics, 'runtime_retries_total', { component: 'watch/configmaps', reason: 'Gone' }), 1);
  assert.equal(log.at('warn').length, 0);
  assert.match(log.at('info')[0]!.msg, /resourceVersion too old; relisting: WATCH .*too old resource version/);
  assert.equal(reporter.failing(), undefined);
});

test('a watch the server ends at once with nothing in it is a failure with backoff, not a spin', async () => {
  let watches = 0;
  const api = await scriptedServer((_req, res, url) => {
    if (url.searchParams.get('watch') !== 'true') return json(res, 200, list([], '5'));
    watches++;
    res.writeHead(200, { 'content-type': 'application/json' }).end();
  });
  cleanups.push(api.close);
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const reporter = new RetryReporter({ component: 'watch/configmaps', metrics: metrics.retries });
  const stop = new AbortController();
  const consume = (async () => {
    for await (const _ of watcher(api.client, ConfigMaps, { namespace: 'ns', signal: stop.signal, reporter, backoff: { initialMs: 50, maxMs: 200, jitter: 0 } })) {
      /* drain */
    }
  })();
  await new Promise((r) => setTimeout(r, 600));
  stop.abort();
  await consume;
  assert.ok(watches >= 2 && watches <= 6, `${watches} watches in 600 ms`);
  assert.ok((await metricValue(metrics, 'runtime_retries_total', { component: 'watch/configmaps', reason: 'ShortWatch' }))! >= 1);
  assert.match(reporter.failing()?.message ?? '', /watch of configmaps ended by the server after \d+ ms with no events/);
});

test('an expired continue token is counted and followed by one unpaged list, not an endless restart', async () => {
  const api = await scriptedServer((_req, res, url) => {
    if (url.searchParams.get('watch') === 'true') {
      res.writeHead(200, { 'content-type': 'application/json' });
      return void res.write(bookmark('30'));
    }
    if (url.searchParams.get('continue')) return status(res, 410, 'Expired', 'The provided continue parameter is too old');
    if (url.searchParams.get('limit')) return json(res, 200, list([cm('a', '1')], '20', 'token'));
    json(res, 200, list([cm('a', '1'), cm('b', '2')], '25'));
  });
  cleanups.push(api.close);
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const informer = new Informer(api.client, ConfigMaps, { namespace: 'ns', pageSize: 1, metrics: metrics.retries });
  const stop = new AbortController();
  const running = informer.run(stop.signal);
  await informer.waitForSync();
  stop.abort();
  await running;
  assert.deepEqual(informer.store.list().map((o) => o.metadata.name).sort(), ['a', 'b']);
  assert.equal(await metricValue(metrics, 'runtime_retries_total', { component: 'informer/configmaps(namespace=ns)', reason: 'ExpiredContinue' }), 1);
  assert.equal(api.requests.filter((u) => u.searchParams.get('watch') !== 'true').length, 3);
});

test('leader election: a failing campaign is voiced and counted; losing the lease says what the renewal was told', async () => {
  let gets = 0;
  let created: unknown;
  const api = await scriptedServer((req, res, url) => {
    if (createsLease(req, res, url, (lease) => (created = lease))) return;
    gets++;
    if (created) return status(res, 503, 'ServiceUnavailable', 'etcdserver: leader changed');
    if (gets <= 3) return status(res, 500, 'InternalError', 'etcdserver: request timed out');
    status(res, 404, 'NotFound', 'leases.coordination.k8s.io "candidates" not found');
  });
  cleanups.push(api.close);
  const { log, at } = capturedLogger();
  const manager = new Manager(api.client, { logger: log, leaderElection: { name: 'candidates', namespace: 'ns', identity: 'me', leaseDurationMs: 1000, renewDeadlineMs: 400, retryPeriodMs: 50 } });
  const err = await manager.start(new AbortController().signal).then(
    () => assert.fail('start should reject'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof LeadershipLostError);
  assert.match(err.message, /^leadership lost: controllers stopped: could not renew the Lease ns\/candidates within the renew deadline \(400 ms\): GET .*: 503 ServiceUnavailable: etcdserver: leader changed$/);
  assert.equal(await metricValue(manager.metrics, 'runtime_retries_total', { component: 'leader-election', reason: 'InternalError' }), 3);
  assert.ok((await metricValue(manager.metrics, 'runtime_retries_total', { component: 'leader-election', reason: 'ServiceUnavailable' }))! >= 1);
  const warns = at('warn');
  assert.equal(warns.length, 1, `one warn line in under 30 s: ${JSON.stringify(warns)}`);
  assert.match(String(warns[0]!['msg']), /^leader-election: GET .*: 500 InternalError: etcdserver: request timed out \(failing for 0 s, 1 attempt; retrying in \d+ ms\)$/);
  assert.ok(at('info').some((l) => /^leader-election: recovered after \d+ ms and 3 failed attempts/.test(String(l['msg']))));
  const lost = at('error').find((l) => String(l['msg']).startsWith('lost leadership'));
  assert.match(String(lost?.['msg']), /etcdserver: leader changed/);
});

test('leadership lost: runnables that run on every replica (a webhook server) stop too, so start() rejects and the process can exit', async () => {
  // Without this, a replica that lost the lease kept serving webhooks with its controllers stopped, and never
  // campaigned again: the chaos suite found both operator replicas so after a kube-apiserver restart.
  let created: unknown;
  const api = await scriptedServer((req, res, url) => {
    if (createsLease(req, res, url, (lease) => (created = lease))) return;
    if (created) return status(res, 503, 'ServiceUnavailable', 'the API server is restarting');
    status(res, 404, 'NotFound', 'leases.coordination.k8s.io "candidates" not found');
  });
  cleanups.push(api.close);
  const { log } = capturedLogger();
  const manager = new Manager(api.client, { logger: log, leaderElection: { name: 'candidates', namespace: 'ns', identity: 'me', leaseDurationMs: 1000, renewDeadlineMs: 400, retryPeriodMs: 50 } });
  let webhookStopped = false;
  manager.add({
    name: 'webhook-server',
    needLeaderElection: false,
    start: (signal) =>
      new Promise<void>((resolve) =>
        signal.addEventListener('abort', () => {
          webhookStopped = true;
          resolve();
        }),
      ),
  });
  const process = new AbortController(); // never aborted: only the lost lease may end start()
  const err = await manager.start(process.signal).then(
    () => assert.fail('start should reject'),
    (e: unknown) => e,
  );
  assert.ok(err instanceof LeadershipLostError, String(err));
  assert.equal(webhookStopped, true, 'the runnable without leader election was stopped');
  assert.equal(process.signal.aborted, false);
});

test('a reconcile that keeps failing warns once per 30 s per key and says when it recovers', async () => {
  const { log, at } = capturedLogger();
  const metrics = new RuntimeMetrics({ processMetrics: false });
  let calls = 0;
  const controller = new Controller('greeter', () => {
    if (++calls <= 3) return Promise.reject(new ApiError('PATCH', '/apis/apps/v1/namespaces/ns/deployments/a', 422, { reason: 'Invalid', message: 'spec.replicas: Invalid value: -1' }));
    return Promise.resolve();
  }, log, metrics);
  const stop = new AbortController();
  const running = controller.run(stop.signal, 100);
  controller.enqueue({ namespace: 'ns', name: 'a' });
  await until('the recovery', () => at('info').some((l) => String(l['msg']).includes('recovered')));
  stop.abort();
  await running;
  const warns = at('warn');
  assert.equal(warns.length, 1);
  assert.equal(warns[0]!['name'], 'a');
  assert.match(String(warns[0]!['msg']), /^controller\/greeter: PATCH .*: 422 Invalid: spec\.replicas: Invalid value: -1 \(failing for 0 s, 1 attempt; retrying in 5 ms\)$/);
  assert.equal(at('debug').filter((l) => l['component'] === 'controller/greeter').length, 2);
  assert.equal(await metricValue(metrics, 'runtime_retries_total', { component: 'controller/greeter', reason: 'Invalid' }), 3);
});

test('failing event writes are voiced (rate-limited), counted, and their recovery told; onError still hears each', async () => {
  const clock = { ms: Date.parse('2026-01-01T00:00:00Z') };
  let failures = 3;
  const fake = {
    create: <T extends KubeObject>(_type: unknown, obj: T): Promise<T> =>
      failures-- > 0 ? Promise.reject(new ApiError('POST', '/apis/events.k8s.io/v1/namespaces/db/events', 403, { reason: 'Forbidden', message: 'events.events.k8s.io is forbidden' })) : Promise.resolve(obj),
    mergePatch: <T extends KubeObject>(): Promise<T> => Promise.reject(new Error('unused')),
  };
  const log = recordingLog();
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const errors: unknown[] = [];
  const recorder = new EventRecorder(fake, { controller: 'c', instance: 'i', now: () => new Date(clock.ms), log, metrics: metrics.retries, onError: (e) => errors.push(e) });
  const regarding: KubeObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'p', namespace: 'db', uid: 'u' } };
  for (let i = 0; i < 4; i++) {
    recorder.record(regarding, { type: 'Warning', reason: 'StepRetrying', action: 'Scale', note: `attempt ${i}` });
    await recorder.flush();
    clock.ms += 10_000;
  }
  assert.equal(errors.length, 3);
  assert.equal(log.at('warn').length, 1);
  assert.match(log.at('warn')[0]!.msg, /^events: POST .*: 403 Forbidden: events\.events\.k8s\.io is forbidden/);
  assert.equal(log.at('info')[0]!.msg, 'events: recovered after 30 s and 3 failed attempts (last error: POST /apis/events.k8s.io/v1/namespaces/db/events: 403 Forbidden: events.events.k8s.io is forbidden)');
  assert.equal(await metricValue(metrics, 'runtime_retries_total', { component: 'events', reason: 'Forbidden' }), 3);
});

test('certificate files that cannot be read keep the current pair, warn every 30 s at warn level, and recover', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'retry-certs-'));
  cleanups.push(() => rm(dir, { recursive: true, force: true }));
  const certs = await generateCertificates({ ipAddresses: ['127.0.0.1'] });
  const certFile = join(dir, 'tls.crt');
  const keyFile = join(dir, 'tls.key');
  await writeFile(certFile, certs.cert);
  await writeFile(keyFile, certs.key);
  const clock = { ms: 0 };
  const logged: { msg: string; level: WebhookLogLevel | undefined }[] = [];
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const reloader = new CertificateReloader({ certFile, keyFile, onChange: () => undefined, logger: (msg, _fields, level) => logged.push({ msg, level }), pollIntervalMs: 10_000, metrics: metrics.retries, now: () => clock.ms });
  await reloader.load();
  await rm(keyFile);
  for (let i = 0; i < 4; i++) {
    await reloader.check();
    clock.ms += 10_000;
  }
  assert.deepEqual(logged.map((l) => l.level), ['warn', 'warn'], JSON.stringify(logged));
  assert.match(logged[0]!.msg, /^webhook\/certificates: cannot read certificate files; keeping the current ones: ENOENT.*tls\.key/);
  assert.match(logged[1]!.msg, /failing for 30 s, 4 attempts/);
  assert.equal(reloader.failing()?.attempts, 4);
  await writeFile(keyFile, certs.key);
  await reloader.check();
  assert.equal(logged[2]?.level, 'info');
  assert.match(logged[2].msg, /^webhook\/certificates: recovered after 40 s and 4 failed attempts/);
  assert.equal(await metricValue(metrics, 'runtime_retries_total', { component: 'webhook/certificates', reason: 'ENOENT' }), 4);
  await reloader.stop();
});
