// The runtime's X.509 issuer (the one in Quorum's code), checked by node:crypto's X509Certificate and by `openssl verify`: what a CA and each
// kind of leaf say (usages, SANs, validity, the curve), that a chain verifies for the purpose it was made for and
// not for another, that a leaf's issuer name is its CA's subject byte for byte (Go compares the bytes), and when a
// certificate needs rotation.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { createPrivateKey, X509Certificate } from 'node:crypto';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { after, before, test } from 'node:test';
import { generateCertificates, nodeFlags } from '../../src/webhook/certs.ts';
import { createCertificateAuthority, issueCertificate, issueLeafCertificate, loadCertificateAuthority, needsRotation, type CertificateAuthority, type IssuedCertificate } from '../../src/webhook/x509.ts';

const NOW = new Date('2026-03-01T12:00:00.500Z');
const DAY = 86_400_000;
let dir = '';
let ca: IssuedCertificate;
let authority: CertificateAuthority;

before(async () => {
  dir = await mkdtemp(join(tmpdir(), 'quorum-kit-x509-'));
  ca = await createCertificateAuthority({ commonName: 'db-peer-ca', organization: 'team-a' }, 3650, NOW);
  authority = loadCertificateAuthority(ca.certificatePem, ca.privateKeyPem);
});
after(() => rm(dir, { recursive: true, force: true }));

/** `openssl verify` at NOW for `purpose` (sslserver, sslclient): its exit status and output. */
async function opensslVerify(name: string, caPem: string, leafPem: string, purpose: string): Promise<{ ok: boolean; output: string }> {
  await writeFile(join(dir, `${name}-ca.pem`), caPem);
  await writeFile(join(dir, `${name}.pem`), leafPem);
  const args = ['verify', '-attime', String(Math.floor(NOW.getTime() / 1000)), '-purpose', purpose, '-CAfile', join(dir, `${name}-ca.pem`), join(dir, `${name}.pem`)];
  try {
    const { stdout, stderr } = await promisify(execFile)('openssl', args);
    return { ok: true, output: stdout + stderr };
  } catch (err) {
    const e = err as { stdout?: string; stderr?: string };
    return { ok: false, output: `${e.stdout ?? ''}${e.stderr ?? ''}` };
  }
}

/** The raw bytes of a certificate's issuer and subject Names (tbsCertificate fields 3 and 5, after the version). */
function rawNames(cert: X509Certificate): { issuer: Buffer; subject: Buffer } {
  const children = (der: Buffer): Buffer[] => {
    const out: Buffer[] = [];
    let at = headerLength(der);
    while (at < der.length) {
      const length = headerLength(der.subarray(at)) + contentLength(der.subarray(at));
      out.push(der.subarray(at, at + length));
      at += length;
    }
    return out;
  };
  const tbs = children(cert.raw)[0]!;
  const fields = children(tbs.subarray(0, headerLength(tbs) + contentLength(tbs)));
  const first = fields[0]![0] === 0xa0 ? 1 : 0;
  return { issuer: fields[first + 2]!, subject: fields[first + 4]! };
}
const headerLength = (der: Buffer): number => (der[1]! < 0x80 ? 2 : 2 + (der[1]! & 0x7f));
const contentLength = (der: Buffer): number => (der[1]! < 0x80 ? der[1]! : der.subarray(2, 2 + (der[1]! & 0x7f)).reduce((n, b) => n * 256 + b, 0));

test('a CA: self-signed, a CA for leaves only, ECDSA P-256, O and CN, valid from five minutes before now', () => {
  const cert = ca.certificate;
  assert.equal(cert.ca, true);
  assert.equal(cert.subject, 'O=team-a\nCN=db-peer-ca');
  assert.equal(cert.issuer, cert.subject);
  assert.ok(cert.verify(cert.publicKey));
  assert.equal(cert.publicKey.asymmetricKeyDetails?.namedCurve, 'prime256v1');
  assert.equal(cert.validFromDate.toISOString(), '2026-03-01T11:55:00.000Z');
  assert.equal(cert.validToDate.getTime(), Math.floor((NOW.getTime() + 3650 * DAY) / 1000) * 1000);
  assert.match(ca.certificatePem, /^-----BEGIN CERTIFICATE-----\n[\s\S]+\n-----END CERTIFICATE-----\n$/);
  assert.match(ca.privateKeyPem, /^-----BEGIN PRIVATE KEY-----/);
  // The first byte is 0x01-0x7f: positive and minimal (its first hex digit may be 0, as in 07E9…).
  assert.ok(/^(0[1-9A-F]|[1-7][0-9A-F])/i.test(cert.serialNumber), `a positive, minimal serial: ${cert.serialNumber}`);
});

test('a server leaf: its DNS and IP names, serverAuth only, signed by the CA, and openssl verifies it as a server but not as a client', async () => {
  const leaf = await issueLeafCertificate({ commonName: 'db-0', usage: 'server', dnsNames: ['db-0.db.ns.svc', '*.db.ns.svc'], ipAddresses: ['10.0.0.7', 'fd00::7'], validityDays: 365 }, authority, NOW);
  const cert = leaf.certificate;
  assert.equal(cert.ca, false);
  assert.equal(cert.subjectAltName, 'DNS:db-0.db.ns.svc, DNS:*.db.ns.svc, IP Address:10.0.0.7, IP Address:FD00:0:0:0:0:0:0:7');
  assert.deepEqual(cert.keyUsage, ['1.3.6.1.5.5.7.3.1']);
  assert.ok(cert.checkIssued(ca.certificate));
  assert.ok(cert.verify(ca.certificate.publicKey));
  assert.ok(cert.checkHost('db-0.db.ns.svc'));
  assert.ok(cert.checkIP('10.0.0.7'));
  assert.ok(cert.checkPrivateKey(leaf.privateKey));
  assert.equal((await opensslVerify('server', ca.certificatePem, leaf.certificatePem, 'sslserver')).ok, true);
  const asClient = await opensslVerify('server-as-client', ca.certificatePem, leaf.certificatePem, 'sslclient');
  assert.equal(asClient.ok, false, asClient.output);
  assert.match(asClient.output, /unsuitable certificate purpose/);
});

test('a client leaf is for clients only; a peer leaf is for both', async () => {
  const client = await issueLeafCertificate({ commonName: 'db-client', usage: 'client', validityDays: 365 }, authority, NOW);
  assert.deepEqual(client.certificate.keyUsage, ['1.3.6.1.5.5.7.3.2']);
  assert.equal(client.certificate.subjectAltName, undefined);
  assert.equal((await opensslVerify('client', ca.certificatePem, client.certificatePem, 'sslclient')).ok, true);
  assert.equal((await opensslVerify('client-as-server', ca.certificatePem, client.certificatePem, 'sslserver')).ok, false);
  const peer = await issueLeafCertificate({ commonName: 'db-1', usage: 'peer', dnsNames: ['db-1.db.ns.svc'], validityDays: 365 }, authority, NOW);
  assert.deepEqual(peer.certificate.keyUsage?.sort(), ['1.3.6.1.5.5.7.3.1', '1.3.6.1.5.5.7.3.2']);
  assert.equal((await opensslVerify('peer-server', ca.certificatePem, peer.certificatePem, 'sslserver')).ok, true);
  assert.equal((await opensslVerify('peer-client', ca.certificatePem, peer.certificatePem, 'sslclient')).ok, true);
});

test("a leaf's issuer is its CA's subject byte for byte, and its validity ends with the CA's", async () => {
  const shortCa = await createCertificateAuthority({ commonName: 'short-ca' }, 10, NOW);
  const leaf = await issueLeafCertificate({ commonName: 'x', usage: 'server', dnsNames: ['x.ns.svc'], validityDays: 365 }, loadCertificateAuthority(shortCa.certificatePem, shortCa.privateKeyPem), NOW);
  assert.ok(rawNames(leaf.certificate).issuer.equals(rawNames(shortCa.certificate).subject));
  assert.equal(leaf.certificate.validToDate.getTime(), shortCa.certificate.validToDate.getTime());
});

test("a CA made by another tool (openssl, UTF8String names) signs leaves whose issuer is its subject byte for byte", async () => {
  const key = join(dir, 'openssl-ca.key');
  const cert = join(dir, 'openssl-ca.pem');
  await promisify(execFile)('openssl', ['req', '-x509', '-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes', '-keyout', key, '-out', cert, '-days', '30', '-subj', '/O=team-b/CN=outside-ca', '-addext', 'basicConstraints=critical,CA:TRUE,pathlen:0', '-addext', 'keyUsage=critical,keyCertSign,cRLSign']);
  const [caPem, keyPem] = await Promise.all([readFile(cert, 'utf8'), readFile(key, 'utf8')]);
  const outside = loadCertificateAuthority(caPem, keyPem);
  const leaf = await issueLeafCertificate({ commonName: 'y', usage: 'server', dnsNames: ['y.ns.svc'], validityDays: 10 }, outside, new Date());
  assert.ok(rawNames(leaf.certificate).issuer.equals(rawNames(outside.certificate).subject));
  await writeFile(join(dir, 'outside-leaf.pem'), leaf.certificatePem);
  const verified = await promisify(execFile)('openssl', ['verify', '-purpose', 'sslserver', '-CAfile', cert, join(dir, 'outside-leaf.pem')]);
  assert.match(verified.stdout, /: OK/);
});

test('bad requests and bad issuers are refused with what is wrong', async () => {
  const leaf = await issueLeafCertificate({ commonName: 'x', usage: 'client', validityDays: 1 }, authority, NOW);
  await assert.rejects(issueLeafCertificate({ commonName: 'y', usage: 'client', validityDays: 1 }, { certificate: leaf.certificate, privateKey: leaf.privateKey }, NOW), /is not a CA/);
  await assert.rejects(issueLeafCertificate({ commonName: 'y', usage: 'server', dnsNames: ['not a name'], validityDays: 1 }, authority, NOW), /not a DNS name/);
  await assert.rejects(issueLeafCertificate({ commonName: 'y', usage: 'server', ipAddresses: ['10.0.0.300'], validityDays: 1 }, authority, NOW), /not an IP address/);
  await assert.rejects(issueCertificate({ subject: { commonName: 'z'.repeat(65) }, isCA: true, extendedKeyUsage: [], dnsNames: [], ipAddresses: [], validityDays: 1 }, NOW), /1 to 64 characters/);
  await assert.rejects(issueLeafCertificate({ commonName: 'y', usage: 'client', validityDays: 1 }, authority, new Date(NOW.getTime() + 3651 * DAY)), /expired/);
  assert.throws(() => loadCertificateAuthority(ca.certificatePem, leaf.privateKeyPem), /does not belong/);
});

test('needsRotation: with a third of the validity left, expired, not yet valid, or unparsable', async () => {
  const leaf = await issueLeafCertificate({ commonName: 'r', usage: 'server', dnsNames: ['r.ns.svc'], validityDays: 90 }, authority, NOW);
  const cert = leaf.certificate;
  const span = cert.validToDate.getTime() - cert.validFromDate.getTime();
  const at = (ms: number): Date => new Date(cert.validFromDate.getTime() + ms);
  assert.equal(needsRotation(cert, NOW), false);
  assert.equal(needsRotation(leaf.certificatePem, at(span * 0.6)), false);
  assert.equal(needsRotation(cert, at(span * 0.7)), true);
  assert.equal(needsRotation(cert, at(span + 1)), true);
  assert.equal(needsRotation(cert, at(-1)), true);
  assert.equal(needsRotation('not a certificate', NOW), true);
});

test('generateCertificates: a server certificate for the names, which openssl verifies against the CA it returns with its key', async () => {
  const pair = await generateCertificates({ dnsNames: ['history.ops.svc'], ipAddresses: ['127.0.0.1'], validityDays: 365, now: NOW });
  const cert = new X509Certificate(pair.cert);
  assert.equal(cert.subject, 'CN=history.ops.svc');
  assert.equal(new X509Certificate(pair.caCert).subject, 'CN=history.ops.svc CA');
  assert.ok(cert.checkHost('history.ops.svc'));
  assert.ok(cert.checkIP('127.0.0.1'));
  assert.ok(cert.checkPrivateKey(createPrivateKey(pair.key)));
  assert.equal(cert.validToDate.getTime(), Math.floor((NOW.getTime() + 365 * DAY) / 1000) * 1000);
  assert.equal((await opensslVerify('serving', pair.caCert, pair.cert, 'sslserver')).ok, true);
  // The CA's key is returned with it, and signs.
  const again = await issueLeafCertificate({ commonName: 'again', usage: 'server', dnsNames: ['again.ops.svc'], validityDays: 1 }, loadCertificateAuthority(pair.caCert, pair.caKey), NOW);
  assert.ok(again.certificate.verify(new X509Certificate(pair.caCert).publicKey));
  await assert.rejects(generateCertificates({}), /at least one DNS name or IP address/);
});

test('generateCertificates: a name longer than a common name may be (64) still gets a certificate, the whole name in its SAN', async () => {
  const long = `${'a'.repeat(50)}.${'b'.repeat(20)}.svc`;
  const cert = new X509Certificate((await generateCertificates({ dnsNames: [long], now: NOW })).cert);
  assert.equal(cert.subject, `CN=${long.slice(0, 64)}`);
  assert.ok(cert.checkHost(long));
});

test('generateCertificates issues in a child process: the caller never loads @peculiar/x509 (nor its Reflect polyfill), and the issuer\'s refusals come back', async () => {
  const certs = new URL('../../src/webhook/certs.ts', import.meta.url).href;
  const program = `const { generateCertificates } = await import(${JSON.stringify(certs)});
const pair = await generateCertificates({ dnsNames: ['hooks.ops.svc'] });
process.stdout.write(JSON.stringify({ issued: pair.cert.startsWith('-----BEGIN CERTIFICATE-----'), polyfill: typeof Reflect.getMetadata }));`;
  const { stdout } = await promisify(execFile)(process.execPath, ['--conditions=@quorum/source', '--input-type=module', '--eval', program]);
  assert.deepEqual(JSON.parse(stdout), { issued: true, polyfill: 'undefined' });
  await assert.rejects(generateCertificates({ dnsNames: ['not a name'] }), /not a DNS name for a certificate: "not a name"/);
});

test('the issuer child gets the node flags of its parent, not the program the parent was given inline', () => {
  assert.deepEqual(nodeFlags(['--max-semi-space-size=1', '--conditions=@quorum/source', '--input-type=module', '-e', 'main()']), ['--max-semi-space-size=1', '--conditions=@quorum/source']);
  assert.deepEqual(nodeFlags(['--eval=main()', '--print', '1', '--input-type', 'module', '--expose-gc']), ['--expose-gc']);
});
