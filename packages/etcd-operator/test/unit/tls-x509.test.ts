// The DER writer and the certificate builder: byte-exact encodings against known vectors, then certificates read
// back by Node's X509Certificate (OpenSSL) and, when it is on PATH, by the openssl command.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { createHash, createPrivateKey, generateKeyPairSync, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, describe, test } from 'node:test';
import { promisify } from 'node:util';
import {
  CLOCK_SKEW_ALLOWANCE_MS,
  OID,
  der,
  generateKeyPair,
  ipAddressBytes,
  issueCertificate,
  loadCertificateAuthority,
  pemBlocks,
  readDer,
  readDerChildren,
  signCertificate,
  type CertificateAuthority,
  type CertificateRequest,
  type DerElement,
  type IssuedCertificate,
} from '../../src/tls/x509.ts';

const run = promisify(execFile);
const OPENSSL_MISSING = spawnSync('openssl', ['version']).status === 0 ? false : 'environment: openssl is not on PATH: the openssl checks are skipped';

const DAY_MS = 86_400_000;
const hex = (bytes: Uint8Array): string => Buffer.from(bytes).toString('hex');
const NOW = new Date('2026-03-01T12:00:00.250Z');

function request(over: Partial<CertificateRequest> = {}): CertificateRequest {
  return { subject: { commonName: 'leaf' }, isCA: false, extendedKeyUsage: [], dnsNames: [], ipAddresses: [], validityDays: 365, ...over };
}

const caRequest = (commonName = 'test-ca', validityDays = 3650): CertificateRequest =>
  request({ subject: { commonName, organization: 'unit' }, isCA: true, validityDays });

const asAuthority = (issued: IssuedCertificate): CertificateAuthority => ({ certificate: issued.certificate, privateKey: issued.privateKey });

// --- reading certificates back, field by field -------------------------------------------------------------

interface Tbs {
  serial: DerElement;
  notBefore: DerElement;
  notAfter: DerElement;
  /** extension OID → { critical, value (the extnValue contents) } */
  extensions: Map<string, { critical: boolean; value: Buffer }>;
}

function oidOf(element: DerElement): string {
  const bytes = element.contents;
  const arcs = [Math.floor(bytes[0]! / 40), bytes[0]! % 40];
  let value = 0;
  for (const byte of bytes.subarray(1)) {
    value = value * 128 + (byte & 0x7f);
    if ((byte & 0x80) === 0) {
      arcs.push(value);
      value = 0;
    }
  }
  return arcs.join('.');
}

function readTbs(certificate: X509Certificate): Tbs {
  const [tbs] = readDerChildren(readDer(certificate.raw));
  const fields = readDerChildren(tbs!);
  assert.equal(fields[0]!.tag, 0xa0, 'v3 certificates start with an explicit version');
  const [notBefore, notAfter] = readDerChildren(fields[4]!);
  const extensions = new Map<string, { critical: boolean; value: Buffer }>();
  for (const ext of readDerChildren(readDerChildren(fields.find((f) => f.tag === 0xa3)!)[0]!)) {
    const parts = readDerChildren(ext);
    extensions.set(oidOf(parts[0]!), { critical: parts.length === 3 && parts[1]!.contents[0] === 0xff, value: parts[parts.length - 1]!.contents });
  }
  return { serial: fields[1]!, notBefore: notBefore!, notAfter: notAfter!, extensions };
}

function subjectKeyId(certificate: X509Certificate): string {
  return hex(readDer(readTbs(certificate).extensions.get(OID.subjectKeyIdentifier)!.value).contents);
}

function authorityKeyId(certificate: X509Certificate): string {
  const [keyId] = readDerChildren(readDer(readTbs(certificate).extensions.get(OID.authorityKeyIdentifier)!.value));
  assert.equal(keyId!.tag, 0x80, 'authorityKeyIdentifier holds keyIdentifier [0]');
  return hex(keyId!.contents);
}

// --- the DER writer ---------------------------------------------------------------------------------------------

describe('der', () => {
  test('object identifiers: ecdsa-with-SHA256, extKeyUsage serverAuth, a large arc', () => {
    assert.equal(hex(der.oid('1.2.840.10045.4.3.2')), '06082a8648ce3d040302');
    assert.equal(hex(der.oid(OID.serverAuth)), '06082b06010505070301');
    assert.equal(hex(der.oid('2.5.29.37')), '0603551d25');
    assert.equal(hex(der.oid('2.999.3')), '0603883703'); // first two arcs 2*40+999 = 1079 take two bytes
    assert.throws(() => der.oid('1'), /not an object identifier/);
    assert.throws(() => der.oid('1.40'), /out of range/);
  });

  test('integers are minimal and positive: a 0x00 only in front of a set top bit', () => {
    assert.equal(hex(der.integer(0)), '020100');
    assert.equal(hex(der.integer(2)), '020102');
    assert.equal(hex(der.integer(127)), '02017f');
    assert.equal(hex(der.integer(128)), '02020080');
    assert.equal(hex(der.integer(256)), '02020100');
    assert.equal(hex(der.integer(Buffer.from([0, 0, 0x7f]))), '02017f');
    assert.equal(hex(der.integer(Buffer.from([0xff, 0x01]))), '020300ff01');
    assert.equal(hex(der.integer(Buffer.alloc(3))), '020100');
    assert.throws(() => der.integer(-1), /out of range/);
  });

  test('lengths: short form below 128, then long form', () => {
    assert.equal(hex(der.octetString(Buffer.alloc(127))).slice(0, 4), '047f');
    assert.equal(hex(der.octetString(Buffer.alloc(128))).slice(0, 6), '048180');
    assert.equal(hex(der.octetString(Buffer.alloc(300))).slice(0, 8), '0482012c');
    assert.equal(der.octetString(Buffer.alloc(70_000)).length, 70_000 + 5);
  });

  test('sets are sorted by encoding; empty sequences and booleans are DER', () => {
    assert.equal(hex(der.set(der.integer(2), der.integer(1))), '3106020101020102');
    assert.equal(hex(der.sequence()), '3000');
    assert.equal(hex(der.boolean(true)), '0101ff');
    assert.equal(hex(der.boolean(false)), '010100');
  });

  test('times: UTCTime before 2050, GeneralizedTime from 2050, whole seconds in UTC', () => {
    assert.equal(der.time(new Date('2049-12-31T23:59:59Z')).toString('latin1').slice(2), '491231235959Z');
    assert.equal(der.time(new Date('2049-12-31T23:59:59Z'))[0], 0x17);
    assert.equal(der.time(new Date('2050-01-01T00:00:00Z')).toString('latin1').slice(2), '20500101000000Z');
    assert.equal(der.time(new Date('2050-01-01T00:00:00Z'))[0], 0x18);
    assert.equal(der.time(new Date('1999-02-03T04:05:06.789Z')).toString('latin1').slice(2), '990203040506Z');
    assert.equal(der.time(new Date('1949-12-31T23:59:59Z'))[0], 0x18);
  });

  test('bit strings carry their unused-bit count; context tags', () => {
    assert.equal(hex(der.bitString(Buffer.from([0x06]), 1)), '03020106');
    assert.equal(hex(der.bitString(Buffer.from([0xab]))), '030200ab');
    assert.throws(() => der.bitString(Buffer.from([0]), 8), /unused-bits/);
    assert.equal(hex(der.explicit(0, der.integer(2))), 'a003020102');
    assert.equal(hex(der.implicit(2, Buffer.from('a'))), '820161');
    assert.equal(hex(der.ia5String('localhost')), '16096c6f63616c686f7374');
    assert.throws(() => der.ia5String('bücher.example'), /IA5String/);
    assert.throws(() => der.explicit(31, der.sequence()), /out of range/);
  });

  test('the reader reads what the writer wrote, and refuses what runs past the end', () => {
    const encoded = der.sequence(der.integer(5), der.octetString(Buffer.alloc(200, 1)), der.explicit(3, der.sequence()));
    const children = readDerChildren(readDer(encoded));
    assert.deepEqual(
      children.map((c) => [c.tag, c.contents.length]),
      [
        [0x02, 1],
        [0x04, 200],
        [0xa3, 2],
      ],
    );
    assert.throws(() => readDer(encoded.subarray(0, 10)), /runs past the end/);
    assert.throws(() => readDer(Buffer.from([0x30, 0x80, 0, 0])), /indefinite/);
  });
});

describe('ipAddressBytes', () => {
  test('IPv4 and IPv6, with :: and an embedded IPv4 address', () => {
    assert.equal(hex(ipAddressBytes('127.0.0.1')), '7f000001');
    assert.equal(hex(ipAddressBytes('::1')), '00000000000000000000000000000001');
    assert.equal(hex(ipAddressBytes('::')), '00000000000000000000000000000000');
    assert.equal(hex(ipAddressBytes('1::')), '00010000000000000000000000000000');
    assert.equal(hex(ipAddressBytes('2001:db8::8:800:200c:417a')), '20010db80000000000080800200c417a');
    assert.equal(hex(ipAddressBytes('::ffff:192.0.2.1')), '00000000000000000000ffffc0000201');
    assert.equal(hex(ipAddressBytes('fd00:1:2:3:4:5:6:7')), 'fd000001000200030004000500060007');
  });

  test('refuses names, zones and malformed literals', () => {
    assert.throws(() => ipAddressBytes('localhost'), /not an IP address/);
    assert.throws(() => ipAddressBytes('fe80::1%eth0'), /not an IP address/);
    assert.throws(() => ipAddressBytes('1.2.3.256'), /not an IP address/);
    assert.throws(() => ipAddressBytes('1:::2'), /not an IP address/);
  });
});

// --- certificates ---------------------------------------------------------------------------------------------

describe('issueCertificate', () => {
  const ca = issueCertificate(caRequest(), NOW);
  const leaf = issueCertificate(
    request({
      subject: { commonName: 'db-0' },
      extendedKeyUsage: ['serverAuth', 'clientAuth'],
      dnsNames: ['db-0.db.ns.svc', 'db-0.db.ns.svc.cluster.local', 'localhost', '*.db.ns.svc'],
      ipAddresses: ['127.0.0.1', '::1', '2001:db8::1'],
    }),
    NOW,
    asAuthority(ca),
  );

  test('a self-signed CA: ca flag, names, keyCertSign|cRLSign, pathlen 0, no EKU, its own key identifier both ways', () => {
    const cert = ca.certificate;
    assert.equal(cert.ca, true);
    assert.equal(cert.subject, 'O=unit\nCN=test-ca');
    assert.equal(cert.issuer, cert.subject);
    assert.ok(cert.verify(cert.publicKey), 'self-signed');
    assert.ok(cert.checkIssued(cert));
    assert.equal(cert.keyUsage, undefined, 'no extendedKeyUsage: a CA is not limited to a purpose');
    assert.equal(cert.subjectAltName, undefined);
    assert.equal(cert.signatureAlgorithm, 'ecdsa-with-SHA256');
    const { extensions } = readTbs(cert);
    assert.deepEqual(extensions.get(OID.basicConstraints), { critical: true, value: der.sequence(der.boolean(true), der.integer(0)) });
    assert.deepEqual(extensions.get(OID.keyUsage), { critical: true, value: der.bitString(Buffer.from([0x06]), 1) });
    assert.equal(extensions.has(OID.extKeyUsage), false);
    assert.equal(subjectKeyId(cert), authorityKeyId(cert));
  });

  test('the subject key identifier is SHA-1 of the public key bits (RFC 5280 method 1)', () => {
    const spki = ca.certificate.publicKey.export({ type: 'spki', format: 'der' });
    const point = readDerChildren(readDer(spki))[1]!.contents.subarray(1);
    assert.equal(point.length, 65, 'an uncompressed P-256 point');
    assert.equal(subjectKeyId(ca.certificate), createHash('sha1').update(point).digest('hex'));
  });

  test('a leaf: signed by the CA, its names, IPs and EKUs, digitalSignature only, not a CA', () => {
    const cert = leaf.certificate;
    assert.equal(cert.ca, false);
    assert.ok(cert.verify(ca.certificate.publicKey));
    assert.equal(cert.verify(cert.publicKey), false, 'not self-signed');
    assert.ok(cert.checkIssued(ca.certificate));
    assert.equal(cert.issuer, ca.certificate.subject);
    assert.equal(cert.subject, 'CN=db-0');
    assert.deepEqual(cert.keyUsage, [OID.serverAuth, OID.clientAuth]);
    for (const host of ['db-0.db.ns.svc', 'db-0.db.ns.svc.cluster.local', 'localhost', 'db-7.db.ns.svc']) {
      assert.ok(cert.checkHost(host, { subject: 'never' }), host);
    }
    assert.equal(cert.checkHost('db-0.other.ns.svc'), undefined);
    assert.equal(cert.checkHost('a.b.db.ns.svc'), undefined, 'a wildcard covers one label only');
    for (const ip of ['127.0.0.1', '::1', '2001:db8::1', '2001:0db8:0:0:0:0:0:1']) assert.equal(cert.checkIP(ip), ip);
    assert.equal(cert.checkIP('127.0.0.2'), undefined);
    const { extensions } = readTbs(cert);
    assert.deepEqual(extensions.get(OID.basicConstraints), { critical: true, value: der.sequence() });
    assert.deepEqual(extensions.get(OID.keyUsage), { critical: true, value: der.bitString(Buffer.from([0x80]), 7) });
    assert.equal(extensions.get(OID.extKeyUsage)!.critical, false);
    assert.equal(extensions.get(OID.subjectAltName)!.critical, false);
    assert.equal(authorityKeyId(cert), subjectKeyId(ca.certificate), "the leaf's authority key identifier is the CA's subject key identifier");
  });

  test('validity: notBefore 5 minutes before now, notAfter now plus the validity, whole seconds', () => {
    const whole = Math.floor(NOW.getTime() / 1000) * 1000;
    assert.equal(leaf.certificate.validFromDate.getTime(), whole - CLOCK_SKEW_ALLOWANCE_MS);
    assert.equal(leaf.certificate.validToDate.getTime(), whole + 365 * DAY_MS);
    assert.equal(ca.certificate.validToDate.getTime(), whole + 3650 * DAY_MS);
    assert.equal(readTbs(leaf.certificate).notAfter.tag, 0x17, 'UTCTime before 2050');
  });

  test('past 2049, notAfter is a GeneralizedTime that parsers read back to the second', () => {
    const late = issueCertificate(caRequest('late-ca'), new Date('2045-06-01T00:00:00Z'));
    const { notBefore, notAfter } = readTbs(late.certificate);
    assert.equal(notBefore.tag, 0x17);
    assert.equal(notAfter.tag, 0x18);
    assert.equal(notAfter.contents.toString('latin1'), '20550530000000Z');
    assert.equal(late.certificate.validToDate.toISOString(), '2055-05-30T00:00:00.000Z');
  });

  test('a leaf never outlives its issuer: notAfter is clamped to the CA', () => {
    const shortCA = issueCertificate(caRequest('short-ca', 30), NOW);
    const clamped = issueCertificate(request(), NOW, asAuthority(shortCA));
    assert.equal(clamped.certificate.validToDate.getTime(), shortCA.certificate.validToDate.getTime());
    assert.throws(() => issueCertificate(request(), new Date(NOW.getTime() + 31 * DAY_MS), asAuthority(shortCA)), /expired/);
  });

  test('serials: positive, minimally encoded, at most 16 bytes of magnitude, all different', () => {
    const key = generateKeyPair();
    const serials = new Set<string>();
    for (let i = 0; i < 200; i++) {
      const cert = signCertificate(request(), key, NOW, asAuthority(ca));
      const { contents } = readTbs(cert).serial;
      assert.equal(contents[0]! & 0x80, 0, 'positive');
      assert.ok(!(contents[0] === 0 && (contents.length === 1 || (contents[1]! & 0x80) === 0)), `minimal and non-zero: ${hex(contents)}`);
      assert.ok(contents.length <= 16, hex(contents));
      assert.ok(BigInt(`0x${cert.serialNumber}`) > 0n);
      serials.add(cert.serialNumber);
    }
    assert.equal(serials.size, 200);
  });

  test('the key: P-256, PKCS#8 PEM, the pair of the certificate', () => {
    assert.match(leaf.privateKeyPem, /^-----BEGIN PRIVATE KEY-----\n/);
    const key = createPrivateKey(leaf.privateKeyPem);
    assert.equal(key.asymmetricKeyDetails?.namedCurve, 'prime256v1');
    assert.ok(leaf.certificate.checkPrivateKey(key));
    assert.equal(leaf.certificate.checkPrivateKey(ca.privateKey), false);
    assert.deepEqual(new X509Certificate(leaf.certificatePem).raw, leaf.certificate.raw);
    assert.match(leaf.certificatePem, /^-----BEGIN CERTIFICATE-----\n([A-Za-z0-9+/=]{64}\n)*[A-Za-z0-9+/=]{1,64}\n-----END CERTIFICATE-----\n$/);
  });

  test('no SAN extension when there are no names (a client certificate)', () => {
    const client = issueCertificate(request({ subject: { commonName: 'db-client' }, extendedKeyUsage: ['clientAuth'] }), NOW, asAuthority(ca));
    assert.equal(client.certificate.subjectAltName, undefined);
    assert.deepEqual(client.certificate.keyUsage, [OID.clientAuth]);
    assert.equal(readTbs(client.certificate).extensions.has(OID.subjectAltName), false);
  });

  test('a CA loaded back from PEM signs leaves that chain to it', () => {
    const loaded = loadCertificateAuthority(ca.certificatePem, ca.privateKeyPem);
    const again = issueCertificate(request(), NOW, loaded);
    assert.ok(again.certificate.verify(ca.certificate.publicKey));
    assert.ok(again.certificate.checkIssued(ca.certificate));
    assert.throws(() => loadCertificateAuthority(leaf.certificatePem, leaf.privateKeyPem), /not a CA/);
    assert.throws(() => loadCertificateAuthority(ca.certificatePem, leaf.privateKeyPem), /does not belong/);
  });

  test('refuses what the fixed profile does not cover', () => {
    const rsa = generateKeyPairSync('rsa', { modulusLength: 1024 });
    const p384 = generateKeyPairSync('ec', { namedCurve: 'secp384r1' });
    assert.throws(() => signCertificate(request(), rsa, NOW, asAuthority(ca)), /P-256.*not rsa/);
    assert.throws(() => signCertificate(request(), p384, NOW, asAuthority(ca)), /P-256.*secp384r1/);
    assert.throws(() => issueCertificate(request(), NOW, asAuthority(leaf)), /not a CA/);
    assert.throws(() => issueCertificate(request(), NOW, { certificate: ca.certificate, privateKey: leaf.privateKey }), /does not belong/);
    assert.throws(() => issueCertificate(request({ subject: { commonName: 'x'.repeat(65) } }), NOW), /commonName must have 1 to 64/);
    assert.throws(() => issueCertificate(request({ dnsNames: ['bad name'] }), NOW), /not a DNS name/);
    assert.throws(() => issueCertificate(request({ dnsNames: ['a.*.b'] }), NOW), /not a DNS name/);
    assert.throws(() => issueCertificate(request({ ipAddresses: ['10.0.0'] }), NOW), /not an IP address/);
    assert.throws(() => issueCertificate(request({ validityDays: 0 }), NOW), /validityDays/);
  });

  test('pemBlocks splits a bundle', () => {
    const other = issueCertificate(caRequest('other-ca'), NOW);
    const blocks = pemBlocks(`junk\n${ca.certificatePem}\n${other.certificatePem}${leaf.privateKeyPem}`);
    assert.deepEqual(
      blocks.map((b) => new X509Certificate(b).subject),
      ['O=unit\nCN=test-ca', 'O=unit\nCN=other-ca'],
    );
    assert.equal(pemBlocks(leaf.privateKeyPem, 'PRIVATE KEY').length, 1);
  });
});

// --- openssl, when present ------------------------------------------------------------------------------------

describe('openssl reads and verifies the certificates', { skip: OPENSSL_MISSING }, () => {
  let dir: string;
  const ca = issueCertificate(caRequest(), new Date());
  const server = issueCertificate(
    request({ subject: { commonName: 'db-0' }, extendedKeyUsage: ['serverAuth', 'clientAuth'], dnsNames: ['db-0.db.ns.svc', 'localhost'], ipAddresses: ['127.0.0.1', '::1'] }),
    new Date(),
    asAuthority(ca),
  );
  const client = issueCertificate(request({ subject: { commonName: 'db-client' }, extendedKeyUsage: ['clientAuth'] }), new Date(), asAuthority(ca));
  const otherCA = issueCertificate(caRequest('other-ca'), new Date());

  before(async () => {
    dir = await mkdtemp(join(tmpdir(), 'quorum-tls-x509-'));
    await writeFile(join(dir, 'ca.crt'), ca.certificatePem);
    await writeFile(join(dir, 'other-ca.crt'), otherCA.certificatePem);
    await writeFile(join(dir, 'server.crt'), server.certificatePem);
    await writeFile(join(dir, 'server.key'), server.privateKeyPem);
    await writeFile(join(dir, 'client.crt'), client.certificatePem);
  });
  after(async () => {
    await rm(dir, { recursive: true, force: true });
  });

  const openssl = async (...args: string[]): Promise<string> => (await run('openssl', args, { cwd: dir, timeout: 15_000 })).stdout;

  test('openssl verify -x509_strict: each leaf against its CA and purpose, and the CA itself', async () => {
    assert.equal((await openssl('verify', '-x509_strict', '-purpose', 'sslserver', '-CAfile', 'ca.crt', 'server.crt')).trim(), 'server.crt: OK');
    assert.equal((await openssl('verify', '-x509_strict', '-purpose', 'sslclient', '-CAfile', 'ca.crt', 'server.crt')).trim(), 'server.crt: OK');
    assert.equal((await openssl('verify', '-x509_strict', '-purpose', 'sslclient', '-CAfile', 'ca.crt', 'client.crt')).trim(), 'client.crt: OK');
    assert.equal((await openssl('verify', '-x509_strict', '-CAfile', 'ca.crt', 'ca.crt')).trim(), 'ca.crt: OK');
  });

  test('openssl verify refuses the wrong CA and the wrong purpose', async () => {
    await assert.rejects(openssl('verify', '-CAfile', 'other-ca.crt', 'server.crt'), /unable to get local issuer certificate/);
    await assert.rejects(openssl('verify', '-purpose', 'sslserver', '-CAfile', 'ca.crt', 'client.crt'), /unsuitable certificate purpose/);
  });

  test('openssl x509 -text shows the profile', async () => {
    const leafText = await openssl('x509', '-in', 'server.crt', '-noout', '-text');
    assert.match(leafText, /Version: 3 \(0x2\)/);
    assert.match(leafText, /Signature Algorithm: ecdsa-with-SHA256/);
    assert.match(leafText, /NIST CURVE: P-256/);
    assert.match(leafText, /Issuer: O = unit, CN = test-ca/);
    assert.match(leafText, /Subject: CN = db-0/);
    assert.match(leafText, /X509v3 Basic Constraints: critical\n\s+CA:FALSE/);
    assert.match(leafText, /X509v3 Key Usage: critical\n\s+Digital Signature\n/);
    assert.match(leafText, /X509v3 Extended Key Usage: \n\s+TLS Web Server Authentication, TLS Web Client Authentication/);
    assert.match(leafText, /DNS:db-0\.db\.ns\.svc, DNS:localhost, IP Address:127\.0\.0\.1, IP Address:0:0:0:0:0:0:0:1/);
    assert.match(leafText, /X509v3 Subject Key Identifier/);
    assert.match(leafText, /X509v3 Authority Key Identifier/);
    const caText = await openssl('x509', '-in', 'ca.crt', '-noout', '-text');
    assert.match(caText, /X509v3 Basic Constraints: critical\n\s+CA:TRUE, pathlen:0/);
    assert.match(caText, /X509v3 Key Usage: critical\n\s+Certificate Sign, CRL Sign\n/);
    assert.doesNotMatch(caText, /Extended Key Usage/);
  });

  test('openssl pkey reads the PKCS#8 key, and it matches the certificate', async () => {
    const fromKey = await openssl('pkey', '-in', 'server.key', '-pubout');
    const fromCert = await openssl('x509', '-in', 'server.crt', '-noout', '-pubkey');
    assert.equal(fromKey, fromCert);
  });

  test('a CA made by openssl, with a PrintableString name, signs a leaf that openssl verifies (the issuer name is copied byte for byte)', async () => {
    await openssl(
      'req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', 'foreign-ca.key', '-out', 'foreign-ca.crt',
      '-days', '30', '-subj', '/C=DE/O=Foreign/CN=foreign-ca', '-addext', 'basicConstraints=critical,CA:TRUE',
      '-addext', 'keyUsage=critical,keyCertSign,cRLSign',
    );
    const foreign = loadCertificateAuthority(await readFile(join(dir, 'foreign-ca.crt'), 'utf8'), await readFile(join(dir, 'foreign-ca.key'), 'utf8'));
    const signed = issueCertificate(request({ extendedKeyUsage: ['serverAuth'], dnsNames: ['localhost'] }), new Date(), foreign);
    assert.equal(signed.certificate.issuer, foreign.certificate.subject);
    assert.ok(signed.certificate.checkIssued(foreign.certificate));
    await writeFile(join(dir, 'foreign-leaf.crt'), signed.certificatePem);
    assert.equal((await openssl('verify', '-x509_strict', '-CAfile', 'foreign-ca.crt', 'foreign-leaf.crt')).trim(), 'foreign-leaf.crt: OK');
  });
});
