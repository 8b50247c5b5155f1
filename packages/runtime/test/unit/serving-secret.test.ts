// ensureServingCertificate against an in-memory Secret store: the first process makes the certificate and
// stores it, later ones (and one that loses the race to create it) serve the stored one, and a Secret it
// cannot use is reported, never overwritten. The etcd operator's and the recorder's webhooks both rely on it.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '../../src/client/client.ts';
import { AlreadyExistsError, ApiError } from '../../src/client/errors.ts';
import type { ResourceType } from '../../src/client/resources.ts';
import type { KubeObject, ObjectKey } from '../../src/object.ts';
import { ensureServingCertificate, generateCertificates, type GeneratedCertificates } from '../../src/webhook/index.ts';

type Secret = KubeObject & { type?: string; data?: Record<string, string> };

/** Secrets by namespace/name; `beforeCreate` runs between a caller's read and its create (a racing process). */
class FakeSecrets implements Pick<Client, 'find' | 'create'> {
  readonly stored = new Map<string, Secret>();
  readonly created: Secret[] = [];
  beforeCreate: (() => void) | undefined;
  createError: Error | undefined;

  find<T extends KubeObject>(_type: ResourceType<T>, key: ObjectKey | string): Promise<T | undefined> {
    const k = typeof key === 'string' ? { namespace: '', name: key } : key;
    const secret = this.stored.get(`${k.namespace}/${k.name}`);
    return Promise.resolve(secret ? (structuredClone(secret) as unknown as T) : undefined);
  }

  create<T extends KubeObject>(_type: ResourceType<T>, obj: T): Promise<T> {
    this.beforeCreate?.();
    if (this.createError) return Promise.reject(this.createError);
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    if (this.stored.has(key)) return Promise.reject(new AlreadyExistsError('POST', '/api/v1/secrets', 409, { reason: 'AlreadyExists', message: `secrets "${obj.metadata.name}" already exists` }));
    this.stored.set(key, structuredClone(obj));
    this.created.push(structuredClone(obj));
    return Promise.resolve(obj);
  }

  put(namespace: string, name: string, data: Record<string, string>): void {
    this.stored.set(`${namespace}/${name}`, { apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name }, data });
  }
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const secretData = (c: GeneratedCertificates): Record<string, string> => ({ 'ca.crt': b64(c.caCert), 'tls.crt': b64(c.cert), 'tls.key': b64(c.key) });
const options = (certDir: string): { namespace: string; secretName: string; service: string; certDir: string; labels: Record<string, string> } => ({
  namespace: 'ops',
  secretName: 'webhook-certs',
  service: 'hooks',
  certDir,
  labels: { 'app.kubernetes.io/name': 'quorum' },
});

let dir = '';
let existing: GeneratedCertificates;
before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorum-serving-'));
  existing = await generateCertificates({ dnsNames: ['other.ops.svc'], commonName: 'other.ops.svc', validityDays: 1 });
});
after(async () => {
  if (dir) await rm(dir, { recursive: true, force: true });
});

async function served(certDir: string): Promise<{ ca: string; cert: string; key: string }> {
  const read = (f: string): Promise<string> => readFile(join(certDir, f), 'utf8');
  return { ca: await read('ca.crt'), cert: await read('tls.crt'), key: await read('tls.key') };
}

test('the first process makes the certificate for the Service, stores it with its labels, and serves it', async () => {
  const secrets = new FakeSecrets();
  const certDir = join(dir, 'first');
  const ca = await ensureServingCertificate(secrets, options(certDir));
  assert.equal(secrets.created.length, 1);
  const secret = secrets.created[0]!;
  assert.deepEqual(secret.metadata, { name: 'webhook-certs', namespace: 'ops', labels: { 'app.kubernetes.io/name': 'quorum' } });
  assert.equal(secret.type, 'Opaque');
  const files = await served(certDir);
  assert.deepEqual(secret.data, { 'ca.crt': b64(files.ca), 'tls.crt': b64(files.cert), 'tls.key': b64(files.key) });
  assert.equal(ca, files.ca);
  const cert = new X509Certificate(files.cert);
  assert.equal(cert.subjectAltName, 'DNS:hooks.ops.svc, DNS:hooks.ops.svc.cluster.local');
  assert.ok(cert.verify(new X509Certificate(ca).publicKey), 'signed by the returned CA');
});

test('a later process serves the stored certificate and creates nothing', async () => {
  const secrets = new FakeSecrets();
  secrets.put('ops', 'webhook-certs', secretData(existing));
  const certDir = join(dir, 'later');
  assert.equal(await ensureServingCertificate(secrets, options(certDir)), existing.caCert);
  assert.equal(secrets.created.length, 0);
  assert.deepEqual(await served(certDir), { ca: existing.caCert, cert: existing.cert, key: existing.key });
});

test('a process that loses the race to create the Secret serves the winner\'s certificate', async () => {
  const secrets = new FakeSecrets();
  secrets.beforeCreate = () => secrets.put('ops', 'webhook-certs', secretData(existing));
  const certDir = join(dir, 'race');
  assert.equal(await ensureServingCertificate(secrets, options(certDir)), existing.caCert);
  assert.deepEqual(await served(certDir), { ca: existing.caCert, cert: existing.cert, key: existing.key });
});

test('a Secret without all three keys is reported, not overwritten', async () => {
  const secrets = new FakeSecrets();
  const partial = { 'ca.crt': b64(existing.caCert), 'tls.crt': b64(existing.cert) };
  secrets.put('ops', 'webhook-certs', partial);
  await assert.rejects(ensureServingCertificate(secrets, options(join(dir, 'partial'))), /Secret ops\/webhook-certs has no ca.crt, tls.crt and tls.key/);
  assert.deepEqual(secrets.stored.get('ops/webhook-certs')?.data, partial);
});

test('any other refusal to create the Secret is thrown as it came', async () => {
  const secrets = new FakeSecrets();
  const forbidden = new ApiError('POST', '/api/v1/namespaces/ops/secrets', 403, { reason: 'Forbidden', message: 'secrets is forbidden' });
  secrets.createError = forbidden;
  await assert.rejects(ensureServingCertificate(secrets, options(join(dir, 'forbidden'))), (err) => err === forbidden);
});
