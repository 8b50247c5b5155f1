import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { peerCAProfile } from '../../src/tls/issue.ts';
import {
  caRotationPhase,
  clientCASecretName,
  pemCertificates,
  rotatedCAContents,
  clientTLSSecretName,
  issueTLSSecrets,
  MEMBER_TLS_FILES,
  memberTLSSecretName,
  peerCASecretName,
  TLS_KEYS,
  tlsSecret,
  tlsSecretsToIssue,
  type ObservedTLSSecrets,
  type SecretContents,
  type TLSSubject,
} from '../../src/tls/secrets.ts';

const NOW = new Date('2026-11-23T12:00:00Z');
const DAY = 86_400_000;
const subject: TLSSubject = { cluster: 'c', namespace: 'ns', clusterDomain: 'cluster.local', members: ['c-0', 'c-1', 'c-2'] };

/** What the API server would hold after the operator wrote every Secret the plan issued. */
function apply(observed: ObservedTLSSecrets, written: Map<string, SecretContents>, forSubject: TLSSubject = subject): ObservedTLSSecrets {
  const get = (name: string, current: SecretContents | undefined): SecretContents | undefined => written.get(name) ?? current;
  return {
    peerCA: get(peerCASecretName(forSubject.cluster), observed.peerCA),
    clientCA: get(clientCASecretName(forSubject.cluster), observed.clientCA),
    client: get(clientTLSSecretName(forSubject.cluster), observed.client),
    members: Object.fromEntries(forSubject.members.map((m) => [m, get(memberTLSSecretName(m), observed.members[m])])),
  };
}

async function converge(observed: ObservedTLSSecrets, now = NOW, forSubject = subject): Promise<ObservedTLSSecrets> {
  const plan = tlsSecretsToIssue(forSubject, observed, now);
  return apply(observed, await issueTLSSecrets(forSubject, observed, plan, now), forSubject);
}

const reasons = (observed: ObservedTLSSecrets, now = NOW, forSubject = subject): string[] =>
  tlsSecretsToIssue(forSubject, observed, now).issue.map((i) => `${i.name}:${i.reason}`).sort();

test('a new cluster gets both CAs, a Secret per member and the client Secret; once written, nothing more', async () => {
  const empty: ObservedTLSSecrets = { members: {} };
  assert.deepEqual(reasons(empty), ['c-0-tls:Missing', 'c-1-tls:Missing', 'c-2-tls:Missing', 'c-client-ca:Missing', 'c-client-tls:Missing', 'c-peer-ca:Missing'].sort());
  const done = await converge(empty);
  assert.deepEqual(tlsSecretsToIssue(subject, done, NOW), { issue: [], expiringCAs: [] });

  const peerCA = new X509Certificate(done.peerCA![TLS_KEYS.certificate]!);
  const clientCA = new X509Certificate(done.clientCA![TLS_KEYS.certificate]!);
  assert.notEqual(peerCA.fingerprint256, clientCA.fingerprint256, 'two CAs, never one');
  const member = done.members['c-1']!;
  const peer = new X509Certificate(member[MEMBER_TLS_FILES.peerCertificate]!);
  const server = new X509Certificate(member[MEMBER_TLS_FILES.serverCertificate]!);
  assert.ok(peer.verify(peerCA.publicKey) && !peer.verify(clientCA.publicKey), 'the peer certificate is signed by the peer CA only');
  assert.ok(server.verify(clientCA.publicKey), 'the server certificate is signed by the client CA');
  assert.equal(peer.checkHost('c-1.c.ns.svc', { subject: 'never' }), 'c-1.c.ns.svc');
  assert.equal(server.checkHost('c-client.ns.svc.cluster.local', { subject: 'never' }), 'c-client.ns.svc.cluster.local');
  assert.equal(new X509Certificate(member[MEMBER_TLS_FILES.peerCA]!).fingerprint256, peerCA.fingerprint256);
  assert.equal(new X509Certificate(member[MEMBER_TLS_FILES.clientCA]!).fingerprint256, clientCA.fingerprint256);
  const client = new X509Certificate(done.client![TLS_KEYS.certificate]!);
  assert.ok(client.verify(clientCA.publicKey));
  assert.equal(new X509Certificate(done.client![TLS_KEYS.ca]!).fingerprint256, clientCA.fingerprint256, 'applications trust the client CA');
});

test('a new member gets its Secret; the others and the CAs are left alone', async () => {
  const done = await converge({ members: {} });
  const grown: TLSSubject = { ...subject, members: [...subject.members, 'c-3'] };
  assert.deepEqual(reasons({ ...done, members: { ...done.members } }, NOW, grown), ['c-3-tls:Missing']);
});

test('a lost peer CA is issued again, and every member Secret with it; the client Secret keeps its CA', async () => {
  const done = await converge({ members: {} });
  const { peerCA: _lost, ...rest } = done;
  assert.deepEqual(reasons(rest), ['c-0-tls:IssuerChanged', 'c-1-tls:IssuerChanged', 'c-2-tls:IssuerChanged', 'c-peer-ca:Missing'].sort());
  assert.deepEqual(tlsSecretsToIssue(subject, await converge(rest), NOW).issue, []);
});

test('another cluster domain changes the member names: members are issued again, the client certificate (no names) is not', async () => {
  const done = await converge({ members: {} });
  assert.deepEqual(reasons(done, NOW, { ...subject, clusterDomain: 'example.internal' }), ['c-0-tls:NamesChanged', 'c-1-tls:NamesChanged', 'c-2-tls:NamesChanged']);
});

test('leaves are renewed with a third of their year left; a CA near its end is reported, not replaced', async () => {
  const done = await converge({ members: {} });
  assert.deepEqual(reasons(done, new Date(NOW.getTime() + 200 * DAY)), []);
  assert.deepEqual(reasons(done, new Date(NOW.getTime() + 250 * DAY)), ['c-0-tls:Expiring', 'c-1-tls:Expiring', 'c-2-tls:Expiring', 'c-client-tls:Expiring']);
  const late = new Date(NOW.getTime() + 7 * 365 * DAY);
  const plan = tlsSecretsToIssue(subject, done, late);
  assert.deepEqual(plan.expiringCAs.map((c) => c.name).sort(), ['c-client-ca', 'c-peer-ca']);
  assert.ok(!plan.issue.some((i) => i.kind === 'peerCA' || i.kind === 'clientCA'), 'CA rotation is not built: never replaced silently');
});

test('a Secret whose key does not match its certificate, or is missing a file, is Unreadable', async () => {
  const done = await converge({ members: {} });
  const other = done.members['c-2']!;
  const mixed: ObservedTLSSecrets = { ...done, members: { ...done.members, 'c-1': { ...done.members['c-1']!, [MEMBER_TLS_FILES.serverKey]: other[MEMBER_TLS_FILES.serverKey]! } } };
  assert.deepEqual(reasons(mixed), ['c-1-tls:Unreadable']);
  const { [TLS_KEYS.key]: _key, ...noKey } = done.client!;
  assert.deepEqual(reasons({ ...done, client: noKey }), ['c-client-tls:Unreadable']);
  assert.deepEqual(reasons({ ...done, clientCA: { ...done.clientCA!, [TLS_KEYS.key]: 'not a key' } }), ['c-0-tls:IssuerChanged', 'c-1-tls:IssuerChanged', 'c-2-tls:IssuerChanged', 'c-client-ca:Unreadable', 'c-client-tls:IssuerChanged'].sort());
});

test('the Secret objects: kubernetes.io/tls where a tls.crt/tls.key pair is, the cluster as owner, our labels', async () => {
  const done = await converge({ members: {} });
  const owner = { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', name: 'c', uid: 'u-1', controller: true, blockOwnerDeletion: true };
  const ca = tlsSecret('c', 'ns', peerCASecretName('c'), done.peerCA!, owner);
  assert.equal(ca.type, 'kubernetes.io/tls');
  assert.equal(Buffer.from(ca.data![TLS_KEYS.certificate]!, 'base64').toString(), done.peerCA![TLS_KEYS.certificate]);
  assert.deepEqual(ca.metadata?.ownerReferences, [owner]);
  assert.equal(ca.metadata?.labels?.['app.kubernetes.io/managed-by'], 'quorum');
  const member = tlsSecret('c', 'ns', memberTLSSecretName('c-0'), done.members['c-0']!, owner, 'c-0');
  assert.equal(member.type, 'Opaque');
  assert.deepEqual(Object.keys(member.data!).sort(), Object.values(MEMBER_TLS_FILES).sort());
  assert.equal(member.metadata?.labels?.['etcd.quorum.dev/member'], 'c-0');
});

test('a CA rotation, step by step: both CAs trusted everywhere, then leaves signed by the new one, then the old one dropped', async () => {
  const done = await converge({ members: {} });
  const oldCA = new X509Certificate(done.peerCA![TLS_KEYS.certificate]!);
  const fingerprints = (bundle: string | undefined): string[] => pemCertificates(bundle ?? '').map((p) => new X509Certificate(p).fingerprint256).sort();
  assert.equal(caRotationPhase(done.peerCA), 'None');

  // TrustNew: the new CA joins the bundle; every holder must get the bundle (their leaves are issued again, still by the old CA).
  const trustNew = { ...done, peerCA: await rotatedCAContents(done.peerCA!, 'TrustNew', peerCAProfile('c', 'ns'), NOW, 't1') };
  assert.equal(caRotationPhase(trustNew.peerCA), 'TrustNew');
  assert.equal(pemCertificates(trustNew.peerCA[TLS_KEYS.ca]!).length, 2);
  assert.deepEqual(reasons(trustNew), ['c-0-tls:IssuerChanged', 'c-1-tls:IssuerChanged', 'c-2-tls:IssuerChanged']);
  const trusted = await converge(trustNew);
  assert.deepEqual(fingerprints(trusted.members['c-0']![MEMBER_TLS_FILES.peerCA]), fingerprints(trustNew.peerCA[TLS_KEYS.ca]), 'members trust both');
  assert.ok(new X509Certificate(trusted.members['c-0']![MEMBER_TLS_FILES.peerCertificate]!).verify(oldCA.publicKey), 'still signed by the old CA');
  assert.deepEqual(reasons(trusted), []);

  // Reissue: signing moves to the new CA; every leaf is issued again by it; the bundle stays both.
  const reissue = { ...trusted, peerCA: await rotatedCAContents(trusted.peerCA!, 'Reissue', peerCAProfile('c', 'ns'), NOW) };
  assert.equal(caRotationPhase(reissue.peerCA), 'Reissue');
  const newCA = new X509Certificate(reissue.peerCA[TLS_KEYS.certificate]!);
  assert.notEqual(newCA.fingerprint256, oldCA.fingerprint256);
  assert.deepEqual(reasons(reissue), ['c-0-tls:IssuerChanged', 'c-1-tls:IssuerChanged', 'c-2-tls:IssuerChanged']);
  const reissued = await converge(reissue);
  assert.ok(new X509Certificate(reissued.members['c-2']![MEMBER_TLS_FILES.peerCertificate]!).verify(newCA.publicKey), 'signed by the new CA');
  assert.equal(fingerprints(reissued.members['c-2']![MEMBER_TLS_FILES.peerCA]).length, 2, 'both still trusted');
  assert.equal(reissue.peerCA['rotated-at'], NOW.toISOString());

  // DropOld: only the new CA is left, in the bundles too; the token the rotation answered is kept.
  const dropped = { ...reissued, peerCA: await rotatedCAContents(reissued.peerCA!, 'DropOld', peerCAProfile('c', 'ns'), NOW) };
  assert.equal(caRotationPhase(dropped.peerCA), 'None');
  assert.deepEqual(fingerprints(dropped.peerCA[TLS_KEYS.ca]), [newCA.fingerprint256]);
  assert.equal(dropped.peerCA['rotation-token'], 't1');
  const final = await converge(dropped);
  assert.deepEqual(fingerprints(final.members['c-1']![MEMBER_TLS_FILES.peerCA]), [newCA.fingerprint256]);
  assert.deepEqual(reasons(final), []);
  // The client CA was never touched.
  assert.equal(final.clientCA, done.clientCA);
});
