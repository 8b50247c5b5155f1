// ensureServingCertificate against an in-memory Secret store: the first process makes the certificate and
// stores it, later ones (and one that loses the race to create it) serve the stored one, and a Secret it
// cannot use is reported, never overwritten; once a third of its life is left it is renewed with both CAs
// trusted while the replicas move over. Every operator's webhooks rely on it (through the kit).
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import type { Client } from '../../src/client/client.ts';
import { AlreadyExistsError, ApiError, ConflictError } from '../../src/client/errors.ts';
import type { ResourceType } from '../../src/client/resources.ts';
import type { KubeObject, ObjectKey } from '../../src/object.ts';
import { ensureServingCertificate, generateCertificates, type GeneratedCertificates } from '../../src/webhook/index.ts';
import { SERVE_RENEWED_AFTER_ANNOTATION, SERVE_RENEWED_AFTER_MS } from '../../src/webhook/serving-secret.ts';

type Secret = KubeObject & { type?: string; data?: Record<string, string> };

/**
 * Secrets by namespace/name, with resourceVersions as the API server keeps them (a replace with a stale one is
 * a Conflict); `beforeCreate`/`beforeReplace` run between a caller's read and its write (a racing replica).
 */
class FakeSecrets implements Pick<Client, 'find' | 'create' | 'replace'> {
  readonly stored = new Map<string, Secret>();
  readonly created: Secret[] = [];
  replaced = 0;
  #version = 0;
  beforeCreate: (() => void) | undefined;
  beforeReplace: (() => void) | undefined;
  createError: Error | undefined;
  replaceError: Error | undefined;

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
    const stored = { ...structuredClone(obj), metadata: { ...structuredClone(obj.metadata), resourceVersion: String(++this.#version) } };
    this.stored.set(key, stored);
    this.created.push(structuredClone(obj));
    return Promise.resolve(structuredClone(stored));
  }

  replace<T extends KubeObject>(_type: ResourceType<T>, obj: T): Promise<T> {
    this.beforeReplace?.();
    if (this.replaceError) return Promise.reject(this.replaceError);
    const key = `${obj.metadata.namespace}/${obj.metadata.name}`;
    if (this.stored.get(key)?.metadata.resourceVersion !== obj.metadata.resourceVersion) {
      return Promise.reject(new ConflictError('PUT', `/api/v1/secrets/${obj.metadata.name}`, 409, { reason: 'Conflict', message: 'the object has been modified' }));
    }
    const stored = { ...structuredClone(obj), metadata: { ...structuredClone(obj.metadata), resourceVersion: String(++this.#version) } };
    this.stored.set(key, stored);
    this.replaced += 1;
    return Promise.resolve(structuredClone(stored));
  }

  put(namespace: string, name: string, data: Record<string, string>): void {
    this.stored.set(`${namespace}/${name}`, { apiVersion: 'v1', kind: 'Secret', metadata: { namespace, name, resourceVersion: String(++this.#version) }, data });
  }
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');
const b64d = (s: string): string => Buffer.from(s, 'base64').toString('utf8');
const DAY_MS = 86_400_000;
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
  assert.ok(Math.abs(new X509Certificate(b64d(secret.data!['tls.crt']!)).validToDate.getTime() - Date.now() - 365 * DAY_MS) < 10 * 60_000, 'valid for a year');
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

/** Certificates in a PEM bundle. */
const bundle = (pem: string): X509Certificate[] => (pem.match(/-----BEGIN CERTIFICATE-----[^-]+-----END CERTIFICATE-----/g) ?? []).map((c) => new X509Certificate(c));

test('once a third of its life is left, the certificate is renewed: both CAs published, the old one served until the replicas move over', async () => {
  const secrets = new FakeSecrets();
  const issued = new Date('2026-01-01T00:00:00Z');
  const at = (days: number) => () => new Date(issued.getTime() + days * DAY_MS);
  const certDir = join(dir, 'renew');
  const firstCa = await ensureServingCertificate(secrets, { ...options(certDir), validityDays: 30, now: at(0) });
  const first = await served(certDir);
  // Two thirds of its life still left: nothing changes.
  assert.equal(await ensureServingCertificate(secrets, { ...options(certDir), validityDays: 30, now: at(19) }), firstCa);
  assert.equal(secrets.replaced, 0);
  // A third left: renewed; the bundle trusts the new CA and the old; this replica still serves the old pair.
  const renewedAt = at(21);
  const caBundle = await ensureServingCertificate(secrets, { ...options(certDir), validityDays: 30, now: renewedAt });
  assert.equal(secrets.replaced, 1);
  const [newCa, oldCa] = bundle(caBundle);
  assert.equal(oldCa?.toString(), new X509Certificate(firstCa).toString());
  assert.deepEqual(await served(certDir), { ca: caBundle, cert: first.cert, key: first.key });
  const stored = secrets.stored.get('ops/webhook-certs')!;
  assert.equal(stored.metadata.annotations?.[SERVE_RENEWED_AFTER_ANNOTATION], new Date(renewedAt().getTime() + SERVE_RENEWED_AFTER_MS).toISOString());
  // Another replica, a minute later, serves the old pair too and renews nothing.
  const other = join(dir, 'renew-other');
  const minuteLater = () => new Date(renewedAt().getTime() + 60_000);
  assert.equal(await ensureServingCertificate(secrets, { ...options(other), validityDays: 30, now: minuteLater }), caBundle);
  assert.equal((await served(other)).cert, first.cert);
  assert.equal(secrets.replaced, 1);
  // After the hand-over: the new certificate, signed by the bundle's first CA, valid for 30 days from the renewal.
  const later = () => new Date(renewedAt().getTime() + SERVE_RENEWED_AFTER_MS + 1000);
  await ensureServingCertificate(secrets, { ...options(certDir), validityDays: 30, now: later });
  const renewed = new X509Certificate((await served(certDir)).cert);
  assert.ok(renewed.verify(newCa!.publicKey), 'signed by the new CA');
  assert.notEqual(renewed.serialNumber, new X509Certificate(first.cert).serialNumber);
  assert.ok(renewed.validToDate.getTime() > at(50)().getTime());
  // The next renewal keeps only the CA before it: a bundle of two, never a growing list.
  const next = await ensureServingCertificate(secrets, { ...options(certDir), validityDays: 30, now: at(42) });
  assert.deepEqual(bundle(next).map((c) => c.toString()).slice(1), [newCa!.toString()]);
});

test('two replicas due at once: the one that writes second gets a Conflict and serves what the first wrote', async () => {
  const secrets = new FakeSecrets();
  const issued = new Date('2026-01-01T00:00:00Z');
  const due = new Date(issued.getTime() + 25 * DAY_MS);
  const certDir = join(dir, 'race-renewal');
  const firstCa = await ensureServingCertificate(secrets, { ...options(certDir), validityDays: 30, now: () => issued });
  const first = await served(certDir);
  const theirs = await generateCertificates({ dnsNames: ['hooks.ops.svc'], validityDays: 30, now: due });
  const theirBundle = `${theirs.caCert.trimEnd()}\n${firstCa}`;
  secrets.beforeReplace = () => {
    secrets.beforeReplace = undefined;
    // The other replica's renewal lands between this one's read and its write.
    secrets.put('ops', 'webhook-certs', { ...secretData({ ...theirs, caCert: theirBundle }), 'previous.tls.crt': b64(first.cert), 'previous.tls.key': b64(first.key) });
    secrets.stored.get('ops/webhook-certs')!.metadata.annotations = { [SERVE_RENEWED_AFTER_ANNOTATION]: new Date(due.getTime() + SERVE_RENEWED_AFTER_MS).toISOString() };
  };
  const caBundle = await ensureServingCertificate(secrets, { ...options(certDir), validityDays: 30, now: () => due });
  assert.equal(secrets.replaced, 0, 'its own write was refused');
  assert.equal(caBundle, theirBundle);
  assert.deepEqual(await served(certDir), { ca: theirBundle, cert: first.cert, key: first.key }, 'the previous pair until the hand-over');
});

test('a renewal that cannot be written is reported, and the still valid certificate keeps being served', async () => {
  const secrets = new FakeSecrets();
  const issued = new Date('2026-01-01T00:00:00Z');
  const certDir = join(dir, 'renew-forbidden');
  const ca = await ensureServingCertificate(secrets, { ...options(certDir), validityDays: 30, now: () => issued });
  const first = await served(certDir);
  const forbidden = new ApiError('PUT', '/api/v1/namespaces/ops/secrets/webhook-certs', 403, { reason: 'Forbidden', message: 'secrets "webhook-certs" is forbidden' });
  secrets.replaceError = forbidden;
  const reported: unknown[] = [];
  const due = () => new Date(issued.getTime() + 25 * DAY_MS);
  assert.equal(await ensureServingCertificate(secrets, { ...options(certDir), validityDays: 30, now: due, onRenewalFailed: (err) => reported.push(err) }), ca);
  assert.deepEqual(reported, [forbidden]);
  assert.deepEqual(await served(certDir), first);
});
