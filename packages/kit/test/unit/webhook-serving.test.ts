// webhookServing against an in-memory API (a Secret and a ValidatingWebhookConfiguration) and a real HTTPS
// server on a free port: a failing setup is voiced and retried, the CA is published once it serves and again
// after a failed publish, a certificate replaced in the Secret is served and published, and stopping drains.
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { RuntimeMetrics, WEBHOOK_REFUSED_METRIC, createLogger, generateCertificates, type Client, type JsonPatchOp, type KubeObject, type ObjectKey, type ResourceType } from '@quorum/runtime';
import { webhookServing, type WebhookServing } from '../../src/webhook-serving.ts';

type Secret = KubeObject & { data?: Record<string, string> };
type Configuration = KubeObject & { webhooks: { name: string; clientConfig: { caBundle?: string } }[] };

class FakeApi {
  secret: Secret | undefined;
  configuration: Configuration = { metadata: { name: 'hooks', resourceVersion: '1' }, webhooks: [{ name: 'a.example.com', clientConfig: {} }] };
  findError: Error | undefined;
  patchError: Error | undefined;
  patches = 0;

  find<T extends KubeObject>(): Promise<T | undefined> {
    if (this.findError) return Promise.reject(this.findError);
    return Promise.resolve(structuredClone(this.secret) as T | undefined);
  }

  create<T extends KubeObject>(_type: ResourceType<T>, obj: T): Promise<T> {
    this.secret = structuredClone(obj);
    return Promise.resolve(obj);
  }

  get<T extends KubeObject>(): Promise<T> {
    return Promise.resolve(structuredClone(this.configuration) as unknown as T);
  }

  jsonPatch<T extends KubeObject>(_type: ResourceType<T>, _key: ObjectKey, ops: JsonPatchOp[]): Promise<T> {
    if (this.patchError) return Promise.reject(this.patchError);
    this.patches++;
    for (const op of ops) if (op.op === 'add') this.configuration.webhooks[Number(op.path.split('/')[2])]!.clientConfig.caBundle = op.value as string;
    return Promise.resolve(this.configuration as unknown as T);
  }

  caBundle(): string | undefined {
    const b = this.configuration.webhooks[0]?.clientConfig.caBundle;
    return b === undefined ? undefined : Buffer.from(b, 'base64').toString();
  }

  storedCa(): string | undefined {
    const d = this.secret?.data?.['ca.crt'];
    return d === undefined ? undefined : Buffer.from(d, 'base64').toString();
  }
}

let dir = '';
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorum-kit-webhook-'));
});
after(() => rm(dir, { recursive: true, force: true }));

function serving(api: FakeApi, certDir: string, drainMs = 0, metrics?: RuntimeMetrics): WebhookServing {
  return webhookServing({
    name: 'test-webhook',
    client: api as unknown as Client,
    namespace: 'ops',
    service: 'hooks',
    secretName: 'hooks-certs',
    certDir,
    port: 0,
    configurations: { validating: ['hooks'] },
    register: (server) => server.registerValidating('/check', () => ({ allowed: true })),
    log: createLogger({ level: 'error' }),
    drainMs,
    republishMs: 20,
    retryMs: 20,
    ...(metrics ? { metrics } : {}),
  });
}

async function until(what: string, check: () => boolean): Promise<void> {
  const deadline = Date.now() + 10_000;
  while (!check()) {
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** The status code of a GET, which the server answers with 405 once it serves with a certificate of `ca`. */
function get(port: number, ca: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/check', method: 'GET', ca, servername: 'hooks.ops.svc', agent: false }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', reject);
    req.end();
  });
}

test('a failing setup is voiced and retried; once serving, the CA of the Secret it made is published', async () => {
  const api = new FakeApi();
  api.findError = new Error('secrets "hooks-certs" is forbidden');
  const webhook = serving(api, join(dir, 'setup'));
  const stop = new AbortController();
  const running = webhook.start(stop.signal);
  await until('the problem is voiced', () => webhook.problem()?.includes('is forbidden') === true);
  assert.equal(webhook.port(), undefined);
  api.findError = undefined;
  await until('serving', () => webhook.problem() === undefined);
  await until('the CA is published', () => api.caBundle() !== undefined);
  assert.equal(api.caBundle(), api.storedCa());
  assert.equal(await get(webhook.port()!, api.storedCa()!), 405);
  stop.abort();
  await running;
  assert.equal(webhook.port(), undefined);
});

test('a failed publish is tried again, and a CA dropped from the configuration is published again', async () => {
  const api = new FakeApi();
  api.patchError = new Error('the server is currently unable to handle the request');
  const webhook = serving(api, join(dir, 'publish'));
  const stop = new AbortController();
  const running = webhook.start(stop.signal);
  await until('serving', () => webhook.problem() === undefined);
  await new Promise((resolve) => setTimeout(resolve, 60));
  assert.equal(api.caBundle(), undefined);
  api.patchError = undefined;
  await until('the CA is published', () => api.caBundle() !== undefined);
  api.configuration.webhooks[0]!.clientConfig = {};
  await until('the CA is published again', () => api.caBundle() !== undefined);
  stop.abort();
  await running;
});

test('a certificate replaced in the Secret is served and its CA published', async () => {
  const api = new FakeApi();
  const webhook = serving(api, join(dir, 'rotate'));
  const stop = new AbortController();
  const running = webhook.start(stop.signal);
  await until('the first CA is published', () => api.caBundle() !== undefined);
  const rotated = await generateCertificates({ dnsNames: ['hooks.ops.svc'] });
  const b64 = (s: string): string => Buffer.from(s).toString('base64');
  api.secret = { metadata: { name: 'hooks-certs', namespace: 'ops' }, data: { 'ca.crt': b64(rotated.caCert), 'tls.crt': b64(rotated.cert), 'tls.key': b64(rotated.key) } };
  await until('the new CA is published', () => api.caBundle() === rotated.caCert);
  const port = webhook.port()!;
  const deadline = Date.now() + 15_000;
  // The server reloads the files it watches; a request trusting only the new CA succeeds once it has.
  while ((await get(port, rotated.caCert).catch(() => 0)) !== 405) {
    assert.ok(Date.now() < deadline, 'the rotated certificate was never served');
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  stop.abort();
  await running;
});

test('after the stop signal the server keeps answering for the drain, then stops', async () => {
  const api = new FakeApi();
  const webhook = serving(api, join(dir, 'drain'), 300);
  const stop = new AbortController();
  const running = webhook.start(stop.signal);
  await until('serving', () => webhook.problem() === undefined);
  const port = webhook.port()!;
  stop.abort();
  assert.equal(await get(port, api.storedCa()!), 405);
  await running;
  await assert.rejects(get(port, api.storedCa()!), /ECONNREFUSED/);
});

/** A POST whose declared length passes the server's 8 MiB bound: its status (413), or -1 when the connection is cut first. */
function postTooLarge(port: number, ca: string): Promise<number> {
  return new Promise((resolve) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path: '/check', method: 'POST', ca, servername: 'hooks.ops.svc', agent: false, headers: { 'content-length': 9 * 1024 * 1024 } }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('error', () => resolve(-1));
    req.write('{}');
  });
}

test("given the manager's metrics, refusals are counted in its registry under the runnable's name", async () => {
  const api = new FakeApi();
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const webhook = serving(api, join(dir, 'refusals'), 0, metrics);
  const stop = new AbortController();
  const running = webhook.start(stop.signal);
  await until('serving', () => webhook.problem() === undefined);
  const refused = async (): Promise<number | undefined> => {
    const { values } = await metrics.registry.getSingleMetric(WEBHOOK_REFUSED_METRIC)!.get();
    return values.find((v) => v.labels['webhook'] === 'test-webhook' && v.labels['reason'] === 'body_too_large')?.value;
  };
  assert.equal(await refused(), 0);
  assert.ok([413, -1].includes(await postTooLarge(webhook.port()!, api.storedCa()!)));
  assert.equal(await refused(), 1);
  stop.abort();
  await running;
});
