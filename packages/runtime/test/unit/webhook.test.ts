// The webhook server over real HTTPS on 127.0.0.1, with certificates generated in process.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, rm, stat } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect } from 'node:tls';
import { after, before, describe, test } from 'node:test';
import type { JsonPatchOp } from '../../src/client/client.ts';
import type { KubeObject } from '../../src/object.ts';
import {
  AdmissionDeniedError,
  escapePointerToken,
  generateCertificates,
  jsonPatchDiff,
  WebhookServer,
  writeCertificates,
  type GeneratedCertificates,
} from '../../src/webhook/index.ts';

interface Reply {
  status: number;
  text: string;
}

interface ReviewResponse {
  apiVersion: string;
  kind: string;
  response: { uid: string; allowed: boolean; status?: { code: number; message: string; reason?: string }; patch?: string; patchType?: string; warnings?: string[] };
}

type ConfigMap = KubeObject & { data?: Record<string, string>; spec?: { items?: unknown[] } };

function post(port: number, ca: string, path: string, body: string, method = 'POST'): Promise<Reply> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ host: '127.0.0.1', port, path, method, ca, headers: { 'content-type': 'application/json' } }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text }));
    });
    req.on('error', reject);
    req.end(body);
  });
}

function admissionReview(request: Record<string, unknown>): string {
  return JSON.stringify({
    apiVersion: 'admission.k8s.io/v1',
    kind: 'AdmissionReview',
    request: {
      uid: 'uid-1',
      kind: { group: '', version: 'v1', kind: 'ConfigMap' },
      resource: { group: '', version: 'v1', resource: 'configmaps' },
      namespace: 'ns',
      name: 'cm',
      operation: 'CREATE',
      userInfo: { username: 'tester' },
      oldObject: null,
      dryRun: false,
      ...request,
    },
  });
}

/** The served certificate's SHA-256 fingerprint, read from a bare TLS handshake. */
function servedFingerprint(port: number): Promise<string> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host: '127.0.0.1', port, rejectUnauthorized: false }, () => {
      const fingerprint = socket.getPeerCertificate().fingerprint256;
      socket.end();
      resolve(fingerprint);
    });
    socket.on('error', reject);
  });
}

/** A test-only RFC 6902 applier (add, remove, replace, test), enough to check the server's patches. */
function applyPatch(document: unknown, ops: JsonPatchOp[]): unknown {
  let root: unknown = structuredClone(document);
  for (const op of ops) {
    const tokens = op.path === '' ? [] : op.path.slice(1).split('/').map((t) => t.replaceAll('~1', '/').replaceAll('~0', '~'));
    if (tokens.length === 0) {
      if (op.op === 'replace' || op.op === 'add') root = op.value;
      else throw new Error(`unsupported root op ${op.op}`);
      continue;
    }
    let parent = root as Record<string, unknown> | unknown[];
    for (const token of tokens.slice(0, -1)) parent = (parent as Record<string, unknown>)[token] as Record<string, unknown>;
    const last = tokens.at(-1)!;
    const container = parent as Record<string, unknown>;
    switch (op.op) {
      case 'add':
        if (Array.isArray(parent)) parent.splice(last === '-' ? parent.length : Number(last), 0, op.value);
        else container[last] = op.value;
        break;
      case 'replace':
        assert.ok(Object.hasOwn(container, last), `replace of a missing member ${op.path}`);
        container[last] = op.value;
        break;
      case 'remove':
        assert.ok(Object.hasOwn(container, last), `remove of a missing member ${op.path}`);
        if (Array.isArray(parent)) parent.splice(Number(last), 1);
        else delete container[last];
        break;
      case 'test':
        assert.deepEqual(container[last], op.value);
        break;
      default:
        throw new Error(`unsupported op ${op.op}`);
    }
  }
  return root;
}

function decodePatch(patch: string | undefined): JsonPatchOp[] {
  assert.ok(patch, 'expected a patch');
  return JSON.parse(Buffer.from(patch, 'base64').toString('utf8')) as JsonPatchOp[];
}

describe('webhook server', () => {
  let dir: string;
  let certs: GeneratedCertificates;
  let server: WebhookServer;
  const logged: { msg: string; fields?: Record<string, unknown> }[] = [];

  const review = async (path: string, request: Record<string, unknown>): Promise<ReviewResponse> => {
    const reply = await post(server.port, certs.caCert, path, admissionReview(request));
    assert.equal(reply.status, 200, reply.text);
    return JSON.parse(reply.text) as ReviewResponse;
  };

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'webhook-test-'));
    certs = await generateCertificates({ ipAddresses: ['127.0.0.1'], dnsNames: ['localhost'], validityDays: 2 });
    await writeCertificates(dir, certs);
    server = new WebhookServer({
      port: 0,
      host: '127.0.0.1',
      certFile: join(dir, 'tls.crt'),
      keyFile: join(dir, 'tls.key'),
      logger: (msg, fields) => logged.push({ msg, fields }),
      certPollIntervalMs: 200,
    });
    server.registerValidating<ConfigMap>('/validate', (req) => {
      if (req.object?.data?.['bad'] !== undefined) return { allowed: false, message: "data key 'bad' is not allowed", warnings: ['careful'] };
      if (req.object?.data?.['teapot'] !== undefined) return { allowed: false, message: 'short and stout', code: 418, reason: 'Teapot' };
      return { allowed: true, warnings: req.dryRun ? ['dry run'] : undefined };
    });
    server.registerValidating('/throws', () => {
      throw new Error('handler exploded');
    });
    server.registerValidating('/denies', async () => {
      await Promise.resolve();
      throw new AdmissionDeniedError('not today', { code: 422, reason: 'Invalid' });
    });
    server.registerMutating<ConfigMap>('/mutate', (req) => {
      const cm = req.object;
      cm.metadata.labels = { ...cm.metadata.labels, defaulted: 'yes' };
      const annotations = cm.metadata.annotations ?? {};
      annotations['a/b'] = 'changed';
      annotations['example.com/new'] = 'added';
      delete annotations['tilde~key'];
      cm.metadata.annotations = annotations;
      cm.data = { ...cm.data, default: cm.data?.['default'] ?? 'value' };
      if (cm.spec) cm.spec.items = [...(cm.spec.items ?? []), 'appended'];
      return cm;
    });
    server.registerMutating<ConfigMap>('/mutate-new-object', (req) => ({
      object: { ...req.object, metadata: { ...req.object.metadata, labels: { fresh: 'true' } } },
      warnings: ['replaced labels'],
    }));
    server.registerMutating('/identity', (req) => req.object);
    await server.start();
  });

  after(async () => {
    await server.stop();
    await rm(dir, { recursive: true, force: true });
  });

  test('the generated chain is accepted by Node TLS with the CA, and refused without it', async () => {
    const cert = new X509Certificate(certs.cert);
    assert.ok(cert.checkIP('127.0.0.1'));
    assert.ok(cert.checkHost('localhost'));
    assert.ok(cert.verify(new X509Certificate(certs.caCert).publicKey));
    assert.equal(new X509Certificate(certs.caCert).ca, true);
    assert.equal(cert.ca, false);
    const reply = await post(server.port, certs.caCert, '/validate', admissionReview({ object: { metadata: { name: 'cm' } } }));
    assert.equal(reply.status, 200);
    await assert.rejects(post(server.port, '', '/validate', '{}').catch((err: Error & { code?: string }) => Promise.reject(new Error(err.code))), /SELF_SIGNED|UNABLE_TO_GET_ISSUER|UNABLE_TO_VERIFY/);
  });

  test('writeCertificates keeps the key private', async () => {
    assert.equal((await stat(join(dir, 'tls.key'))).mode & 0o777, 0o600);
    assert.equal((await stat(join(dir, 'tls.crt'))).mode & 0o777, 0o644);
    assert.equal((await stat(join(dir, 'ca.crt'))).mode & 0o777, 0o644);
  });

  test('a validating handler allows, echoing the uid', async () => {
    const reply = await review('/validate', { uid: 'allow-uid', object: { metadata: { name: 'cm' }, data: { good: '1' } }, dryRun: true });
    assert.equal(reply.apiVersion, 'admission.k8s.io/v1');
    assert.equal(reply.kind, 'AdmissionReview');
    assert.deepEqual(reply.response, { uid: 'allow-uid', allowed: true, warnings: ['dry run'] });
  });

  test('a validating handler denies with its message, a default 403, and warnings', async () => {
    const reply = await review('/validate', { uid: 'deny-uid', object: { metadata: { name: 'cm' }, data: { bad: '1' } } });
    assert.deepEqual(reply.response, {
      uid: 'deny-uid',
      allowed: false,
      status: { code: 403, reason: 'Forbidden', message: "data key 'bad' is not allowed" },
      warnings: ['careful'],
    });
    const teapot = await review('/validate', { object: { metadata: { name: 'cm' }, data: { teapot: '1' } } });
    assert.deepEqual(teapot.response.status, { code: 418, reason: 'Teapot', message: 'short and stout' });
  });

  test('a mutating handler is answered with a JSON patch that produces its object', async () => {
    const original: ConfigMap = {
      apiVersion: 'v1',
      kind: 'ConfigMap',
      metadata: { name: 'cm', namespace: 'ns', annotations: { 'a/b': 'original', 'tilde~key': 'gone', keep: 'me' } },
      data: { existing: 'x' },
      spec: { items: [1, 2] },
    };
    const reply = await review('/mutate', { uid: 'mutate-uid', object: original });
    assert.equal(reply.response.uid, 'mutate-uid');
    assert.equal(reply.response.allowed, true);
    assert.equal(reply.response.patchType, 'JSONPatch');
    const ops = decodePatch(reply.response.patch);
    const paths = ops.map((op) => op.path);
    assert.ok(paths.includes('/metadata/annotations/a~1b'), `escaped '/' in ${paths.join(' ')}`);
    assert.ok(paths.includes('/metadata/annotations/tilde~0key'), `escaped '~' in ${paths.join(' ')}`);
    assert.ok(paths.includes('/spec/items'), 'arrays are replaced whole');
    assert.deepEqual(applyPatch(original, ops), {
      ...original,
      metadata: { name: 'cm', namespace: 'ns', labels: { defaulted: 'yes' }, annotations: { 'a/b': 'changed', keep: 'me', 'example.com/new': 'added' } },
      data: { existing: 'x', default: 'value' },
      spec: { items: [1, 2, 'appended'] },
    });
  });

  test('a mutating handler may return a new object with warnings', async () => {
    const original = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm', labels: { old: 'x' } } };
    const reply = await review('/mutate-new-object', { object: original });
    assert.deepEqual(reply.response.warnings, ['replaced labels']);
    assert.deepEqual(applyPatch(original, decodePatch(reply.response.patch)), { ...original, metadata: { name: 'cm', labels: { fresh: 'true' } } });
  });

  test('an unchanged object gets no patch, and DELETE (no object) is allowed untouched', async () => {
    const unchanged = await review('/identity', { object: { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'cm' } } });
    assert.deepEqual(unchanged.response, { uid: 'uid-1', allowed: true });
    const deleted = await review('/mutate', { operation: 'DELETE', object: null, oldObject: { metadata: { name: 'cm' } } });
    assert.deepEqual(deleted.response, { uid: 'uid-1', allowed: true });
  });

  test('bad requests get 400, unknown paths 404, other methods 405', async () => {
    const port = server.port;
    assert.equal((await post(port, certs.caCert, '/validate', 'not json')).status, 400);
    assert.equal((await post(port, certs.caCert, '/validate', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview' }))).status, 400);
    assert.equal((await post(port, certs.caCert, '/validate', JSON.stringify({ apiVersion: 'admission.k8s.io/v1', kind: 'AdmissionReview', request: { operation: 'CREATE' } }))).status, 400);
    assert.equal((await post(port, certs.caCert, '/validate', JSON.stringify({ apiVersion: 'admission.k8s.io/v1beta1', kind: 'AdmissionReview', request: { uid: 'u' } }))).status, 400);
    assert.equal((await post(port, certs.caCert, '/nowhere', admissionReview({}))).status, 404);
    assert.equal((await post(port, certs.caCert, '/validate', '', 'GET')).status, 405);
  });

  test('a handler that throws denies with code 500 and is logged', async () => {
    logged.length = 0;
    const reply = await review('/throws', { uid: 'throw-uid', object: { metadata: { name: 'cm' } } });
    assert.deepEqual(reply.response, { uid: 'throw-uid', allowed: false, status: { code: 500, reason: 'InternalError', message: 'handler exploded' } });
    assert.ok(logged.some((line) => line.fields?.['error'] === 'handler exploded' && line.fields['uid'] === 'throw-uid'));
  });

  test('AdmissionDeniedError denies with its own code and is not logged as a failure', async () => {
    logged.length = 0;
    const reply = await review('/denies', { object: { metadata: { name: 'cm' } } });
    assert.deepEqual(reply.response.status, { code: 422, reason: 'Invalid', message: 'not today' });
    assert.equal(logged.length, 0);
  });

  test('rotated certificate files are served without a restart', async () => {
    const before = await servedFingerprint(server.port);
    assert.equal(before, new X509Certificate(certs.cert).fingerprint256);
    const rotated = await generateCertificates({ ipAddresses: ['127.0.0.1'] });
    await writeCertificates(dir, rotated);
    const expected = new X509Certificate(rotated.cert).fingerprint256;
    const deadline = Date.now() + 5_000;
    let served = before;
    while (served !== expected && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 50));
      served = await servedFingerprint(server.port);
    }
    assert.equal(served, expected);
    // And the new chain is trusted through the new CA.
    assert.equal((await post(server.port, rotated.caCert, '/validate', admissionReview({ object: { metadata: { name: 'cm' } } }))).status, 200);
    certs = rotated;
  });
});

describe('webhook server lifecycle', () => {
  test('port is unknown before start; an aborted signal stops the server', async () => {
    const dir = await mkdtemp(join(tmpdir(), 'webhook-life-'));
    try {
      const certs = await generateCertificates({ ipAddresses: ['127.0.0.1'] });
      await writeCertificates(dir, certs);
      const server = new WebhookServer({ port: 0, host: '127.0.0.1', certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), logger: () => {} });
      assert.throws(() => server.port, /not started/);
      const controller = new AbortController();
      await server.start(controller.signal);
      const port = server.port;
      assert.ok(port > 0);
      await servedFingerprint(port);
      controller.abort();
      await server.stop();
      await assert.rejects(servedFingerprint(port), /ECONNREFUSED/);
      await server.stop();
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('start fails when the certificate files are missing', async () => {
    const server = new WebhookServer({ port: 0, host: '127.0.0.1', certFile: '/nonexistent/tls.crt', keyFile: '/nonexistent/tls.key', logger: () => {} });
    await assert.rejects(server.start(), /ENOENT/);
  });
});

describe('jsonPatchDiff', () => {
  test('escapes pointer tokens per RFC 6901', () => {
    assert.equal(escapePointerToken('a/b'), 'a~1b');
    assert.equal(escapePointerToken('a~b'), 'a~0b');
    assert.equal(escapePointerToken('~/'), '~0~1');
  });

  test('diffs objects recursively and replaces arrays whole', () => {
    const from = { a: { b: 1, c: [1, 2], gone: true }, same: { x: [1, { y: 2 }] }, nil: null };
    const to = { a: { b: 2, c: [1, 2, 3], added: { z: 1 } }, same: { x: [1, { y: 2 }] }, nil: { now: 'object' } };
    const ops = jsonPatchDiff(from, to);
    assert.deepEqual(ops, [
      { op: 'remove', path: '/a/gone' },
      { op: 'replace', path: '/a/b', value: 2 },
      { op: 'replace', path: '/a/c', value: [1, 2, 3] },
      { op: 'add', path: '/a/added', value: { z: 1 } },
      { op: 'replace', path: '/nil', value: { now: 'object' } },
    ]);
    assert.deepEqual(applyPatch(from, ops), to);
    assert.deepEqual(jsonPatchDiff(to, structuredClone(to)), []);
  });
});
