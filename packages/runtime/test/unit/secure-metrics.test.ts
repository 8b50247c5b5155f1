// The HTTPS /metrics server: 401 without a token or with one the TokenReview rejects, 403 when the
// SubjectAccessReview does not allow get on /metrics, the metrics when it does; decisions cached and bounded.
// A scripted API server stands in for the reviews here; localkube's real ones are exercised by the etcd
// operator's monitoring integration test.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { mkdtemp, rm, writeFile } from 'node:fs/promises';
import { request } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import pino from 'pino';
import { Manager } from '../../src/manager/manager.ts';
import { RuntimeMetrics } from '../../src/manager/metrics.ts';
import { MetricsAuthorizer } from '../../src/manager/metrics-auth.ts';
import { SecureMetricsServer } from '../../src/manager/secure-metrics.ts';
import { generateCertificates, writeCertificates } from '../../src/webhook/certs.ts';
import { scriptedServer } from './retry-support.ts';

const silent = pino({ level: 'silent' });

/** Tokens the fake API server knows: `reader` may get /metrics, `stranger` may not; any other is unknown. */
async function fakeReviews(): Promise<Awaited<ReturnType<typeof scriptedServer>> & { bodies: Record<string, unknown>[] }> {
  const bodies: Record<string, unknown>[] = [];
  const api = await scriptedServer((req, res, url) => {
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      const body = JSON.parse(Buffer.concat(chunks).toString('utf8')) as { spec: { token?: string; user?: string; nonResourceAttributes?: unknown } };
      bodies.push(body);
      const reply =
        url.pathname === '/apis/authentication.k8s.io/v1/tokenreviews'
          ? { status: ['reader', 'stranger'].includes(body.spec.token ?? '') ? { authenticated: true, user: { username: `system:serviceaccount:monitoring:${body.spec.token}`, groups: ['system:serviceaccounts'] } } : { authenticated: false } }
          : { status: { allowed: body.spec.user === 'system:serviceaccount:monitoring:reader' } };
      res.writeHead(201, { 'content-type': 'application/json' }).end(JSON.stringify(reply));
    });
  });
  return { ...api, bodies };
}

function scrape(port: number, token?: string, method = 'GET'): Promise<{ status: number; body: string }> {
  return new Promise((resolve, reject) => {
    const headers = token ? { authorization: `Bearer ${token}` } : {};
    const req = request({ host: '127.0.0.1', port, path: '/metrics', method, headers, rejectUnauthorized: false }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (c: Buffer) => chunks.push(c));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, body: Buffer.concat(chunks).toString('utf8') }));
    });
    req.on('error', reject);
    req.end();
  });
}

test('secure metrics: 401 without or with an unknown token, 403 without the role, 200 with it; the probe port no longer serves /metrics', async () => {
  const api = await fakeReviews();
  const manager = new Manager(api.client, { logger: silent, probePort: 0, probeHost: '127.0.0.1', secureMetrics: { port: 0, host: '127.0.0.1' } });
  // A runnable that lasts until stopped: a manager with no work would stop (and close its servers) at once.
  manager.add({ name: 'idle', start: (signal) => new Promise((resolve) => signal.addEventListener('abort', () => resolve())) });
  const stop = new AbortController();
  const running = manager.start(stop.signal);
  try {
    for (let i = 0; i < 250 && !manager.secureMetrics!.port; i++) await new Promise((r) => setTimeout(r, 20));
    const port = manager.secureMetrics!.port;
    assert.equal((await scrape(port)).status, 401);
    assert.equal((await scrape(port, 'forged')).status, 401);
    assert.equal((await scrape(port, 'stranger')).status, 403);
    const allowed = await scrape(port, 'reader');
    assert.equal(allowed.status, 200);
    assert.match(allowed.body, /runtime_/);
    assert.equal((await scrape(port, 'reader', 'POST')).status, 405);
    const sar = api.bodies.find((b) => (b as { kind?: string }).kind === 'SubjectAccessReview') as { spec: { nonResourceAttributes: unknown } };
    assert.deepEqual(sar.spec.nonResourceAttributes, { path: '/metrics', verb: 'get' });
    const probe = await fetch(`http://127.0.0.1:${manager.probes.port}/metrics`);
    assert.equal(probe.status, 404);
    assert.equal((await fetch(`http://127.0.0.1:${manager.probes.port}/healthz`)).status, 200);
  } finally {
    stop.abort();
    await running;
    await api.close();
  }
});

test('metrics authorizer: a decision is reused within its TTL, asked again after it, and the cache keeps at most maxEntries', async () => {
  const api = await fakeReviews();
  let now = 0;
  const authorizer = new MetricsAuthorizer(api.client, { ttlMs: 10_000, maxEntries: 2, now: () => now });
  try {
    assert.equal(await authorizer.decide(undefined), 'unauthenticated');
    assert.equal(await authorizer.decide('Basic abc'), 'unauthenticated');
    assert.equal(api.requests.length, 0, 'no token, no API call');
    assert.equal(await authorizer.decide('Bearer reader'), 'allowed');
    assert.equal(await authorizer.decide('Bearer reader'), 'allowed');
    assert.equal(api.requests.length, 2, 'one TokenReview and one SubjectAccessReview for two scrapes');
    now = 10_001;
    assert.equal(await authorizer.decide('Bearer reader'), 'allowed');
    assert.equal(api.requests.length, 4, 'asked again once the decision expired');
    assert.equal(await authorizer.decide('Bearer stranger'), 'forbidden');
    assert.equal(await authorizer.decide('Bearer unknown'), 'unauthenticated');
    assert.equal(authorizer.size, 2, 'the oldest decision went');
  } finally {
    await api.close();
  }
});

/** Whether a TLS handshake with the server succeeds trusting only `ca` (its certificate's IP SAN is checked too). */
function handshake(port: number, ca: string): Promise<boolean> {
  return new Promise((resolve) => {
    const socket = connect({ host: '127.0.0.1', port, ca }, () => {
      socket.end();
      resolve(true);
    });
    socket.on('error', () => resolve(false));
  });
}

test('secure metrics: certificate files rotated on disk are served without a restart; a broken pair is not taken, and counted', async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'secure-metrics-certs-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const first = await generateCertificates({ ipAddresses: ['127.0.0.1'], validityDays: 1 });
  await writeCertificates(dir, first);
  const api = await fakeReviews();
  t.after(() => api.close());
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const server = new SecureMetricsServer(api.client, metrics.registry, { port: 0, host: '127.0.0.1', certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), certPollIntervalMs: 50 }, silent, metrics.retries);
  await server.listen();
  t.after(() => server.close());
  assert.equal(await handshake(server.port, first.caCert), true);

  const renewed = await generateCertificates({ ipAddresses: ['127.0.0.1'], validityDays: 1 });
  await writeCertificates(dir, renewed);
  for (let i = 0; i < 200 && !(await handshake(server.port, renewed.caCert)); i++) await new Promise((r) => setTimeout(r, 25));
  assert.equal(await handshake(server.port, renewed.caCert), true, 'the renewed certificate is served');
  assert.equal(await handshake(server.port, first.caCert), false, 'the old one no longer');
  assert.equal((await scrape(server.port, 'reader')).status, 200, 'and /metrics still answers over it');

  // Files caught mid-rotation are not taken, and the renewed pair keeps serving: a certificate file still empty
  // (createSecureContext alone would take it as no certificate, and every handshake would fail), then one whose
  // key has not been written yet.
  const next = await generateCertificates({ ipAddresses: ['127.0.0.1'], validityDays: 1 });
  // Summed over reasons: an empty file and a mismatched key fail for different ones.
  const reloadFailures = async (): Promise<number> => {
    const { values } = await metrics.registry.getSingleMetric('runtime_retries_total')!.get();
    return values.filter((v) => v.labels['component'] === 'metrics/certificates').reduce((sum, v) => sum + v.value, 0);
  };
  for (const content of ['', next.cert]) {
    const before = await reloadFailures();
    await writeFile(join(dir, 'tls.crt'), content);
    for (let i = 0; i < 200 && (await reloadFailures()) === before; i++) await new Promise((r) => setTimeout(r, 25));
    assert.ok((await reloadFailures()) > before, `counted: ${JSON.stringify(content.slice(0, 30))}`);
    assert.equal(await handshake(server.port, renewed.caCert), true, `still serving the renewed pair after ${JSON.stringify(content.slice(0, 30))}`);
  }
});
