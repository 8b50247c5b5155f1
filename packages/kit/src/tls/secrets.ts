// Operator-managed certificates in Secrets, independent of what they are for: the keys of a TLS Secret, its data
// decoded, why a CA or leaf Secret must be issued again (missing, unreadable, signed by another CA, other names,
// or less than a third of its validity left), the Secret object itself, and its write: created when new (a CA is
// only ever created), replaced with its resourceVersion otherwise, so that a concurrent write fails instead of
// being lost. Each operator decides which Secrets it has and what goes in them (its names, SANs, bundles).
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { AlreadyExistsError, Secrets, type Client, type KubeObject, type OwnerReference, type Secret } from '@quorum/runtime';
import { loadCertificateAuthority, needsRotation, type CertificateAuthority, type CertificateRequest } from '@quorum/runtime';
import { foreignSecretProblem, secretOwner, type SecretOwnerSpec } from './ownership.ts';
import { bundleFingerprints } from './x509.ts';

/** The keys of a kubernetes.io/tls Secret, plus the CA bundle its holder trusts. */
export const TLS_KEYS = { ca: 'ca.crt', certificate: 'tls.crt', key: 'tls.key' } as const;

/** A Secret's data, decoded (PEM text). */
export type SecretContents = Readonly<Record<string, string>>;

export type SecretObject = KubeObject & { data?: Record<string, string> };

export type IssueReason =
  /** There is no such Secret. */
  | 'Missing'
  /** It lacks a key, or its certificate or key does not parse or does not match. */
  | 'Unreadable'
  /** Less than a third of its validity is left, or it expired. */
  | 'Expiring'
  /** Its names differ from what its holder needs now (e.g. another cluster domain). */
  | 'NamesChanged'
  /** Its CA is being issued, or it was not signed by the CA the owner has now. */
  | 'IssuerChanged'
  /** A person asked for new certificates (an annotation on the owner). */
  | 'RotationRequested';

/** A Secret's data decoded to text; undefined for a Secret that does not exist. */
export function secretContents(secret: SecretObject | undefined): SecretContents | undefined {
  if (!secret) return undefined;
  return Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** The CA a Secret holds (tls.crt, tls.key), or why it holds none. */
export function loadCA(contents: SecretContents | undefined): CertificateAuthority | IssueReason {
  if (!contents) return 'Missing';
  const certificate = contents[TLS_KEYS.certificate];
  const key = contents[TLS_KEYS.key];
  if (!certificate || !key) return 'Unreadable';
  try {
    return loadCertificateAuthority(certificate, key);
  } catch {
    return 'Unreadable';
  }
}

/**
 * What is wrong with the certificate at `certificateKey` (and its key at `keyKey`) in `contents`, if anything.
 * `issuer` undefined means its CA is being issued now: whatever it holds was signed by another one.
 */
export function leafProblem(contents: SecretContents | undefined, certificateKey: string, keyKey: string, issuer: CertificateAuthority | undefined, profile: CertificateRequest, now: Date): IssueReason | undefined {
  if (!contents) return 'Missing';
  const pem = contents[certificateKey];
  const key = contents[keyKey];
  if (!pem || !key) return 'Unreadable';
  let certificate: X509Certificate;
  try {
    certificate = new X509Certificate(pem);
    if (!certificate.checkPrivateKey(createPrivateKey(key))) return 'Unreadable';
  } catch {
    return 'Unreadable';
  }
  if (!issuer || certificate.issuer !== issuer.certificate.subject || !certificate.verify(issuer.certificate.publicKey)) return 'IssuerChanged';
  if (!sameNames(certificate, profile)) return 'NamesChanged';
  if (needsRotation(certificate, now)) return 'Expiring';
  return undefined;
}

/** The CA bundle a holder trusts must be exactly its CA Secret's bundle (one CA, or two during a rotation). */
export function bundleProblem(contents: SecretContents | undefined, bundleKey: string, expected: string | undefined): IssueReason | undefined {
  if (!contents) return 'Missing';
  const bundle = contents[bundleKey];
  if (!bundle) return 'Unreadable';
  if (!expected) return 'IssuerChanged';
  try {
    return bundleFingerprints(bundle).join() === bundleFingerprints(expected).join() ? undefined : 'IssuerChanged';
  } catch {
    return 'Unreadable';
  }
}

/** The certificate names exactly the profile's DNS names and IPs: each one, and no others. */
function sameNames(certificate: X509Certificate, profile: CertificateRequest): boolean {
  const entries = (certificate.subjectAltName ?? '').split(', ').filter((e) => e.length > 0);
  if (entries.length !== profile.dnsNames.length + profile.ipAddresses.length) return false;
  return (
    profile.dnsNames.every((name) => certificate.checkHost(name, { subject: 'never', wildcards: false }) === name) &&
    profile.ipAddresses.every((ip) => certificate.checkIP(ip) === ip)
  );
}

/** A CA's profile: it signs leaves only. The organization tells apart the CAs of equally named owners (their namespace). */
export function caProfile(commonName: string, organization: string, validityDays: number): CertificateRequest {
  return { subject: { commonName, organization }, isCA: true, extendedKeyUsage: [], dnsNames: [], ipAddresses: [], validityDays };
}

/** The Secret object for `name`: kubernetes.io/tls when it has tls.crt and tls.key, owned (deleted with its owner), labelled. */
export function tlsSecretObject(name: string, namespace: string, contents: SecretContents, labels: Record<string, string>, owner: OwnerReference): Secret {
  const isTLS = TLS_KEYS.certificate in contents && TLS_KEYS.key in contents;
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: { name, namespace, labels, ownerReferences: [owner] },
    type: isTLS ? 'kubernetes.io/tls' : 'Opaque',
    data: Object.fromEntries(Object.entries(contents).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

/**
 * Each named Secret as the API server has it now (not the cache: a Secret the previous reconcile wrote may not be
 * there yet, and a decision on a stale read would replace what was just made); a ForeignSecretError for the first
 * one that is not the owner's.
 */
export async function readManagedSecrets(client: Pick<Client, 'find'>, namespace: string, names: readonly string[], owner: SecretOwnerSpec): Promise<Map<string, SecretObject | undefined>> {
  const objects = new Map<string, SecretObject | undefined>();
  for (const name of names) {
    const existing = await client.find(Secrets, { namespace, name });
    if (existing && secretOwner(existing, owner) === 'foreign') throw new ForeignSecretError(foreignSecretProblem(existing, owner));
    objects.set(name, existing);
  }
  return objects;
}

/**
 * Writes an issued Secret: created when there is none (or when it is a CA: a CA is never replaced by this, a rotation
 * does that), replaced with `existing`'s resourceVersion otherwise. A create that meets one made meanwhile is a
 * TLSNotReadyError: what the other writer made stands, and is read next time.
 */
export async function writeIssuedSecret(client: Pick<Client, 'create' | 'replace'>, object: Secret, existing: SecretObject | undefined, options: { isCA: boolean; fieldManager: string; signal: AbortSignal }): Promise<void> {
  if (options.isCA || !existing) {
    try {
      await client.create(Secrets, object, { fieldManager: options.fieldManager, signal: options.signal });
    } catch (err) {
      if (err instanceof AlreadyExistsError) throw new TLSNotReadyError(`Secret ${object.metadata.name} was created meanwhile; reading it again`);
      throw err;
    }
    return;
  }
  const replacement = { ...object, metadata: { ...object.metadata, resourceVersion: existing.metadata.resourceVersion } } as Secret;
  await client.replace(Secrets, replacement, { fieldManager: options.fieldManager, signal: options.signal });
}

/** A TLS Secret that cannot be written yet (a CA still missing, a write raced): retried on the next reconcile. */
export class TLSNotReadyError extends Error {
  readonly reason: string;
  constructor(message: string, reason = 'CertificatesNotReady') {
    super(message);
    this.name = 'TLSNotReadyError';
    this.reason = reason;
  }
}

/** A Secret of the owner's names that is not the owner's (ownership.ts): never written over. */
export class ForeignSecretError extends TLSNotReadyError {
  constructor(message: string) {
    super(message, 'TLSSecretConflict');
    this.name = 'ForeignSecretError';
  }
}
