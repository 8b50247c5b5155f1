// X.509 v3 certificates for etcd TLS, made with node:crypto alone. node:crypto parses, verifies and signs, but it
// has no API that creates a certificate or a CSR (nor has WebCrypto), so this file writes the DER itself: a small
// DER encoder, a smaller DER reader (to copy an issuer's name and key identifier byte for byte), and one fixed
// profile: ECDSA P-256 keys signed with ecdsa-with-SHA256.
//
// etcd is a Go program, and Go's parser is strict: minimal INTEGER encodings, positive serials, DER-sorted SETs,
// no empty SEQUENCEs where a value is required. Every encoder below produces exactly DER, never merely BER.
import { createHash, createPrivateKey, generateKeyPairSync, randomBytes, sign, X509Certificate, type KeyObject } from 'node:crypto';
import { isIPv4, isIPv6 } from 'node:net';

// ---------------------------------------------------------------------------------------------------------------
// DER writer

const TAG = {
  boolean: 0x01,
  integer: 0x02,
  bitString: 0x03,
  octetString: 0x04,
  oid: 0x06,
  utf8String: 0x0c,
  ia5String: 0x16,
  utcTime: 0x17,
  generalizedTime: 0x18,
  sequence: 0x30,
  set: 0x31,
} as const;

function encodeLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let rest = length; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function tlv(tag: number, contents: Uint8Array): Buffer {
  return Buffer.concat([Buffer.from([tag]), encodeLength(contents.length), contents]);
}

function contextTag(tagNumber: number): number {
  // Tag numbers from 31 up need the multi-byte form, which no X.509 field used here has.
  if (!Number.isInteger(tagNumber) || tagNumber < 0 || tagNumber > 30) throw new RangeError(`context tag [${tagNumber}] is out of range`);
  return tagNumber;
}

/** An unsigned big-endian magnitude as a DER INTEGER's contents: no redundant leading zeros, and a 0x00 when the top bit is set. */
function integerContents(magnitude: Uint8Array): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const trimmed = Buffer.from(magnitude.subarray(start));
  if (trimmed.length === 0) return Buffer.from([0]);
  return (trimmed[0]! & 0x80) !== 0 ? Buffer.concat([Buffer.from([0]), trimmed]) : trimmed;
}

function oidContents(dotted: string): Buffer {
  if (!/^\d+(\.\d+)+$/.test(dotted)) throw new SyntaxError(`not an object identifier: ${dotted}`);
  const arcs = dotted.split('.').map(Number);
  const [first, second, ...rest] = arcs as [number, number, ...number[]];
  if (first > 2 || (first < 2 && second >= 40) || !arcs.every(Number.isSafeInteger)) throw new RangeError(`object identifier out of range: ${dotted}`);
  const bytes: number[] = [];
  for (const arc of [first * 40 + second, ...rest]) {
    // Base 128, most significant group first, every byte but the last with its top bit set.
    const groups = [arc % 128];
    for (let value = Math.floor(arc / 128); value > 0; value = Math.floor(value / 128)) groups.unshift((value % 128) | 0x80);
    bytes.push(...groups);
  }
  return Buffer.from(bytes);
}

const pad = (value: number, width: number): string => String(value).padStart(width, '0');

function timeDigits(date: Date, yearDigits: 2 | 4): string {
  if (Number.isNaN(date.getTime())) throw new RangeError('invalid date');
  const year = yearDigits === 2 ? date.getUTCFullYear() % 100 : date.getUTCFullYear();
  return (
    pad(year, yearDigits) +
    pad(date.getUTCMonth() + 1, 2) +
    pad(date.getUTCDate(), 2) +
    pad(date.getUTCHours(), 2) +
    pad(date.getUTCMinutes(), 2) +
    pad(date.getUTCSeconds(), 2) +
    'Z'
  );
}

/** A DER encoder for the ASN.1 types an X.509 certificate uses. Each function returns one complete TLV. */
export const der = {
  sequence: (...items: Uint8Array[]): Buffer => tlv(TAG.sequence, Buffer.concat(items)),
  /** DER orders a SET OF by the encodings of its elements. */
  set: (...items: Uint8Array[]): Buffer => tlv(TAG.set, Buffer.concat([...items].sort((a, b) => Buffer.compare(a, b)))),
  /** A non-negative integer: a number, or an unsigned big-endian magnitude. */
  integer: (value: number | Uint8Array): Buffer => {
    if (typeof value === 'number') {
      if (!Number.isSafeInteger(value) || value < 0) throw new RangeError(`integer out of range: ${value}`);
      const bytes: number[] = [];
      for (let rest = value; rest > 0; rest = Math.floor(rest / 256)) bytes.unshift(rest & 0xff);
      return tlv(TAG.integer, integerContents(Uint8Array.from(bytes)));
    }
    return tlv(TAG.integer, integerContents(value));
  },
  boolean: (value: boolean): Buffer => tlv(TAG.boolean, Buffer.from([value ? 0xff : 0x00])),
  oid: (dotted: string): Buffer => tlv(TAG.oid, oidContents(dotted)),
  utf8String: (text: string): Buffer => tlv(TAG.utf8String, Buffer.from(text, 'utf8')),
  ia5String: (text: string): Buffer => {
    if (!/^[\x20-\x7e]*$/.test(text)) throw new RangeError(`IA5String takes printable ASCII only: ${JSON.stringify(text)}`);
    return tlv(TAG.ia5String, Buffer.from(text, 'ascii'));
  },
  utcTime: (date: Date): Buffer => tlv(TAG.utcTime, Buffer.from(timeDigits(date, 2), 'ascii')),
  generalizedTime: (date: Date): Buffer => tlv(TAG.generalizedTime, Buffer.from(timeDigits(date, 4), 'ascii')),
  /** RFC 5280 4.1.2.5: UTCTime for the years 1950 to 2049, GeneralizedTime for the others. */
  time: (date: Date): Buffer => {
    const year = date.getUTCFullYear();
    return year >= 1950 && year < 2050 ? der.utcTime(date) : der.generalizedTime(date);
  },
  bitString: (bytes: Uint8Array, unusedBits = 0): Buffer => {
    if (!Number.isInteger(unusedBits) || unusedBits < 0 || unusedBits > 7 || (bytes.length === 0 && unusedBits !== 0)) {
      throw new RangeError(`bad unused-bits count ${unusedBits}`);
    }
    return tlv(TAG.bitString, Buffer.concat([Buffer.from([unusedBits]), bytes]));
  },
  octetString: (bytes: Uint8Array): Buffer => tlv(TAG.octetString, bytes),
  /** `[n] EXPLICIT`: the whole inner TLV wrapped in a constructed context tag. */
  explicit: (tagNumber: number, inner: Uint8Array): Buffer => tlv(0xa0 | contextTag(tagNumber), inner),
  /** `[n] IMPLICIT` over a primitive type: the inner type's contents under a context tag. */
  implicit: (tagNumber: number, contents: Uint8Array): Buffer => tlv(0x80 | contextTag(tagNumber), contents),
} as const;

// ---------------------------------------------------------------------------------------------------------------
// DER reader: only as much as it takes to pick fields out of a certificate.

export interface DerElement {
  /** The identifier octet (single-byte tags only). */
  tag: number;
  contents: Buffer;
  /** The whole element: identifier, length and contents. */
  encoded: Buffer;
}

/** Reads the one DER element that starts at `offset`. */
export function readDer(buffer: Buffer, offset = 0): DerElement {
  const fail = (why: string): never => {
    throw new SyntaxError(`malformed DER at byte ${offset}: ${why}`);
  };
  if (offset + 2 > buffer.length) fail('truncated');
  const tag = buffer[offset]!;
  if ((tag & 0x1f) === 0x1f) fail('multi-byte tag');
  let length = buffer[offset + 1]!;
  let headerLength = 2;
  if (length & 0x80) {
    const lengthBytes = length & 0x7f;
    if (lengthBytes === 0) fail('indefinite length');
    if (lengthBytes > 4) fail('length too long');
    if (offset + 2 + lengthBytes > buffer.length) fail('truncated length');
    length = 0;
    for (let i = 0; i < lengthBytes; i++) length = length * 256 + buffer[offset + 2 + i]!;
    headerLength += lengthBytes;
  }
  const end = offset + headerLength + length;
  if (end > buffer.length) fail(`length ${length} runs past the end`);
  return { tag, contents: buffer.subarray(offset + headerLength, end), encoded: buffer.subarray(offset, end) };
}

/** The elements inside a constructed element (a SEQUENCE, SET or explicit tag). */
export function readDerChildren(element: DerElement): DerElement[] {
  const children: DerElement[] = [];
  for (let offset = 0; offset < element.contents.length; ) {
    const child = readDer(element.contents, offset);
    children.push(child);
    offset += child.encoded.length;
  }
  return children;
}

// ---------------------------------------------------------------------------------------------------------------
// The certificate profile

export const OID = {
  commonName: '2.5.4.3',
  organizationName: '2.5.4.10',
  ecdsaWithSHA256: '1.2.840.10045.4.3.2',
  subjectKeyIdentifier: '2.5.29.14',
  keyUsage: '2.5.29.15',
  subjectAltName: '2.5.29.17',
  basicConstraints: '2.5.29.19',
  authorityKeyIdentifier: '2.5.29.35',
  extKeyUsage: '2.5.29.37',
  serverAuth: '1.3.6.1.5.5.7.3.1',
  clientAuth: '1.3.6.1.5.5.7.3.2',
} as const;

export type ExtendedKeyUsage = 'serverAuth' | 'clientAuth';

/** X.509's upper bound on commonName and organizationName (ub-common-name, ub-organization-name). */
export const MAX_NAME_ATTRIBUTE_LENGTH = 64;

/** How far notBefore is set back from the moment of issue, so that a member whose clock runs behind accepts a fresh certificate. */
export const CLOCK_SKEW_ALLOWANCE_MS = 5 * 60_000;

const DAY_MS = 86_400_000;

export interface DistinguishedName {
  commonName: string;
  organization?: string;
}

/** What a certificate says; the key, serial, issuer and key identifiers are filled in when it is issued. */
export interface CertificateRequest {
  subject: DistinguishedName;
  /** A CA signs certificates (keyCertSign, cRLSign); a leaf signs TLS handshakes (digitalSignature). */
  isCA: boolean;
  extendedKeyUsage: readonly ExtendedKeyUsage[];
  dnsNames: readonly string[];
  /** IPv4 or IPv6 literals. */
  ipAddresses: readonly string[];
  validityDays: number;
}

export interface KeyPair {
  publicKey: KeyObject;
  privateKey: KeyObject;
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

export function generateKeyPair(): KeyPair {
  return generateKeyPairSync('ec', { namedCurve: 'prime256v1' });
}

function requireP256(key: KeyObject, what: string): void {
  if (key.asymmetricKeyType !== 'ec' || key.asymmetricKeyDetails?.namedCurve !== 'prime256v1') {
    const kind = key.asymmetricKeyType === 'ec' ? `ec ${key.asymmetricKeyDetails?.namedCurve ?? '?'}` : (key.asymmetricKeyType ?? key.type);
    throw new TypeError(`${what} must be an ECDSA P-256 key (the one profile this builder signs), not ${kind}`);
  }
}

function encodeName(name: DistinguishedName): Buffer {
  const attribute = (oid: string, value: string, what: string): Buffer => {
    if (value.length === 0 || value.length > MAX_NAME_ATTRIBUTE_LENGTH) {
      throw new RangeError(`${what} must have 1 to ${MAX_NAME_ATTRIBUTE_LENGTH} characters: ${JSON.stringify(value)}`);
    }
    return der.set(der.sequence(der.oid(oid), der.utf8String(value)));
  };
  // Most significant attribute first, as `openssl x509 -subject` shows it: O, then CN.
  const rdns = [];
  if (name.organization !== undefined) rdns.push(attribute(OID.organizationName, name.organization, 'organization'));
  rdns.push(attribute(OID.commonName, name.commonName, 'commonName'));
  return der.sequence(...rdns);
}

const DNS_NAME = /^(\*\.)?[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?(\.[A-Za-z0-9]([A-Za-z0-9-]*[A-Za-z0-9])?)*$/;

/** The 4 or 16 bytes of an IP literal, as subjectAltName's iPAddress holds them. */
export function ipAddressBytes(ip: string): Buffer {
  if (isIPv4(ip)) return Buffer.from(ip.split('.').map(Number));
  // A zone (fe80::1%eth0) only means something on one host; it has no place in a certificate.
  if (!isIPv6(ip) || ip.includes('%')) throw new SyntaxError(`not an IP address: ${ip}`);
  let text = ip;
  const lastColon = text.lastIndexOf(':');
  const dotted = text.slice(lastColon + 1);
  if (isIPv4(dotted)) {
    // An embedded IPv4 address (::ffff:10.0.0.1) is the last two 16-bit groups.
    const [a, b, c, d] = dotted.split('.').map(Number) as [number, number, number, number];
    text = `${text.slice(0, lastColon + 1)}${((a << 8) | b).toString(16)}:${((c << 8) | d).toString(16)}`;
  }
  const [head, tail] = text.split('::') as [string, string | undefined];
  const groupsOf = (part: string): string[] => (part === '' ? [] : part.split(':'));
  const headGroups = groupsOf(head);
  const tailGroups = tail === undefined ? [] : groupsOf(tail);
  const zeros = tail === undefined ? [] : Array<string>(8 - headGroups.length - tailGroups.length).fill('0');
  const groups = [...headGroups, ...zeros, ...tailGroups];
  const bytes = Buffer.alloc(16);
  groups.forEach((group, i) => bytes.writeUInt16BE(parseInt(group, 16), i * 2));
  return bytes;
}

function subjectAltNames(dnsNames: readonly string[], ipAddresses: readonly string[]): Buffer {
  for (const name of dnsNames) {
    if (!DNS_NAME.test(name)) throw new SyntaxError(`not a DNS name for a certificate: ${JSON.stringify(name)}`);
  }
  return der.sequence(
    ...dnsNames.map((name) => der.implicit(2, Buffer.from(name, 'ascii'))), // dNSName [2] IA5String
    ...ipAddresses.map((ip) => der.implicit(7, ipAddressBytes(ip))), // iPAddress [7] OCTET STRING
  );
}

/** keyUsage as a DER named bit list: bit 0 is the top bit of the first byte, and trailing zero bits are dropped. */
function keyUsageBits(isCA: boolean): Buffer {
  // digitalSignature (0) is what an ECDHE-ECDSA handshake needs; keyEncipherment is for RSA key transport only.
  // keyCertSign (5) and cRLSign (6) are a CA's.
  return isCA ? der.bitString(Buffer.from([0b0000_0110]), 1) : der.bitString(Buffer.from([0b1000_0000]), 7);
}

function extension(oid: string, critical: boolean, value: Buffer): Buffer {
  // DER leaves out a BOOLEAN that equals its DEFAULT (critical FALSE).
  return der.sequence(der.oid(oid), ...(critical ? [der.boolean(true)] : []), der.octetString(value));
}

/** The BIT STRING payload of a SubjectPublicKeyInfo: for EC, the encoded point. */
function publicKeyBits(spki: Buffer): Buffer {
  const [, bitString] = readDerChildren(readDer(spki));
  if (bitString?.tag !== TAG.bitString || bitString.contents[0] !== 0) throw new SyntaxError('SubjectPublicKeyInfo without a whole-byte BIT STRING');
  return bitString.contents.subarray(1);
}

/** RFC 5280 4.2.1.2 method 1: SHA-1 of the subjectPublicKey bits. Not a security function: an index that Go and OpenSSL match issuers by. */
function keyIdentifier(spki: Buffer): Buffer {
  return createHash('sha1').update(publicKeyBits(spki)).digest();
}

interface IssuerFields {
  /** The issuer's subject Name exactly as encoded in its certificate, so name chaining compares equal bytes. */
  name: Buffer;
  keyIdentifier: Buffer;
}

/** Picks a certificate's subject Name and key identifier out of its DER. */
function issuerFields(certificate: X509Certificate): IssuerFields {
  const [tbs] = readDerChildren(readDer(certificate.raw));
  if (!tbs) throw new SyntaxError('certificate without tbsCertificate');
  const fields = readDerChildren(tbs);
  // version [0] is optional; then serialNumber, signature, issuer, validity, subject, subjectPublicKeyInfo.
  const first = fields[0]?.tag === 0xa0 ? 1 : 0;
  const subject = fields[first + 4];
  const spki = fields[first + 5];
  if (!subject || !spki) throw new SyntaxError('truncated tbsCertificate');
  // Prefer the identifier the issuer states for itself; another tool may have computed it another way.
  const extensions = fields.find((field) => field.tag === 0xa3);
  for (const ext of extensions ? readDerChildren(readDerChildren(extensions)[0]!) : []) {
    const parts = readDerChildren(ext);
    if (parts[0]?.encoded.equals(der.oid(OID.subjectKeyIdentifier))) {
      const value = parts[parts.length - 1]!;
      return { name: Buffer.from(subject.encoded), keyIdentifier: Buffer.from(readDer(value.contents).contents) };
    }
  }
  return { name: Buffer.from(subject.encoded), keyIdentifier: keyIdentifier(Buffer.from(spki.encoded)) };
}

/** 16 random bytes with the top bit clear: positive (Go refuses negative serials) and never zero. */
function randomSerial(): Buffer {
  let serial: Buffer;
  do {
    serial = randomBytes(16);
    serial[0] = serial[0]! & 0x7f;
  } while (serial.every((byte) => byte === 0));
  return serial;
}

function wholeSeconds(ms: number): Date {
  return new Date(Math.floor(ms / 1000) * 1000);
}

/** X509Certificate's subject or issuer ("O=x\nCN=y") on one line, for messages. */
export function oneLineName(name: string): string {
  return name.replaceAll('\n', ', ');
}

export function toPem(label: string, derBytes: Uint8Array): string {
  const lines = Buffer.from(derBytes).toString('base64').match(/.{1,64}/g) ?? [];
  return `-----BEGIN ${label}-----\n${lines.join('\n')}\n-----END ${label}-----\n`;
}

/**
 * Signs a certificate for `subjectKey.publicKey`: with `issuer`'s key, or self-signed with `subjectKey.privateKey`
 * when there is no issuer (a root CA). notBefore is `now` minus CLOCK_SKEW_ALLOWANCE_MS; notAfter is `now` plus the
 * validity, but never later than the issuer's own notAfter: a chain is only as valid as its shortest link, and the
 * renewal rule then sees the real end of the certificate.
 */
export function signCertificate(request: CertificateRequest, subjectKey: KeyPair, now: Date, issuer?: CertificateAuthority): X509Certificate {
  requireP256(subjectKey.publicKey, 'the subject key');
  const signingKey = issuer ? issuer.privateKey : subjectKey.privateKey;
  requireP256(signingKey, 'the signing key');
  if (issuer) {
    if (!issuer.certificate.ca) throw new TypeError(`the issuer ${oneLineName(issuer.certificate.subject)} is not a CA`);
    if (!issuer.certificate.checkPrivateKey(issuer.privateKey)) throw new TypeError(`the issuer's private key does not belong to ${oneLineName(issuer.certificate.subject)}`);
  }
  if (!(Number.isFinite(request.validityDays) && request.validityDays > 0)) throw new RangeError(`validityDays must be positive: ${request.validityDays}`);

  const spki = subjectKey.publicKey.export({ type: 'spki', format: 'der' });
  const subjectName = encodeName(request.subject);
  const subjectKeyId = keyIdentifier(spki);
  const { name: issuerName, keyIdentifier: authorityKeyId } = issuer ? issuerFields(issuer.certificate) : { name: subjectName, keyIdentifier: subjectKeyId };

  const notBefore = wholeSeconds(now.getTime() - CLOCK_SKEW_ALLOWANCE_MS);
  let notAfter = wholeSeconds(now.getTime() + request.validityDays * DAY_MS);
  if (issuer && issuer.certificate.validToDate.getTime() < notAfter.getTime()) notAfter = issuer.certificate.validToDate;
  if (issuer && notAfter.getTime() <= now.getTime()) {
    throw new RangeError(`the issuer ${oneLineName(issuer.certificate.subject)} expired on ${notAfter.toISOString()}`);
  }

  const extensions = [
    // pathLenConstraint 0: these CAs sign leaf certificates only, never another CA.
    extension(OID.basicConstraints, true, request.isCA ? der.sequence(der.boolean(true), der.integer(0)) : der.sequence()),
    extension(OID.keyUsage, true, keyUsageBits(request.isCA)),
  ];
  if (request.extendedKeyUsage.length > 0) {
    extensions.push(extension(OID.extKeyUsage, false, der.sequence(...request.extendedKeyUsage.map((usage) => der.oid(OID[usage])))));
  }
  if (request.dnsNames.length + request.ipAddresses.length > 0) {
    // Not critical: the subject name is not empty (RFC 5280 4.2.1.6).
    extensions.push(extension(OID.subjectAltName, false, subjectAltNames(request.dnsNames, request.ipAddresses)));
  }
  extensions.push(extension(OID.subjectKeyIdentifier, false, der.octetString(subjectKeyId)));
  extensions.push(extension(OID.authorityKeyIdentifier, false, der.sequence(der.implicit(0, authorityKeyId)))); // keyIdentifier [0]

  // ecdsa-with-SHA256 takes no parameters: the field is absent, not NULL (RFC 5758 3.2).
  const signatureAlgorithm = der.sequence(der.oid(OID.ecdsaWithSHA256));
  const tbsCertificate = der.sequence(
    der.explicit(0, der.integer(2)), // v3
    der.integer(randomSerial()),
    signatureAlgorithm,
    issuerName,
    der.sequence(der.time(notBefore), der.time(notAfter)),
    subjectName,
    spki,
    der.explicit(3, der.sequence(...extensions)),
  );
  // dsaEncoding 'der' yields an ECDSA-Sig-Value SEQUENCE { r, s }: exactly what X.509 puts in the BIT STRING.
  const signature = sign('sha256', tbsCertificate, { key: signingKey, dsaEncoding: 'der' });
  const certificate = new X509Certificate(der.sequence(tbsCertificate, signatureAlgorithm, der.bitString(signature)));
  // A cheap self-check that the DER above is what OpenSSL reads it as.
  const signerPublicKey = issuer ? issuer.certificate.publicKey : subjectKey.publicKey;
  if (!certificate.verify(signerPublicKey)) throw new Error(`the certificate just signed for ${request.subject.commonName} does not verify`);
  return certificate;
}

/** A new P-256 key and a certificate for it, signed by `issuer`, or self-signed without one. */
export function issueCertificate(request: CertificateRequest, now: Date, issuer?: CertificateAuthority): IssuedCertificate {
  const keyPair = generateKeyPair();
  const certificate = signCertificate(request, keyPair, now, issuer);
  return {
    certificate,
    privateKey: keyPair.privateKey,
    certificatePem: toPem('CERTIFICATE', certificate.raw),
    privateKeyPem: keyPair.privateKey.export({ type: 'pkcs8', format: 'pem' }).toString(),
  };
}

/**
 * A CA from its PEM certificate and key, as a Secret holds them. Throws when either does not parse, the key is not
 * the certificate's, or the certificate is not a CA.
 */
export function loadCertificateAuthority(certificatePem: string, privateKeyPem: string): CertificateAuthority {
  const certificate = new X509Certificate(certificatePem);
  const privateKey = createPrivateKey(privateKeyPem);
  if (!certificate.ca) throw new TypeError(`${oneLineName(certificate.subject)} is not a CA`);
  if (!certificate.checkPrivateKey(privateKey)) throw new TypeError(`the private key does not belong to ${oneLineName(certificate.subject)}`);
  return { certificate, privateKey };
}

/** The PEM blocks with this label in a text, e.g. each certificate of a CA bundle. */
export function pemBlocks(text: string, label = 'CERTIFICATE'): string[] {
  const pattern = new RegExp(`-----BEGIN ${label}-----[\\s\\S]*?-----END ${label}-----`, 'g');
  return text.match(pattern) ?? [];
}
