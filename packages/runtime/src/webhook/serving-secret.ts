// A webhook's serving certificate shared by every replica of its server: one CA and certificate kept in a
// Secret (the first process to start creates it, the others read it), written to local files for the
// server (WebhookServer reloads them). Every replica must serve a certificate of the one CA that
// patchCaBundle publishes: each making its own would leave all but the last publisher distrusted.
//
// Renewal without a moment of distrust: once a third of the certificate's life is left, the replica that
// notices issues a new CA and certificate and replaces the Secret (optimistic concurrency: one replica wins,
// the others read its result). `ca.crt` becomes the new CA followed by the old one, so the published
// caBundle trusts both; the old certificate stays in the Secret as `previous.tls.*` and every replica keeps
// serving it until SERVE_RENEWED_AFTER_MS have passed, by which time some replica's 30 s publishing round
// has put the two-CA bundle in the webhook configurations. The next renewal drops the oldest CA.
import type { Client } from '../client/client.ts';
import { AlreadyExistsError, ConflictError } from '../client/errors.ts';
import { Secrets } from '../client/resources.ts';
import { generateCertificates, writeCertificates, type GeneratedCertificates } from './certs.ts';
import { needsRotation } from './x509.ts';

/** How long replicas keep serving the previous certificate after a renewal (several publishing rounds). */
export const SERVE_RENEWED_AFTER_MS = 120_000;
/** When the replicas move to the renewed certificate (RFC 3339), on the Secret. */
export const SERVE_RENEWED_AFTER_ANNOTATION = 'webhook.quorum.dev/serve-renewed-after';
/** Default life of the CA and the serving certificate; renewed once a third of it is left. */
export const SERVING_CERTIFICATE_VALIDITY_DAYS = 365;

export interface ServingCertificateOptions {
  /** The namespace of the Secret and of the Service the webhook configuration names. */
  namespace: string;
  /** The Secret holding `ca.crt`, `tls.crt` and `tls.key`. */
  secretName: string;
  /** The Service: its in-cluster names are the certificate's. */
  service: string;
  /** Where the server reads `tls.crt` and `tls.key` (writeCertificates). */
  certDir: string;
  /** The Secret's labels, when this process creates it. */
  labels?: Record<string, string>;
  /** Default SERVING_CERTIFICATE_VALIDITY_DAYS (fractions allowed, e.g. in tests). */
  validityDays?: number;
  /** Default the clock. */
  now?: () => Date;
  /**
   * Told when a due renewal could not be written (e.g. RBAC without `update` on the Secret): the current
   * certificate, still valid, keeps being served, and the renewal is tried again at the next call.
   */
  onRenewalFailed?: (err: unknown) => void;
}

/** What the Secret holds: the CA bundle to publish, the current pair, and during a renewal the previous pair. */
interface StoredCertificates {
  caBundle: string;
  cert: string;
  key: string;
  previous?: { cert: string; key: string };
  serveRenewedAfterMs?: number;
  resourceVersion?: string;
}

/**
 * Reads the serving certificate from its Secret, or makes it and stores it there, renews it when due, and
 * writes what this replica must serve to `certDir`. Returns the CA bundle (PEM) for patchCaBundle. A Secret
 * that exists without all three keys is never overwritten (other replicas may serve what it holds): the
 * create fails as AlreadyExists and this throws.
 */
export async function ensureServingCertificate(client: Pick<Client, 'find' | 'create' | 'replace'>, options: ServingCertificateOptions): Promise<string> {
  const now = options.now?.() ?? new Date();
  let stored = (await readServingSecret(client, options)) ?? (await createServingSecret(client, options, now));
  if (renewalDue(stored, now)) {
    try {
      stored = await renew(client, options, stored, now);
    } catch (err) {
      options.onRenewalFailed?.(err);
    }
  }
  const serving = stored.previous && stored.serveRenewedAfterMs !== undefined && now.getTime() < stored.serveRenewedAfterMs ? stored.previous : stored;
  await writeCertificates(options.certDir, { caCert: stored.caBundle, caKey: '', cert: serving.cert, key: serving.key });
  return stored.caBundle;
}

/** Due once a third of the current certificate's life is left, and not while the last renewal is still taking over. */
function renewalDue(stored: StoredCertificates, now: Date): boolean {
  if (stored.serveRenewedAfterMs !== undefined && now.getTime() < stored.serveRenewedAfterMs) return false;
  return needsRotation(stored.cert, now);
}

async function issue(options: ServingCertificateOptions, now: Date): Promise<GeneratedCertificates> {
  const { namespace, service } = options;
  return generateCertificates({
    dnsNames: [`${service}.${namespace}.svc`, `${service}.${namespace}.svc.cluster.local`],
    commonName: `${service}.${namespace}.svc`,
    validityDays: options.validityDays ?? SERVING_CERTIFICATE_VALIDITY_DAYS,
    now,
  });
}

async function createServingSecret(client: Pick<Client, 'find' | 'create' | 'replace'>, options: ServingCertificateOptions, now: Date): Promise<StoredCertificates> {
  const { namespace, secretName } = options;
  const generated = await issue(options, now);
  try {
    await client.create(Secrets, {
      apiVersion: 'v1',
      kind: 'Secret',
      metadata: { name: secretName, namespace, ...(options.labels ? { labels: options.labels } : {}) },
      type: 'Opaque',
      data: { 'ca.crt': b64(generated.caCert), 'tls.crt': b64(generated.cert), 'tls.key': b64(generated.key) },
    });
    return { caBundle: generated.caCert, cert: generated.cert, key: generated.key };
  } catch (err) {
    // Another process made it first: use its certificate, which the CA it publishes names.
    if (!(err instanceof AlreadyExistsError)) throw err;
    const stored = await readServingSecret(client, options);
    if (!stored) throw new Error(`webhook certificates: Secret ${namespace}/${secretName} has no ca.crt, tls.crt and tls.key`);
    return stored;
  }
}

/** The new pair replaces the Secret's; a replica that renewed first wins (Conflict), and its result is read. */
async function renew(client: Pick<Client, 'find' | 'create' | 'replace'>, options: ServingCertificateOptions, stored: StoredCertificates, now: Date): Promise<StoredCertificates> {
  const { namespace, secretName } = options;
  const generated = await issue(options, now);
  const caBundle = `${generated.caCert.trimEnd()}\n${firstCertificate(stored.caBundle)}`;
  const serveRenewedAfterMs = now.getTime() + SERVE_RENEWED_AFTER_MS;
  const secret = await client.find(Secrets, { namespace, name: secretName });
  if (!secret || secret.metadata.resourceVersion !== stored.resourceVersion) return (await readServingSecret(client, options)) ?? stored;
  try {
    await client.replace(Secrets, {
      ...secret,
      metadata: { ...secret.metadata, annotations: { ...secret.metadata.annotations, [SERVE_RENEWED_AFTER_ANNOTATION]: new Date(serveRenewedAfterMs).toISOString() } },
      data: { 'ca.crt': b64(caBundle), 'tls.crt': b64(generated.cert), 'tls.key': b64(generated.key), 'previous.tls.crt': b64(stored.cert), 'previous.tls.key': b64(stored.key) },
    });
  } catch (err) {
    if (!(err instanceof ConflictError)) throw err;
    return (await readServingSecret(client, options)) ?? stored;
  }
  return { caBundle, cert: generated.cert, key: generated.key, previous: { cert: stored.cert, key: stored.key }, serveRenewedAfterMs };
}

/** The CA key is not stored: nothing signs with it after the first process. */
async function readServingSecret(client: Pick<Client, 'find'>, options: ServingCertificateOptions): Promise<StoredCertificates | undefined> {
  const secret = await client.find(Secrets, { namespace: options.namespace, name: options.secretName });
  const d = secret?.data;
  if (!secret || !d?.['ca.crt'] || !d['tls.crt'] || !d['tls.key']) return undefined;
  const text = (k: string): string => Buffer.from(d[k]!, 'base64').toString('utf8');
  const after = Date.parse(secret.metadata.annotations?.[SERVE_RENEWED_AFTER_ANNOTATION] ?? '');
  return {
    caBundle: text('ca.crt'),
    cert: text('tls.crt'),
    key: text('tls.key'),
    ...(d['previous.tls.crt'] && d['previous.tls.key'] ? { previous: { cert: text('previous.tls.crt'), key: text('previous.tls.key') } } : {}),
    ...(Number.isFinite(after) ? { serveRenewedAfterMs: after } : {}),
    ...(secret.metadata.resourceVersion ? { resourceVersion: secret.metadata.resourceVersion } : {}),
  };
}

const b64 = (s: string): string => Buffer.from(s).toString('base64');

/** The newest CA of a bundle (renewals put it first), so a bundle holds at most the new CA and the one before. */
function firstCertificate(bundle: string): string {
  const end = '-----END CERTIFICATE-----';
  const at = bundle.indexOf(end);
  return at < 0 ? bundle : `${bundle.slice(0, at + end.length)}\n`;
}
