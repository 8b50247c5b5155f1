// What the operator issues for a cluster (names, profiles, the two CAs), when a certificate is renewed, and how a
// user's Secret is checked. Certificates are read back with Node's X509Certificate and used in real TLS handshakes.
import assert from 'node:assert/strict';
import { execFile, spawnSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { X509Certificate } from 'node:crypto';
import { describe, test } from 'node:test';
import { connect, createServer, type TLSSocket } from 'node:tls';
import { promisify } from 'node:util';
import { issueCertificate, loadCertificateAuthority, needsRotation, ROTATE_WHEN_REMAINING_FRACTION, type CertificateAuthority, type CertificateRequest, type IssuedCertificate } from '@quorum/kit';
import {
  CA_VALIDITY_DAYS,
  EXPIRY_WARNING_DAYS,
  LEAF_VALIDITY_DAYS,
  checkUserCertificate,
  clientCAProfile,
  clientCertificateProfile,
  clientServiceHostNames,
  peerCAProfile,
  peerCertificateProfile,
  peerCertificateSANs,
  serverCertificateProfile,
  serverCertificateSANs,
  type UserCertificateExpectations,
} from '../../src/tls/issue.ts';
import { RENEW_WHEN_REMAINING_FRACTION } from '../../src/api/etcdcluster.ts';
import { OID, pemBlocks } from '../../src/tls/x509.ts';

const run = promisify(execFile);
const OPENSSL_MISSING = spawnSync('openssl', ['version']).status === 0 ? false : 'environment: openssl is not on PATH: the chain test is skipped';
const DAY_MS = 86_400_000;
const NOW = new Date('2026-05-01T00:00:00Z');
const asAuthority = (issued: IssuedCertificate): CertificateAuthority => ({ certificate: issued.certificate, privateKey: issued.privateKey });

describe('names', () => {
  test('peer certificate: the member host name and its fully qualified form, no IPs', () => {
    assert.deepEqual(peerCertificateSANs('db-3', 'db', 'prod', 'cluster.local'), {
      dnsNames: ['db-3.db.prod.svc', 'db-3.db.prod.svc.cluster.local'],
      ipAddresses: [],
    });
  });

  test('server certificate: member names, every client Service name, loopback', () => {
    assert.deepEqual(serverCertificateSANs('db-3', 'db', 'prod', 'corp.example.'), {
      dnsNames: [
        'db-3.db.prod.svc',
        'db-3.db.prod.svc.corp.example',
        'db-client',
        'db-client.prod',
        'db-client.prod.svc',
        'db-client.prod.svc.corp.example',
        'localhost',
      ],
      ipAddresses: ['127.0.0.1', '::1'],
    });
  });
});

describe('profiles', () => {
  test('two CAs per cluster, named after it and its namespace, 10 years', () => {
    for (const [profile, cn] of [
      [peerCAProfile('db', 'prod'), 'db-peer-ca'],
      [clientCAProfile('db', 'prod'), 'db-client-ca'],
    ] as const) {
      assert.deepEqual(profile, {
        subject: { commonName: cn, organization: 'prod' },
        isCA: true,
        extendedKeyUsage: [],
        dnsNames: [],
        ipAddresses: [],
        validityDays: CA_VALIDITY_DAYS,
      });
    }
    assert.equal(CA_VALIDITY_DAYS, 3650);
    assert.equal(LEAF_VALIDITY_DAYS, 365);
  });

  test('leaves: peer serverAuth+clientAuth, server serverAuth+clientAuth (the gRPC gateway dials with it), client clientAuth with CN <cluster>-client', () => {
    assert.deepEqual(peerCertificateProfile('db-0', 'db', 'prod', 'cluster.local').extendedKeyUsage, ['serverAuth', 'clientAuth']);
    assert.deepEqual(serverCertificateProfile('db-0', 'db', 'prod', 'cluster.local').extendedKeyUsage, ['serverAuth', 'clientAuth']);
    assert.deepEqual(clientCertificateProfile('db'), {
      subject: { commonName: 'db-client' },
      isCA: false,
      extendedKeyUsage: ['clientAuth'],
      dnsNames: [],
      ipAddresses: [],
      validityDays: LEAF_VALIDITY_DAYS,
    });
    assert.equal(peerCertificateProfile('db-0', 'db', 'prod', 'cluster.local').subject.commonName, 'db-0');
  });

  test('the longest cluster name the API allows (50) still fits X.509 name bounds', async () => {
    const cluster = 'c'.repeat(50);
    const namespace = 'n'.repeat(63);
    const ca = await issueCertificate(clientCAProfile(cluster, namespace), NOW);
    await issueCertificate(serverCertificateProfile(`${cluster}-12345`, cluster, namespace, 'cluster.local'), NOW, asAuthority(ca));
    await issueCertificate(clientCertificateProfile(cluster), NOW, asAuthority(ca));
  });
});

describe('a cluster issued end to end', async () => {
  const [cluster, namespace, domain, member] = ['db', 'prod', 'cluster.local', 'db-0'];
  const peerCA = await issueCertificate(peerCAProfile(cluster, namespace), NOW);
  const clientCA = await issueCertificate(clientCAProfile(cluster, namespace), NOW);
  const peer = await issueCertificate(peerCertificateProfile(member, cluster, namespace, domain), NOW, asAuthority(peerCA));
  const server = await issueCertificate(serverCertificateProfile(member, cluster, namespace, domain), NOW, asAuthority(clientCA));
  const client = await issueCertificate(clientCertificateProfile(cluster), NOW, asAuthority(clientCA));

  test('each leaf verifies against its own CA and not the other one', () => {
    assert.ok(peer.certificate.verify(peerCA.certificate.publicKey));
    assert.equal(peer.certificate.verify(clientCA.certificate.publicKey), false, 'a peer certificate is no client certificate');
    for (const leaf of [server, client]) {
      assert.ok(leaf.certificate.verify(clientCA.certificate.publicKey));
      assert.equal(leaf.certificate.verify(peerCA.certificate.publicKey), false, 'a client certificate can never join the raft transport');
    }
    assert.equal(peerCA.certificate.ca, true);
    assert.equal(clientCA.certificate.ca, true);
    for (const leaf of [peer, server, client]) assert.equal(leaf.certificate.ca, false);
  });

  test('SANs, EKUs and validity as profiled', () => {
    for (const name of peerCertificateSANs(member, cluster, namespace, domain).dnsNames) assert.ok(peer.certificate.checkHost(name, { subject: 'never' }), name);
    assert.equal(peer.certificate.checkHost('db-client.prod.svc'), undefined);
    const sans = serverCertificateSANs(member, cluster, namespace, domain);
    for (const name of sans.dnsNames) assert.ok(server.certificate.checkHost(name, { subject: 'never' }), name);
    for (const ip of sans.ipAddresses) assert.equal(server.certificate.checkIP(ip), ip);
    assert.equal(server.certificate.checkHost('db-1.db.prod.svc'), undefined, "one member's certificate does not cover another");
    assert.deepEqual(peer.certificate.keyUsage, [OID.serverAuth, OID.clientAuth]);
    assert.deepEqual(server.certificate.keyUsage, [OID.serverAuth, OID.clientAuth]);
    assert.deepEqual(client.certificate.keyUsage, [OID.clientAuth]);
    assert.equal(client.certificate.subject, 'CN=db-client');
    assert.equal(client.certificate.subjectAltName, undefined);
    assert.equal(peer.certificate.validToDate.getTime() - NOW.getTime(), LEAF_VALIDITY_DAYS * DAY_MS);
    assert.equal(peerCA.certificate.validToDate.getTime() - NOW.getTime(), CA_VALIDITY_DAYS * DAY_MS);
  });

  test('mutual TLS through OpenSSL: client certificate to server certificate, peer to peer; the wrong CA is refused', async () => {
    const now = new Date();
    const freshPeerCA = await issueCertificate(peerCAProfile(cluster, namespace), now);
    const freshClientCA = await issueCertificate(clientCAProfile(cluster, namespace), now);
    const issue = (profile: CertificateRequest, ca: IssuedCertificate): Promise<IssuedCertificate> => issueCertificate(profile, now, asAuthority(ca));
    const serving = await issue(serverCertificateProfile(member, cluster, namespace, domain), freshClientCA);
    const clientLeaf = await issue(clientCertificateProfile(cluster), freshClientCA);
    const peer0 = await issue(peerCertificateProfile('db-0', cluster, namespace, domain), freshPeerCA);
    const peer1 = await issue(peerCertificateProfile('db-1', cluster, namespace, domain), freshPeerCA);

    assert.deepEqual(await handshake(serving, freshClientCA, clientLeaf, freshClientCA, 'db-client.prod.svc'), { authorized: true, peerCN: 'db-client' });
    assert.deepEqual(await handshake(serving, freshClientCA, clientLeaf, freshClientCA, 'db-0.db.prod.svc'), { authorized: true, peerCN: 'db-client' });
    assert.deepEqual(await handshake(peer0, freshPeerCA, peer1, freshPeerCA, 'db-0.db.prod.svc.cluster.local'), { authorized: true, peerCN: 'db-1' });
    // A client certificate presented to a peer listener: signed by the wrong CA.
    const refused = await handshake(peer0, freshPeerCA, clientLeaf, freshPeerCA, 'db-0.db.prod.svc');
    assert.equal(refused.authorized, false);
    // The client checks the server's name: a peer certificate does not cover the client Service.
    await assert.rejects(handshake(peer0, freshPeerCA, peer1, freshPeerCA, 'db-client.prod.svc'), /does not match certificate's altnames/);
  });
});

/**
 * A TLS server with `server`'s certificate that requests a client certificate signed by `serverTrusts`, and a client
 * presenting `client` that trusts `clientTrusts` and checks `servername`. Resolves with what the server saw.
 */
async function handshake(
  server: IssuedCertificate,
  serverTrusts: IssuedCertificate,
  client: IssuedCertificate,
  clientTrusts: IssuedCertificate,
  servername: string,
): Promise<{ authorized: boolean; peerCN: string | undefined }> {
  let seen: { authorized: boolean; peerCN: string | undefined } | undefined;
  const listener = createServer(
    { cert: server.certificatePem, key: server.privateKeyPem, ca: serverTrusts.certificatePem, requestCert: true, rejectUnauthorized: false },
    (socket: TLSSocket) => {
      // A client that refuses the server's certificate resets the connection; that is its answer, not a failure here.
      socket.on('error', () => undefined);
      const subject = socket.getPeerCertificate().subject as Record<string, string> | undefined;
      seen = { authorized: socket.authorized, peerCN: subject?.CN };
      socket.end('bye');
    },
  );
  listener.listen(0, '127.0.0.1');
  await once(listener, 'listening');
  try {
    const socket = connect({
      host: '127.0.0.1',
      port: (listener.address() as AddressInfo).port,
      servername,
      ca: clientTrusts.certificatePem,
      cert: client.certificatePem,
      key: client.privateKeyPem,
    });
    socket.setTimeout(5000, () => socket.destroy(new Error('handshake timed out')));
    socket.resume();
    await once(socket, 'end');
    socket.destroy();
    if (!seen) throw new Error('the server never saw a connection');
    return seen;
  } finally {
    listener.close();
  }
}

// needsRotation (the kit's) is tested with the kit's issuer; what is etcd's own is the number the API documents.
test('certificates are issued again with a third of their validity left: the rule the API documents is the kit\'s', async () => {
  assert.equal(RENEW_WHEN_REMAINING_FRACTION, ROTATE_WHEN_REMAINING_FRACTION);
  const ca = await issueCertificate(clientCAProfile('db', 'prod'), NOW);
  const leaf = await issueCertificate(clientCertificateProfile('db'), NOW, asAuthority(ca));
  const to = leaf.certificate.validToDate.getTime();
  // With a year's leaf, renewal starts about four months before the end.
  assert.equal(needsRotation(leaf.certificate, new Date(to - 123 * DAY_MS)), false);
  assert.equal(needsRotation(leaf.certificate, new Date(to - 121 * DAY_MS)), true);
});

test('pemBlocks splits a bundle', async () => {
  const [one, other] = [await issueCertificate(clientCAProfile('db', 'prod'), NOW), await issueCertificate(peerCAProfile('db', 'prod'), NOW)];
  const blocks = pemBlocks(`junk\n${one.certificatePem}\n${other.certificatePem}${one.privateKeyPem}`);
  assert.deepEqual(blocks.map((b) => new X509Certificate(b).subject), [one.certificate.subject, other.certificate.subject]);
  assert.equal(pemBlocks(one.privateKeyPem, 'PRIVATE KEY').length, 1);
});

describe('checkUserCertificate', async () => {
  const expect: UserCertificateExpectations = { side: 'client', cluster: 'db', namespace: 'prod', clusterDomain: 'cluster.local', now: NOW };
  const userCA = await issueCertificate({ ...clientCAProfile('corp', 'pki'), subject: { commonName: 'Corp etcd CA', organization: 'Corp' } }, NOW);
  const otherCA = await issueCertificate({ ...clientCAProfile('other', 'pki'), subject: { commonName: 'Other CA' } }, NOW);

  const leafProfile = (over: Partial<CertificateRequest> = {}): CertificateRequest => ({
    subject: { commonName: 'etcd' },
    isCA: false,
    extendedKeyUsage: ['serverAuth', 'clientAuth'],
    dnsNames: ['*.db.prod.svc', ...clientServiceHostNames('db', 'prod', 'cluster.local')],
    ipAddresses: [],
    validityDays: 365,
    ...over,
  });
  const secretFor = (leaf: IssuedCertificate, ca: IssuedCertificate | string = userCA): { ca: string; cert: string; key: string } => ({
    ca: typeof ca === 'string' ? ca : ca.certificatePem,
    cert: leaf.certificatePem,
    key: leaf.privateKeyPem,
  });
  const good = await issueCertificate(leafProfile(), NOW, asAuthority(userCA));

  test('a good Secret: no problems, no warnings, for either side', () => {
    assert.deepEqual(checkUserCertificate(secretFor(good), expect), { problems: [], warnings: [] });
    assert.deepEqual(checkUserCertificate(secretFor(good), { ...expect, side: 'peer' }), { problems: [], warnings: [] });
  });

  test('a peer Secret needs only the member wildcard; a client Secret also the client Service names, each named when missing', async () => {
    const peerOnly = await issueCertificate(leafProfile({ dnsNames: ['*.db.prod.svc'] }), NOW, asAuthority(userCA));
    assert.deepEqual(checkUserCertificate(secretFor(peerOnly), { ...expect, side: 'peer' }).problems, []);
    const [problem, ...rest] = checkUserCertificate(secretFor(peerOnly), expect).problems;
    assert.deepEqual(rest, []);
    assert.match(problem!, /does not cover the client Service name\(s\) db-client, db-client\.prod, db-client\.prod\.svc, db-client\.prod\.svc\.cluster\.local/);
    assert.match(problem!, /its subjectAltName: DNS:\*\.db\.prod\.svc/);
  });

  test('members listed one by one instead of a wildcard: refused, because new members get new names', async () => {
    const listed = await issueCertificate(leafProfile({ dnsNames: ['db-0.db.prod.svc', 'db-1.db.prod.svc', 'db-2.db.prod.svc'] }), NOW, asAuthority(userCA));
    const { problems } = checkUserCertificate(secretFor(listed), { ...expect, side: 'peer' });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /does not cover every member host name: it needs the DNS name \*\.db\.prod\.svc/);
  });

  test('a wildcard only in the CN is not enough: Go ignores the CN', async () => {
    const cnOnly = await issueCertificate(leafProfile({ subject: { commonName: '*.db.prod.svc' }, dnsNames: [] }), NOW, asAuthority(userCA));
    const { problems } = checkUserCertificate(secretFor(cnOnly), { ...expect, side: 'peer' });
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /its subjectAltName: none/);
  });

  test('missing extended key usages are each named; no EKU extension at all means any usage', async () => {
    const serverOnly = await issueCertificate(leafProfile({ extendedKeyUsage: ['serverAuth'] }), NOW, asAuthority(userCA));
    assert.deepEqual(
      checkUserCertificate(secretFor(serverOnly), expect).problems.map((p) => /lacks the extended key usage (\w+)/.exec(p)?.[1]),
      ['clientAuth'],
    );
    const clientOnly = await issueCertificate(leafProfile({ extendedKeyUsage: ['clientAuth'] }), NOW, asAuthority(userCA));
    assert.match(checkUserCertificate(secretFor(clientOnly), expect).problems.join('\n'), /lacks the extended key usage serverAuth \(1\.3\.6\.1\.5\.5\.7\.3\.1\)/);
    const unrestricted = await issueCertificate(leafProfile({ extendedKeyUsage: [] }), NOW, asAuthority(userCA));
    assert.deepEqual(checkUserCertificate(secretFor(unrestricted), expect).problems, []);
  });

  test('signed by another CA: refused, naming both sides', async () => {
    const foreign = await issueCertificate(leafProfile(), NOW, asAuthority(otherCA));
    const { problems } = checkUserCertificate(secretFor(foreign), expect);
    assert.equal(problems.length, 1);
    assert.match(problems[0]!, /tls\.crt "CN=etcd" is not signed by ca\.crt: its chain ends at issuer "CN=Other CA", and ca\.crt holds "O=Corp, CN=Corp etcd CA"/);
  });

  test('a CA bundle (old and new during a rotation) is accepted whichever CA signed', () => {
    const bundle = `${otherCA.certificatePem}${userCA.certificatePem}`;
    assert.deepEqual(checkUserCertificate(secretFor(good, bundle), expect).problems, []);
  });

  test('a key that is not the certificate’s, and files that do not parse', async () => {
    const stranger = await issueCertificate(leafProfile(), NOW, asAuthority(userCA));
    assert.deepEqual(checkUserCertificate({ ...secretFor(good), key: stranger.privateKeyPem }, expect).problems, ['tls.key is not the private key of tls.crt "CN=etcd"']);
    const garbled = checkUserCertificate({ ca: 'not a certificate', cert: '-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----', key: 'nope' }, expect);
    assert.equal(garbled.problems.length, 3, garbled.problems.join('\n'));
    assert.match(garbled.problems[0]!, /^ca\.crt holds no PEM certificate$/);
    assert.match(garbled.problems[1]!, /^tls\.crt does not parse: /);
    assert.match(garbled.problems[2]!, /^tls\.key does not parse as an unencrypted PEM private key: /);
    // A broken first certificate is not replaced by the intermediate after it.
    const brokenLeaf = checkUserCertificate({ ...secretFor(good), cert: `-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n${userCA.certificatePem}` }, expect);
    assert.deepEqual(brokenLeaf.problems.map((p) => p.replace(/: .*/, '')), ['certificate 1 of tls.crt does not parse']);
  });

  test('expired is a problem; expiring within 30 days is a warning only; not yet valid is a problem', () => {
    const to = good.certificate.validToDate.getTime();
    const early = new Date(good.certificate.validFromDate.getTime() - 1000);
    assert.deepEqual(checkUserCertificate(secretFor(good), { ...expect, now: early }).problems, [
      `tls.crt "CN=etcd" is not valid before ${good.certificate.validFromDate.toISOString()}`,
    ]);
    const expired = checkUserCertificate(secretFor(good), { ...expect, now: new Date(to + 1000) });
    assert.deepEqual(expired.warnings, []);
    assert.deepEqual(expired.problems, [`tls.crt "CN=etcd" expired on ${new Date(to).toISOString()}`]);
    const soon = checkUserCertificate(secretFor(good), { ...expect, now: new Date(to - 10 * DAY_MS - 1000) });
    assert.deepEqual(soon.problems, []);
    assert.deepEqual(soon.warnings, [`tls.crt "CN=etcd" expires on ${new Date(to).toISOString()}, in 10 days: update the Secret before then`]);
    assert.deepEqual(checkUserCertificate(secretFor(good), { ...expect, now: new Date(to - EXPIRY_WARNING_DAYS * DAY_MS - 1000) }).warnings, []);
  });

  test('a CA that expires soon is warned about too', async () => {
    const shortCA = await issueCertificate({ ...clientCAProfile('corp', 'pki'), validityDays: 20 }, NOW);
    const leaf = await issueCertificate(leafProfile(), NOW, asAuthority(shortCA));
    const { problems, warnings } = checkUserCertificate(secretFor(leaf, shortCA), expect);
    assert.deepEqual(problems, []);
    assert.equal(warnings.length, 2, 'the leaf is clamped to the CA, so both expire in 20 days');
    assert.match(warnings[1]!, /^ca\.crt's "O=pki, CN=corp-client-ca" expires on/);
  });

  test('intermediates after the certificate in tls.crt are followed up to ca.crt', { skip: OPENSSL_MISSING }, async () => {
    // The builder makes only CAs with pathlen 0, so the corporate-style root and intermediate come from openssl.
    const dir = await mkdtemp(join(tmpdir(), 'quorum-tls-chain-'));
    try {
      const openssl = async (...args: string[]): Promise<string> => (await run('openssl', args, { cwd: dir, timeout: 15_000 })).stdout;
      const ec = ['-newkey', 'ec', '-pkeyopt', 'ec_paramgen_curve:P-256', '-nodes'];
      await openssl('req', '-x509', ...ec, '-keyout', 'root.key', '-out', 'root.crt', '-days', '365', '-subj', '/O=Corp/CN=Corp Root',
        '-addext', 'basicConstraints=critical,CA:TRUE', '-addext', 'keyUsage=critical,keyCertSign,cRLSign');
      await openssl('req', '-new', ...ec, '-keyout', 'intermediate.key', '-out', 'intermediate.csr', '-subj', '/O=Corp/CN=Corp etcd Intermediate');
      await writeFile(join(dir, 'ext.cnf'), 'basicConstraints=critical,CA:TRUE,pathlen:0\nkeyUsage=critical,keyCertSign,cRLSign\nsubjectKeyIdentifier=hash\nauthorityKeyIdentifier=keyid\n');
      await openssl('x509', '-req', '-in', 'intermediate.csr', '-CA', 'root.crt', '-CAkey', 'root.key', '-CAcreateserial', '-days', '365',
        '-extfile', 'ext.cnf', '-out', 'intermediate.crt');
      const read = (name: string): Promise<string> => readFile(join(dir, name), 'utf8');
      const intermediate = loadCertificateAuthority(await read('intermediate.crt'), await read('intermediate.key'));
      const now = new Date();
      const leaf = await issueCertificate(leafProfile(), now, intermediate);
      await writeFile(join(dir, 'leaf.crt'), leaf.certificatePem);
      assert.equal((await openssl('verify', '-CAfile', 'root.crt', '-untrusted', 'intermediate.crt', 'leaf.crt')).trim(), 'leaf.crt: OK');

      const root = await read('root.crt');
      const chain = { ca: root, cert: `${leaf.certificatePem}${await read('intermediate.crt')}`, key: leaf.privateKeyPem };
      assert.deepEqual(checkUserCertificate(chain, { ...expect, now }), { problems: [], warnings: [] });
      const withoutIntermediate = checkUserCertificate({ ...chain, cert: leaf.certificatePem }, { ...expect, now });
      assert.deepEqual(withoutIntermediate.problems, [
        'tls.crt "CN=etcd" is not signed by ca.crt: its chain ends at issuer "O=Corp, CN=Corp etcd Intermediate", and ca.crt holds "O=Corp, CN=Corp Root"',
      ]);
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  });

  test('messages never quote key material', () => {
    const checks = [
      checkUserCertificate({ ...secretFor(good), key: `${good.privateKeyPem.slice(0, 60)}broken` }, expect),
      checkUserCertificate({ ca: good.privateKeyPem, cert: good.privateKeyPem, key: good.certificatePem }, expect),
    ];
    for (const { problems, warnings } of checks) {
      assert.ok(problems.length > 0);
      for (const message of [...problems, ...warnings]) assert.doesNotMatch(message, /PRIVATE KEY|MIG/, message);
    }
  });
});
