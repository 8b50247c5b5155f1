// Client certificates on the webhook server (issue 23, finding 1): with `clientAuth`, only a caller with a
// certificate of the configured CA (the API server's admission client certificate) is answered. Without one,
// or with one of another CA, the TLS handshake is refused; with one whose common name is not allowed, 403.
// The CA file is followed: a CA replaced on disk takes effect without a restart.
// Over real HTTPS on 127.0.0.1, with certificates issued in process.
import assert from 'node:assert/strict';
import { mkdtemp, rename, rm, writeFile } from 'node:fs/promises';
import { request as httpsRequest } from 'node:https';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { createCertificateAuthority, issueLeafCertificate, type IssuedCertificate } from '../../src/webhook/x509.ts';
import { WebhookServer, generateCertificates, writeCertificates, type GeneratedCertificates, type WebhookRefusal } from '../../src/webhook/index.ts';

const API_SERVER_NAME = 'kube-apiserver-webhook-client';
const REVIEW = JSON.stringify({
  apiVersion: 'admission.k8s.io/v1',
  kind: 'AdmissionReview',
  request: { uid: 'u1', kind: { group: '', version: 'v1', kind: 'ConfigMap' }, resource: { group: '', version: 'v1', resource: 'configmaps' }, namespace: 'ns', name: 'cm', operation: 'UPDATE', userInfo: { username: 'mallory' }, object: {}, oldObject: {} },
});

let dir: string;
let serving: GeneratedCertificates;
let clientCA: IssuedCertificate;
let apiServer: IssuedCertificate;
let otherName: IssuedCertificate;
let otherCA: IssuedCertificate;
let stranger: IssuedCertificate;

async function client(ca: IssuedCertificate, commonName: string): Promise<IssuedCertificate> {
  return issueLeafCertificate({ commonName, usage: 'client', validityDays: 1 }, ca, new Date());
}

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'webhook-client-auth-'));
  serving = await generateCertificates({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  await writeCertificates(dir, serving);
  clientCA = await createCertificateAuthority({ commonName: 'webhook-client-ca' }, 1, new Date());
  otherCA = await createCertificateAuthority({ commonName: 'someone-else' }, 1, new Date());
  [apiServer, otherName, stranger] = await Promise.all([client(clientCA, API_SERVER_NAME), client(clientCA, 'a-pod'), client(otherCA, API_SERVER_NAME)]);
  await writeFile(join(dir, 'client-ca.crt'), clientCA.certificatePem);
});

after(() => rm(dir, { recursive: true, force: true }));

/** POSTs a review with `cert` (or none): the status, or the error the TLS layer raised. */
function call(port: number, cert?: IssuedCertificate): Promise<{ status: number } | { error: string }> {
  return new Promise((resolve) => {
    const req = httpsRequest(
      { host: '127.0.0.1', port, path: '/review', method: 'POST', ca: serving.caCert, agent: false, ...(cert ? { cert: cert.certificatePem, key: cert.privateKeyPem } : {}), headers: { 'content-type': 'application/json' } },
      (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      },
    );
    req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
    req.end(REVIEW);
  });
}

async function serve(t: { after: (fn: () => Promise<void>) => void }, options: { allowedNames?: string[]; viaMethod?: boolean; refused?: WebhookRefusal[] }): Promise<{ port: number; reviewed: string[] }> {
  const reviewed: string[] = [];
  const clientAuth = { caFile: join(dir, 'client-ca.crt'), ...(options.allowedNames ? { allowedNames: options.allowedNames } : {}) };
  const server = new WebhookServer({
    port: 0,
    host: '127.0.0.1',
    certFile: join(dir, 'tls.crt'),
    keyFile: join(dir, 'tls.key'),
    logger: () => undefined,
    ...(options.viaMethod ? {} : { clientAuth }),
    onRefused: (reason) => options.refused?.push(reason),
  });
  if (options.viaMethod) server.requireClientCertificates(clientAuth);
  server.registerValidating('/review', (request) => {
    reviewed.push(request.userInfo.username ?? '');
    return { allowed: true };
  });
  await server.start();
  t.after(() => server.stop());
  return { port: server.port, reviewed };
}

test('only a caller with a certificate of the CA is answered: none, or another CA\'s, fails the TLS handshake', async (t) => {
  const { port, reviewed } = await serve(t, {});
  assert.deepEqual(await call(port, apiServer), { status: 200 });
  const without = await call(port);
  assert.ok('error' in without, `no certificate: ${JSON.stringify(without)}`);
  const foreign = await call(port, stranger);
  assert.ok('error' in foreign, `another CA's certificate, even with the API server's name: ${JSON.stringify(foreign)}`);
  assert.deepEqual(reviewed, ['mallory'], 'only the authenticated call reached the handler');
});

test('with allowed names, a certificate of the CA with another common name gets 403 and never reaches the handler', async (t) => {
  const refused: WebhookRefusal[] = [];
  const { port, reviewed } = await serve(t, { allowedNames: [API_SERVER_NAME], viaMethod: true, refused });
  assert.deepEqual(await call(port, otherName), { status: 403 });
  assert.deepEqual(await call(port, apiServer), { status: 200 });
  assert.deepEqual(reviewed, ['mallory']);
  assert.deepEqual(refused, ['client_certificate_name']);
});

test('after the serving certificate rotates, client certificates are still required', async (t) => {
  const rotating = await mkdtemp(join(tmpdir(), 'webhook-client-auth-rotating-'));
  t.after(() => rm(rotating, { recursive: true, force: true }));
  await writeCertificates(rotating, serving);
  const server = new WebhookServer({ port: 0, host: '127.0.0.1', certFile: join(rotating, 'tls.crt'), keyFile: join(rotating, 'tls.key'), logger: () => undefined, certPollIntervalMs: 50, clientAuth: { caFile: join(dir, 'client-ca.crt') } });
  server.registerValidating('/review', () => ({ allowed: true }));
  await server.start();
  t.after(() => server.stop());
  const renewed = await generateCertificates({ dnsNames: ['localhost'], ipAddresses: ['127.0.0.1'] });
  await writeCertificates(rotating, renewed);
  const callRenewed = (cert?: IssuedCertificate): Promise<{ status: number } | { error: string }> =>
    new Promise((resolve) => {
      const req = httpsRequest({ host: '127.0.0.1', port: server.port, path: '/review', method: 'POST', ca: renewed.caCert, agent: false, ...(cert ? { cert: cert.certificatePem, key: cert.privateKeyPem } : {}) }, (res) => {
        res.resume();
        res.on('end', () => resolve({ status: res.statusCode ?? 0 }));
      });
      req.on('error', (err: NodeJS.ErrnoException) => resolve({ error: err.code ?? err.message }));
      req.end(REVIEW);
    });
  // Served once the new certificate verifies against its new CA; then the client CA must still be asked for.
  for (let i = 0; i < 100 && !('status' in (await callRenewed(apiServer))); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  assert.deepEqual(await callRenewed(apiServer), { status: 200 });
  assert.ok('error' in (await callRenewed()), 'no certificate: still refused after the rotation');
});

test('a client CA file that is missing or holds no certificate stops start() with its path', async () => {
  const server = (caFile: string): WebhookServer => new WebhookServer({ port: 0, host: '127.0.0.1', certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), logger: () => undefined, clientAuth: { caFile } });
  await assert.rejects(server(join(dir, 'missing.crt')).start(), /missing\.crt cannot be read/);
  await writeFile(join(dir, 'empty.crt'), 'not a certificate\n');
  await assert.rejects(server(join(dir, 'empty.crt')).start(), /empty\.crt holds no PEM certificate/);
});

test('without clientAuth nothing changes: a caller without a certificate is answered', async (t) => {
  const server = new WebhookServer({ port: 0, host: '127.0.0.1', certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), logger: () => undefined });
  server.registerValidating('/review', () => ({ allowed: true }));
  await server.start();
  t.after(() => server.stop());
  assert.deepEqual(await call(server.port), { status: 200 });
});

test('a client CA changed on disk takes effect without a restart; a file without a certificate is not taken', async (t) => {
  const caDir = await mkdtemp(join(tmpdir(), 'webhook-client-ca-rotating-'));
  t.after(() => rm(caDir, { recursive: true, force: true }));
  const caFile = join(caDir, 'ca.crt');
  // As a ConfigMap volume updates: the new content renamed into place.
  const replace = async (content: string): Promise<void> => {
    await writeFile(`${caFile}.tmp`, content);
    await rename(`${caFile}.tmp`, caFile);
  };
  await replace(clientCA.certificatePem);
  const server = new WebhookServer({ port: 0, host: '127.0.0.1', certFile: join(dir, 'tls.crt'), keyFile: join(dir, 'tls.key'), logger: () => undefined, certPollIntervalMs: 50, clientAuth: { caFile } });
  server.registerValidating('/review', () => ({ allowed: true }));
  await server.start();
  t.after(() => server.stop());
  const accepted = async (cert: IssuedCertificate): Promise<boolean> => 'status' in (await call(server.port, cert));
  const until = async (what: string, check: () => Promise<boolean>): Promise<void> => {
    for (let i = 0; i < 200 && !(await check()); i++) await new Promise((resolve) => setTimeout(resolve, 25));
    assert.ok(await check(), what);
  };
  assert.equal(await accepted(apiServer), true);
  assert.equal(await accepted(stranger), false);

  await replace(otherCA.certificatePem);
  await until('the new CA is trusted', () => accepted(stranger));
  assert.equal(await accepted(apiServer), false, 'the old CA no longer');

  await replace('not a certificate\n');
  await new Promise((resolve) => setTimeout(resolve, 300));
  assert.equal(await accepted(stranger), true, 'a broken CA file leaves the current CA in place');
  assert.equal(await accepted(apiServer), false);

  await replace(`${clientCA.certificatePem}${otherCA.certificatePem}`);
  await until('both CAs of a bundle are trusted', () => accepted(apiServer));
  assert.equal(await accepted(stranger), true);
});
