// Every refusal of the webhook server is counted in the operator's registry,
// `quorum_webhook_requests_refused_total{webhook, reason}`, and told in warn lines spaced per reason (issue 23):
// a body too large (declared, or sent without a length), too many reviews in flight, too many body bytes in flight,
// a failed TLS handshake. Over real HTTPS on 127.0.0.1.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RuntimeMetrics } from '../../src/manager/metrics.ts';
import { RefusalTally } from '../../src/webhook/refusals.ts';
import { WEBHOOK_REFUSED_METRIC, WebhookServer, generateCertificates, writeCertificates, type GeneratedCertificates, type WebhookLogLevel } from '../../src/webhook/index.ts';
import { metricValue } from './retry-support.ts';

const MAX_BODY = 4096;
const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u1', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'ns', name: 'cm', operation: 'CREATE', userInfo: { username: 'u' }, object: {} },
});

interface Line { msg: string; fields: Record<string, unknown>; level: WebhookLogLevel | undefined }

let dir: string;
let certs: GeneratedCertificates;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-refusals-'));
  certs = await generateCertificates({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'], validityDays: 1 });
  await writeCertificates(dir, certs);
});
after(() => rm(dir, { recursive: true, force: true }));

/** POSTs `body` (chunked when `chunked`, so without a length): the status, -1 for a connection cut mid-body, or the TLS error. */
function post(port: number, body: string, options: { chunked?: boolean; trust?: boolean } = {}): Promise<number | string> {
  return new Promise((resolve) => {
    const headers = { 'content-type': 'application/json', ...(options.chunked ? {} : { 'content-length': Buffer.byteLength(body) }) };
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/review', method: 'POST', agent: false, headers, ...(options.trust === false ? {} : { ca: certs.caCert }) }, (res) => {
      res.resume();
      res.on('end', () => resolve(res.statusCode ?? 0));
    });
    req.on('error', (err: NodeJS.ErrnoException) => resolve(err.code === 'ECONNRESET' || err.code === 'EPIPE' ? -1 : (err.code ?? err.message)));
    if (options.chunked) for (let i = 0; i < body.length; i += 1024) req.write(body.slice(i, i + 1024));
    req.end(options.chunked ? undefined : body);
  });
}

async function until(what: string, check: () => Promise<boolean> | boolean): Promise<void> {
  const deadline = Date.now() + 5_000;
  while (!(await check())) {
    assert.ok(Date.now() < deadline, `timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

test('each refusal is counted by reason in the registry given, from 0, and the handler sees none of them', async (t) => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const lines: Line[] = [];
  const held: (() => void)[] = [];
  let reviewed = 0;
  const server = new WebhookServer({
    name: 'hooks',
    port: 0,
    host: '127.0.0.1',
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
    logger: (msg, fields = {}, level) => void lines.push({ msg, fields, level }),
    refusalMetrics: metrics,
    maxBodyBytes: MAX_BODY,
    maxInFlight: 2,
    maxInFlightBytes: 2 * REVIEW.length + 100,
  });
  // Each review is held until released, so the test decides how many are in flight.
  server.registerValidating('/review', async () => {
    await new Promise<void>((resolve) => held.push(resolve));
    reviewed++;
    return { allowed: true };
  });
  await server.start();
  t.after(() => server.stop());
  const refused = (reason: string): Promise<number | undefined> => metricValue(metrics, WEBHOOK_REFUSED_METRIC, { webhook: 'hooks', reason });

  assert.equal(await refused('body_too_large'), 0, 'every reason has a series from the start');
  assert.equal(await refused('tls_handshake'), 0);
  assert.equal(await refused('client_certificate_name'), undefined, 'no series for a refusal this server cannot make (no allowed names)');

  const large = 'x'.repeat(MAX_BODY + 1);
  assert.ok([413, -1].includes((await post(server.port, large)) as number), 'declared too large');
  assert.ok([413, -1].includes((await post(server.port, large, { chunked: true })) as number), 'too large, sent without a length');
  assert.equal(await refused('body_too_large'), 2);

  // Two reviews in flight: a third is one too many; a review that fits the count but not the bytes bound likewise.
  const first = post(server.port, REVIEW);
  const second = post(server.port, REVIEW);
  await until('two reviews in flight', () => held.length === 2);
  assert.equal(await post(server.port, REVIEW), 429);
  assert.equal(await refused('too_many_in_flight'), 1);
  held.shift()!();
  assert.equal(await first, 200);
  assert.equal(await post(server.port, REVIEW + ' '.repeat(200)), 429, 'one in flight, but the two bodies together pass maxInFlightBytes');
  assert.equal(await refused('too_many_bytes_in_flight'), 1);
  held.shift()!();
  assert.equal(await second, 200);

  assert.equal(typeof (await post(server.port, REVIEW, { trust: false })), 'string', 'a client that does not trust the server abandons the handshake');
  await until('the failed handshake counted', async () => (await refused('tls_handshake')) === 1);
  assert.equal(reviewed, 2, 'only the two admitted reviews reached the handler');

  const warned = lines.filter((l) => l.level === 'warn');
  assert.deepEqual(new Set(warned.map((l) => l.fields['reason'])), new Set(['body_too_large', 'too_many_in_flight', 'too_many_bytes_in_flight', 'tls_handshake']), 'a warn line names each reason');
  assert.ok(warned.every((l) => l.fields['webhook'] === 'hooks'));
});

test('a flood of refusals is a warn line per reason per interval, with how many it stands for', async () => {
  const lines: Line[] = [];
  const tally = new RefusalTally({ webhook: 'hooks', log: (msg, fields = {}, level) => void lines.push({ msg, fields, level }), intervalMs: 200 });
  for (let i = 0; i < 100; i++) tally.refused('too_many_in_flight', '/review', { status: 429 });
  tally.refused('body_too_large', '/review');
  assert.deepEqual(lines.map((l) => [l.fields['reason'], l.fields['refused']]), [['too_many_in_flight', 1], ['body_too_large', 1]], 'the first of each reason is told at once');
  await until('the rest of the burst is told', () => lines.length === 3);
  assert.deepEqual([lines[2]!.fields['reason'], lines[2]!.fields['refused'], lines[2]!.level], ['too_many_in_flight', 99, 'warn']);
  tally.refused('too_many_in_flight', '/review');
  tally.flush();
  assert.deepEqual([lines.length, lines[3]!.fields['refused']], [4, 1], 'within the interval of the last line: held, then told by flush (a stopping server)');
  assert.equal(lines[3]!.fields['path'], '/review');
});

test('a server stopped during a flood tells what it held back; the registry counts every refusal', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const lines: Line[] = [];
  const server = new WebhookServer({ name: 'hooks', port: 0, host: '127.0.0.1', certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), logger: (msg, fields = {}, level) => void lines.push({ msg, fields, level }), refusalMetrics: metrics, maxBodyBytes: 16 });
  server.registerValidating('/review', () => ({ allowed: true }));
  await server.start();
  for (let i = 0; i < 20; i++) await post(server.port, REVIEW);
  await server.stop();
  const warned = lines.filter((l) => l.level === 'warn' && l.fields['reason'] === 'body_too_large');
  assert.deepEqual(warned.map((l) => l.fields['refused']), [1, 19], 'two lines for 20 refusals within 10 s');
  assert.equal(await metricValue(metrics, WEBHOOK_REFUSED_METRIC, { webhook: 'hooks', reason: 'body_too_large' }), 20);
});
