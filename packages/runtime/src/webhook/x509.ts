// The one X.509 issuer of Quorum's code, on @peculiar/x509 (node:crypto parses, verifies and signs, but cannot
// create a certificate): a self-signed CA, leaf certificates it signs for servers, clients and peers, and when to
// issue them again. The webhooks' serving certificates (certs.ts) and operator-managed TLS (the etcd and Redis
// operators, through @quorum/kit) are issued here. One profile: ECDSA P-256 keys, ecdsa-with-SHA256.
//
// The certificates are read by Go (etcd, Redis' Go clients, kube-apiserver), whose parser is strict: positive,
// minimally encoded serials, and a leaf's issuer name byte for byte the CA's subject name (Go's verifier compares
// the raw bytes). The issuer name is therefore copied from the CA certificate as it is encoded, whichever tool
// made the CA, never re-encoded from a string.
import { createPrivateKey, randomBytes, webcrypto, X509Certificate, type KeyObject } from 'node:crypto';
import { isIP } from 'node:net';
import type * as X509 from '@peculiar/x509';

export type ExtendedKeyUsage = 'serverAuth' | 'clientAuth';

/** What a leaf is for: a server's listener, a client's identity, or a peer that is both (etcd members). */
export type LeafUsage = 'server' | 'client' | 'peer';

export const USAGE_EKUS: Readonly<Record<LeafUsage, readonly ExtendedKeyUsage[]>> = {
  server: ['serverAuth'],
  client: ['clientAuth'],
  peer: ['serverAuth', 'clientAuth'],
};

/** How far notBefore is set back from the moment of issue, so that a peer whose clock runs behind accepts a fresh certificate. */
export const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60_000;

/** A certificate is issued again once less than this fraction of its validity is left. */
export const ROTATE_WHEN_REMAINING_FRACTION = 1 / 3;

export interface DistinguishedName {
  commonName: string;
  organization?: string;
}

/** What a certificate says; the key, serial, issuer and key identifiers are filled in when it is issued. */
export interface CertificateRequest {
  subject: DistinguishedName;
  /** A CA signs certificates (keyCertSign, cRLSign) and only leaves (pathLen 0); a leaf signs handshakes (digitalSignature). */
  isCA: boolean;
  extendedKeyUsage: readonly ExtendedKeyUsage[];
  dnsNames: readonly string[];
  /** IPv4 or IPv6 literals. */
  ipAddresses: readonly string[];
  validityDays: number;
}

/** A CA that can sign: its certificate and its private key. */
export interface CertificateAuthority {
  certificate: X509Certificate;
  privateKey: KeyObject;
}

export interface IssuedCertificate {
  certificate: X509Certificate;
  privateKey: KeyObject;
  certificatePem: string;
  /** PKCS#8, which Go's tls.X509KeyPair and Node's createPrivateKey both read. */
  privateKeyPem: string;
}

export interface LeafOptions {
  commonName: string;
  organization?: string;
  usage: LeafUsage;
  dnsNames?: readonly string[];
  ipAddresses?: readonly string[];
  validityDays: number;
}

const ECDSA_P256 = { name: 'ECDSA', namedCurve: 'P-256', hash: 'SHA-256' };
const DAY_MS = 86_400_000;
const DNS_NAME = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

let x509Module: Promise<typeof X509> | undefined;

// Loaded on first use (7 MB of RSS on Node 24, measured): @peculiar/x509 needs the Reflect metadata polyfill evaluated before it,
// and a process that never issues a certificate should carry neither.
function loadX509(): Promise<typeof X509> {
  x509Module ??= import('reflect-metadata').then(() => import('@peculiar/x509'));
  return x509Module;
}

/** The request for a CA: it signs leaf certificates only. */
export function caRequest(subject: DistinguishedName, validityDays: number): CertificateRequest {
  return { subject, isCA: true, extendedKeyUsage: [], dnsNames: [], ipAddresses: [], validityDays };
}

/** The request for a leaf certificate of this usage and these names. */
export function leafRequest(options: LeafOptions): CertificateRequest {
  return {
    subject: { commonName: options.commonName, ...(options.organization !== undefined ? { organization: options.organization } : {}) },
    isCA: false,
    extendedKeyUsage: USAGE_EKUS[options.usage],
    dnsNames: options.dnsNames ?? [],
    ipAddresses: options.ipAddresses ?? [],
    validityDays: options.validityDays,
  };
}

/** A new self-signed CA. */
export function createCertificateAuthority(subject: DistinguishedName, validityDays: number, now: Date): Promise<IssuedCertificate> {
  return issueCertificate(caRequest(subject, validityDays), now);
}

/** A new leaf key and certificate signed by `issuer`. */
export function issueLeafCertificate(options: LeafOptions, issuer: CertificateAuthority, now: Date): Promise<IssuedCertificate> {
  return issueCertificate(leafRequest(options), now, issuer);
}

/**
 * A new P-256 key and a certificate for it: signed by `issuer`, or self-signed without one (a root CA).
 * notBefore is `now` minus CLOCK_SKEW_ALLOWANCE_MS; notAfter is `now` plus the validity, but never later than the
 * issuer's own notAfter (a chain is only as valid as its shortest link, and needsRotation then sees the real end).
 */
export async function issueCertificate(request: CertificateRequest, now: Date, issuer?: CertificateAuthority): Promise<IssuedCertificate> {
  checkRequest(request);
  const { notBefore, notAfter } = validity(request, now, issuer);
  const x509 = await loadX509();
  const keys = await webcrypto.subtle.generateKey(ECDSA_P256, true, ['sign', 'verify']);
  const signingKey = issuer ? signingKeyOf(issuer) : keys.privateKey;
  const issuerPublicKey = issuer ? publicCryptoKey(issuer.certificate) : keys.publicKey;
  const subject = new x509.Name(nameAttributes(request.subject));
  const certificate = await x509.X509CertificateGenerator.create(
    {
      serialNumber: randomSerial(),
      subject,
      // The CA's subject as its certificate encodes it (see the top of this file).
      issuer: issuer ? new x509.X509Certificate(issuer.certificate.raw).subjectName : subject,
      publicKey: keys.publicKey,
      signingKey,
      notBefore,
      notAfter,
      signingAlgorithm: ECDSA_P256,
      extensions: await extensions(x509, request, keys.publicKey, issuerPublicKey),
    },
    webcrypto,
  );
  const issued = new X509Certificate(Buffer.from(certificate.rawData));
  // A cheap self-check with Node's own parser, so a library regression fails here rather than in a handshake.
  if (!issued.verify(issuer ? issuer.certificate.publicKey : issued.publicKey)) throw new Error(`the certificate just signed for ${request.subject.commonName} does not verify`);
  const privateKey = await keyObject(keys.privateKey);
  return { certificate: issued, privateKey, certificatePem: certificate.toString('pem') + '\n', privateKeyPem: privateKey.export({ type: 'pkcs8', format: 'pem' }).toString() };
}

function checkRequest(request: CertificateRequest): void {
  if (!(Number.isFinite(request.validityDays) && request.validityDays > 0)) throw new RangeError(`validityDays must be positive: ${request.validityDays}`);
  for (const [what, value] of [['commonName', request.subject.commonName], ['organization', request.subject.organization]] as const) {
    // X.509's upper bound on these attributes (ub-common-name, ub-organization-name).
    if (value !== undefined && (value.length === 0 || value.length > 64)) throw new RangeError(`${what} must have 1 to 64 characters: ${JSON.stringify(value)}`);
  }
  for (const name of request.dnsNames) if (!DNS_NAME.test(name)) throw new SyntaxError(`not a DNS name for a certificate: ${JSON.stringify(name)}`);
  // A zone (fe80::1%eth0) only means something on one host; it has no place in a certificate.
  for (const ip of request.ipAddresses) if (isIP(ip) === 0 || ip.includes('%')) throw new SyntaxError(`not an IP address: ${ip}`);
}

function validity(request: CertificateRequest, now: Date, issuer: CertificateAuthority | undefined): { notBefore: Date; notAfter: Date } {
  const wholeSeconds = (ms: number): Date => new Date(Math.floor(ms / 1000) * 1000);
  if (issuer && !issuer.certificate.ca) throw new TypeError(`the issuer ${oneLine(issuer.certificate.subject)} is not a CA`);
  const notBefore = wholeSeconds(now.getTime() - CLOCK_SKEW_ALLOWANCE_MS);
  let notAfter = wholeSeconds(now.getTime() + request.validityDays * DAY_MS);
  if (issuer && issuer.certificate.validToDate.getTime() < notAfter.getTime()) notAfter = issuer.certificate.validToDate;
  if (notAfter.getTime() <= now.getTime()) throw new RangeError(`the issuer ${oneLine(issuer?.certificate.subject ?? '')} expired on ${notAfter.toISOString()}`);
  return { notBefore, notAfter };
}

async function extensions(x509: typeof X509, request: CertificateRequest, publicKey: webcrypto.CryptoKey, issuerPublicKey: webcrypto.CryptoKey): Promise<X509.Extension[]> {
  const usage = request.isCA ? x509.KeyUsageFlags.keyCertSign | x509.KeyUsageFlags.cRLSign : x509.KeyUsageFlags.digitalSignature;
  const list: X509.Extension[] = [
    // pathLenConstraint 0: these CAs sign leaf certificates only, never another CA.
    new x509.BasicConstraintsExtension(request.isCA, request.isCA ? 0 : undefined, true),
    new x509.KeyUsagesExtension(usage, true),
  ];
  const ekus = { serverAuth: x509.ExtendedKeyUsage.serverAuth, clientAuth: x509.ExtendedKeyUsage.clientAuth };
  if (request.extendedKeyUsage.length > 0) list.push(new x509.ExtendedKeyUsageExtension(request.extendedKeyUsage.map((u) => ekus[u]), false));
  const names = [...request.dnsNames.map((value) => ({ type: 'dns' as const, value })), ...request.ipAddresses.map((value) => ({ type: 'ip' as const, value }))];
  // Not critical: the subject name is not empty (RFC 5280 4.2.1.6).
  if (names.length > 0) list.push(new x509.SubjectAlternativeNameExtension(names, false));
  list.push(await x509.SubjectKeyIdentifierExtension.create(publicKey, false, webcrypto));
  list.push(await x509.AuthorityKeyIdentifierExtension.create(issuerPublicKey, false, webcrypto));
  return list;
}

/** Most significant attribute first, as `openssl x509 -subject` shows it: O, then CN. */
function nameAttributes(name: DistinguishedName): X509.JsonName {
  return [...(name.organization !== undefined ? [{ O: [name.organization] }] : []), { CN: [name.commonName] }];
}

/** 16 random bytes, the first in 0x01–0x7f: positive (Go refuses negative serials), minimal and never zero. */
function randomSerial(): string {
  const serial = randomBytes(16);
  serial[0] = (serial[0]! & 0x7f) | 0x01;
  return serial.toString('hex');
}

function signingKeyOf(issuer: CertificateAuthority): webcrypto.CryptoKey {
  requireP256(issuer.privateKey, 'the issuer key');
  return issuer.privateKey.toCryptoKey(ECDSA_P256, false, ['sign']);
}

function publicCryptoKey(certificate: X509Certificate): webcrypto.CryptoKey {
  return certificate.publicKey.toCryptoKey(ECDSA_P256, true, ['verify']);
}

async function keyObject(key: webcrypto.CryptoKey): Promise<KeyObject> {
  const pkcs8 = await webcrypto.subtle.exportKey('pkcs8', key);
  return createPrivateKey({ key: Buffer.from(pkcs8), format: 'der', type: 'pkcs8' });
}

function requireP256(key: KeyObject, what: string): void {
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    throw new TypeError(`${what} must be an ECDSA P-256 key (the one profile this issuer signs with), not ${key.asymmetricKeyType ?? key.type}`);
  }
}

function oneLine(name: string): string {
  return name.replaceAll('\n', ', ');
}

/**
 * A CA from its PEM certificate and key, as a Secret holds them. Throws when either does not parse, the key is not
 * the certificate's, or the certificate is not a CA.
 */
export function loadCertificateAuthority(certificatePem: string, privateKeyPem: string): CertificateAuthority {
  const certificate = new X509Certificate(certificatePem);
  const privateKey = createPrivateKey(privateKeyPem);
  if (!certificate.ca) throw new TypeError(`${oneLine(certificate.subject)} is not a CA`);
  if (!certificate.checkPrivateKey(privateKey)) throw new TypeError(`the private key does not belong to ${oneLine(certificate.subject)}`);
  return { certificate, privateKey };
}

/**
 * Whether a certificate must be issued again at `now`: less than a third of its validity is left, it has
 * expired, it is not valid yet (the clock moved back past the skew allowance), or it does not parse.
 */
export function needsRotation(certificate: X509Certificate | string, now: Date): boolean {
  let parsed: X509Certificate;
  try {
    parsed = typeof certificate === 'string' ? new X509Certificate(certificate) : certificate;
  } catch {
    return true;
  }
  const from = parsed.validFromDate.getTime();
  const to = parsed.validToDate.getTime();
  const at = now.getTime();
  if (at < from || at >= to) return true;
  return to - at < (to - from) * ROTATE_WHEN_REMAINING_FRACTION;
}
