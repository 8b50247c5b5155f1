// TLS on a real cluster (issue 9 item 4, docs/tls.md), in restricted namespaces, with the data checker writing
// through the client Service over mutual TLS:
// - a new 3-member cluster without spec.tls gets operator-managed peer and client TLS (the default) and becomes Available; the client Service answers
//   only a client that presents <cluster>-client-tls (no certificate: the handshake is refused; plain http: no
//   answer), every member's peer URL is https, and each member serves the certificates of its Secret, with the
//   names design §3.2 gives them;
// - the etcd.quorum.dev/rotate-certificates annotation has every member serve new certificates on both ports
//   without a restart (same pod UIDs, same restart counts), while writing, with no acknowledged write lost;
// - plaintext (tls.disabled) to TLS in place, while writing (first over http, then over https): every member first gets the
//   certificates (peer `trust`, client `both`), then each member's peer URL is switched to https and its pod
//   restarted on https only, the leader last; same members, IDs and volumes; turning TLS off is refused.
// Every absence is asserted only after a positive signal.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
// @timeout 60m: rotations and in-place changes bounded at 10-15 minutes each
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { request as httpsRequest } from 'node:https';
import { connect, type PeerCertificate } from 'node:tls';
import { after, before, test } from 'node:test';
import { PersistentVolumeClaims, Pods, Secrets, Services, type Client } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { memberHost } from '../../src/names.ts';
import { CLIENT_TLS_ANNOTATION } from '../../src/tls/members.ts';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';
import { EtcdClient, type EtcdTls } from '../../src/etcd/client.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { clientTLSSecretName, memberTLSSecretName } from '../../src/tls/secrets.ts';
import { applyCluster, eventually, getCluster, setUpOperator, verifyNoWriteLost, waitAvailable, type ClusterState } from './support.ts';

let env: TestEnv;
const checkers: DataChecker[] = [];

before(async () => {
  env = await setUpOperator();
});
after(async () => {
  for (const c of checkers) await c.close();
  await env.stop();
});

interface PodObj {
  metadata: { name: string; uid: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string };
  status?: { podIP?: string; containerStatuses?: { name: string; restartCount: number }[] };
}

const TLS_SPEC = { replicas: 3, tls: { peer: {}, client: {} } };
const describe = (s: ClusterState): string => JSON.stringify({ conditions: s.cluster.status?.conditions?.map((c) => `${c.type}=${c.status} ${c.reason}: ${c.message}`), tls: s.cluster.status?.tls, members: s.members }, null, 2);
const pods = async (ns: string, name: string): Promise<PodObj[]> => ((await env.client.list(Pods, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${name}` })).items as unknown as PodObj[]);
interface CoreEvent {
  reason?: string;
  message?: string;
}
async function events(ns: string, name: string): Promise<CoreEvent[]> {
  const out = await env.kube.kubectl(['get', 'events', '-n', ns, '--field-selector', `involvedObject.name=${name}`, '-o', 'json']);
  return (JSON.parse(out) as { items: CoreEvent[] }).items;
}
const restarts = (p: PodObj): number => p.status?.containerStatuses?.find((c) => c.name === 'etcd')?.restartCount ?? 0;

async function secretData(client: Client, ns: string, name: string): Promise<Record<string, string>> {
  const s = await client.get(Secrets, { namespace: ns, name });
  return Object.fromEntries(Object.entries(s.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString('utf8')]));
}

/** The client identity applications get: <cluster>-client-tls, with the client Service's name to verify the members by. */
async function clientIdentity(ns: string, name: string): Promise<EtcdTls> {
  const data = await secretData(env.client, ns, clientTLSSecretName(name));
  return { ca: data['ca.crt']!, cert: data['tls.crt']!, key: data['tls.key']!, servername: `${name}-client.${ns}.svc` };
}

async function serviceIP(ns: string, name: string): Promise<string> {
  const svc = (await env.client.get(Services, { namespace: ns, name: `${name}-client` })) as unknown as { spec: { clusterIP: string } };
  return svc.spec.clusterIP;
}

/** The certificate a TLS listener serves, with the handshake's outcome (a refusal of our certificate, or none). */
function served(host: string, port: number, options: { servername: string; ca: string; cert?: string; key?: string }): Promise<{ certificate?: PeerCertificate; error?: string }> {
  return new Promise((resolve) => {
    const socket = connect({ host, port, ...options, timeout: 5000 }, () => {
      const certificate = socket.getPeerCertificate();
      // TLS 1.3 sends the server's verdict on our certificate after the handshake: read once to hear it.
      socket.once('data', () => undefined);
      setTimeout(() => {
        socket.destroy();
        resolve({ certificate });
      }, 300);
    });
    socket.on('timeout', () => socket.destroy(new Error('timed out')));
    socket.on('error', (err: Error) => resolve({ error: err.message }));
  });
}

/** GET over TLS; resolves with the HTTP status, rejects with the TLS alert. */
function httpsGet(options: { host: string; port: number; servername: string; ca: string; cert: string; key: string }, path: string): Promise<number> {
  return new Promise((resolve, reject) => {
    const req = httpsRequest({ ...options, path, timeout: 5000 }, (res) => {
      res.resume();
      resolve(res.statusCode ?? 0);
    });
    req.on('timeout', () => req.destroy(new Error('timed out')));
    req.on('error', reject);
    req.end();
  });
}

async function startChecker(ns: string, name: string): Promise<DataChecker> {
  // A client that retries (3 times, like the upgrade tests): a request fails only if every retry did.
  const checker = new DataChecker({ endpoints: [`https://${await serviceIP(ns, name)}:2379`], tls: await clientIdentity(ns, name), ratePerSecond: 20, retries: 3 });
  checkers.push(checker);
  checker.start();
  await eventually('the data checker writing over mutual TLS', () => checker.stats().acknowledged >= 20, { timeoutMs: 60_000 });
  return checker;
}

/** Each member's served certificate (fingerprint) on 2379 (with the client identity) and 2380 (with the member's own peer certificate). */
async function servedCertificates(ns: string, name: string): Promise<Map<string, { client?: string; peer?: string; clientError?: string; peerError?: string }>> {
  const identity = await clientIdentity(ns, name);
  const out = new Map<string, { client?: string; peer?: string; clientError?: string; peerError?: string }>();
  for (const p of await pods(ns, name)) {
    if (!p.status?.podIP || p.metadata.deletionTimestamp) continue;
    const member = p.metadata.name;
    const own = await secretData(env.client, ns, memberTLSSecretName(member));
    const servername = memberHost(name, ns, member);
    const client = await served(p.status.podIP, 2379, { servername, ca: identity.ca!, cert: identity.cert!, key: identity.key! });
    const peer = await served(p.status.podIP, 2380, { servername, ca: own['peer-ca.crt']!, cert: own['peer.crt']!, key: own['peer.key']! });
    out.set(member, {
      ...(client.certificate ? { client: client.certificate.fingerprint256 } : { clientError: client.error }),
      ...(peer.certificate ? { peer: peer.certificate.fingerprint256 } : { peerError: peer.error }),
    });
  }
  return out;
}

/** The certificates each member's Secret holds now (server.crt for 2379, peer.crt for 2380), by SHA-256 fingerprint as TLS reports it. */
async function secretCertificates(ns: string, members: string[]): Promise<Map<string, { client: string; peer: string }>> {
  const out = new Map<string, { client: string; peer: string }>();
  for (const m of members) {
    const d = await secretData(env.client, ns, memberTLSSecretName(m));
    out.set(m, { client: new X509Certificate(d['server.crt']!).fingerprint256, peer: new X509Certificate(d['peer.crt']!).fingerprint256 });
  }
  return out;
}

test('a new cluster without spec.tls gets operator-managed TLS by default: Available, reachable only with the client certificate, https peer URLs, the names of design §3.2', async () => {
  const ns = await env.namespace('tls-new', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  const NAME = 'tls';
  await applyCluster(env.client, ns, NAME, { replicas: 3 });
  const s = await waitAvailable(env.client, ns, NAME, 3, 300_000);
  assert.deepEqual(s.cluster.spec.tls, TLS_SPEC.tls, 'the defaulting webhook wrote what runs into the spec');
  await assert.rejects(applyCluster(env.client, ns, NAME, { replicas: 3, tls: { disabled: true } }), /spec\.tls\.(disabled|peer)/, 'TLS cannot be turned off in place');
  assert.equal(s.cluster.status?.clientEndpoint, `https://${NAME}-client.${ns}.svc:2379`, describe(s));
  assert.deepEqual(s.cluster.status?.tls?.peer?.mode, 'Operator');
  assert.equal(s.cluster.status?.tls?.clientSecret, `${NAME}-client-tls`);
  for (const m of s.members) assert.match(m.peerURL ?? '', /^https:\/\//, describe(s));

  const ip = await serviceIP(ns, NAME);
  const identity = await clientIdentity(ns, NAME);
  // With the client certificate: reads, writes and a member list whose peer URLs are https (etcd's own word).
  const client = await eventually('the client Service answering over mutual TLS', async () => {
    const c = new EtcdClient({ endpoint: `https://${ip}:2379`, tls: identity, timeoutMs: 5000 });
    try {
      await c.put('tls/e2e', 'yes');
      return c;
    } catch {
      c.close();
      return undefined;
    }
  }, { timeoutMs: 60_000, intervalMs: 1000 });
  try {
    assert.equal((await client.get('tls/e2e'))?.value, 'yes');
    const list = await client.memberList();
    assert.equal(list.length, 3);
    for (const m of list) {
      assert.deepEqual(m.peerURLs, [`https://${memberHost(NAME, ns, m.name)}:2380`]);
      assert.deepEqual(m.clientURLs, [`https://${memberHost(NAME, ns, m.name)}:2379`]);
    }
  } finally {
    client.close();
  }
  // Without a client certificate the member refuses the handshake; plain http gets no etcd answer.
  const anonymous = new EtcdClient({ endpoint: `https://${ip}:2379`, tls: { ca: identity.ca, servername: identity.servername }, timeoutMs: 5000 });
  const plain = new EtcdClient({ endpoint: `http://${ip}:2379`, timeoutMs: 5000 });
  try {
    await assert.rejects(anonymous.get('tls/e2e'), 'no client certificate');
    await assert.rejects(plain.get('tls/e2e'), 'plain http');
  } finally {
    anonymous.close();
    plain.close();
  }

  // Each member serves its own Secret's certificates, which carry the names design §3.2 gives them.
  const members = s.members.map((m) => m.name);
  const want = await secretCertificates(ns, members);
  const got = await servedCertificates(ns, NAME);
  for (const m of members) {
    assert.equal(got.get(m)?.client, want.get(m)?.client, `${m} serves its server.crt on 2379: ${JSON.stringify(got.get(m))}`);
    assert.equal(got.get(m)?.peer, want.get(m)?.peer, `${m} serves its peer.crt on 2380: ${JSON.stringify(got.get(m))}`);
    const d = await secretData(env.client, ns, memberTLSSecretName(m));
    const server = new X509Certificate(d['server.crt']!);
    for (const host of [memberHost(NAME, ns, m), `${NAME}-client`, `${NAME}-client.${ns}.svc`, 'localhost']) assert.equal(server.checkHost(host, { subject: 'never' }), host, `${m}'s server certificate names ${host}`);
    assert.equal(server.checkIP('127.0.0.1'), '127.0.0.1');
    const peer = new X509Certificate(d['peer.crt']!);
    assert.equal(peer.checkHost(memberHost(NAME, ns, m), { subject: 'never' }), memberHost(NAME, ns, m));
    assert.equal(peer.checkHost(`${NAME}-client.${ns}.svc`, { subject: 'never' }), undefined, 'the peer certificate names only the member');
  }
  // The peer port admits a member's peer certificate and refuses the client certificate (signed by the client CA,
  // which the peer port does not trust): a client certificate can never join the raft transport.
  const p0 = (await pods(ns, NAME))[0]!;
  const own = await secretData(env.client, ns, memberTLSSecretName(p0.metadata.name));
  const peerPort = { host: p0.status!.podIP!, port: 2380, servername: memberHost(NAME, ns, p0.metadata.name), ca: own['peer-ca.crt']! };
  assert.equal(await httpsGet({ ...peerPort, cert: own['peer.crt']!, key: own['peer.key']! }, '/version'), 200);
  await assert.rejects(httpsGet({ ...peerPort, cert: identity.cert!, key: identity.key! }, '/version'), /alert unknown ca/);

  const checker = await startChecker(ns, NAME);
  await eventually('the data checker past 120 acknowledged writes', () => checker.stats().acknowledged > 120, { timeoutMs: 120_000 });
  await verifyNoWriteLost(checker, 'new TLS cluster');
  await env.client.delete(EtcdClusters, { namespace: ns, name: NAME });
  await eventually(`the pods of ${NAME} gone`, async () => (await pods(ns, NAME)).length === 0, { timeoutMs: 120_000, intervalMs: 1000 });
});

test('rotate-certificates while writing: every member serves new certificates on both ports, no restart, no write lost', async () => {
  const ns = await env.namespace('tls-rotate', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  const NAME = 'rot';
  await applyCluster(env.client, ns, NAME, TLS_SPEC);
  const s = await waitAvailable(env.client, ns, NAME, 3, 300_000);
  const members = s.members.map((m) => m.name);
  const initial = await secretCertificates(ns, members);
  const podsBefore = new Map((await pods(ns, NAME)).map((p) => [p.metadata.name, { uid: p.metadata.uid, restarts: restarts(p) }]));
  const checker = await startChecker(ns, NAME);

  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { metadata: { annotations: { 'etcd.quorum.dev/rotate-certificates': 'e2e-1' } } });
  // The positive signal: every Secret reissued under the request.
  const reissued = await eventually('every member Secret issued again', async () => {
    const now = await secretCertificates(ns, members);
    return members.every((m) => now.get(m)!.client !== initial.get(m)!.client && now.get(m)!.peer !== initial.get(m)!.peer) ? now : undefined;
  }, { timeoutMs: 60_000, intervalMs: 1000 });
  // The kubelet refreshes Secret volumes on its sync period (about a minute), and etcd reads the files on its next handshake.
  await eventually('every member serving its new certificates on 2379 and 2380', async () => {
    const got = await servedCertificates(ns, NAME);
    return members.every((m) => got.get(m)?.client === reissued.get(m)!.client && got.get(m)?.peer === reissued.get(m)!.peer) ? got : undefined;
  }, { timeoutMs: 240_000, intervalMs: 2000 });

  for (const p of await pods(ns, NAME)) {
    assert.equal(p.metadata.uid, podsBefore.get(p.metadata.name)?.uid, `${p.metadata.name} was not recreated`);
    assert.equal(restarts(p), podsBefore.get(p.metadata.name)?.restarts, `${p.metadata.name}'s etcd was not restarted`);
  }
  const state = await waitAvailable(env.client, ns, NAME, 3);
  assert.equal(state.cluster.status?.conditions?.find((c) => c.type === 'Degraded')?.status, 'False', describe(state));
  // The data checker kept its old client certificate throughout: it stays valid (same CA) until it expires.
  // A rotation can finish within seconds, so the positive signal that writes flow on the new certificates is
  // more writes acknowledged after every member serves them, not a total.
  const afterRotation = checker.stats().acknowledged;
  await eventually('the data checker acknowledged 50 more writes after the rotation', () => checker.stats().acknowledged >= afterRotation + 50, { timeoutMs: 120_000 });
  assert.equal(checker.stats().unacknowledged, 0, 'no request failed beyond the client\'s retries: nothing restarted, and etcd served the new certificates on new handshakes');
  await verifyNoWriteLost(checker, 'rotation', { minAcknowledged: 70 });
  await env.client.delete(EtcdClusters, { namespace: ns, name: NAME });
  await eventually(`the pods of ${NAME} gone`, async () => (await pods(ns, NAME)).length === 0, { timeoutMs: 120_000, intervalMs: 1000 });
});

test('plaintext to TLS in place while writing: every member gets its certificates, then each switches its peer URL to https (the leader last); same members, IDs and volumes; plain http refused at the end; no acknowledged write lost', async () => {
  const ns = await env.namespace('tls-in-place', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  const NAME = 'plain';
  await applyCluster(env.client, ns, NAME, { replicas: 3, tls: { disabled: true } });
  const before = await waitAvailable(env.client, ns, NAME, 3);
  const ids = (s: ClusterState): string[] => s.members.map((m) => `${m.name}=${m.id}`).sort();
  const claims = async (): Promise<string[]> => ((await env.client.list(PersistentVolumeClaims, { namespace: ns, labelSelector: `app.kubernetes.io/instance=${NAME}` })).items.map((c) => `${c.metadata.name}=${c.metadata.uid}`).sort());
  const claimsBefore = await claims();
  const ip = await serviceIP(ns, NAME);
  const plainEndpoint = `http://${ip}:2379`;
  // An application on plain http, as before TLS; it moves to https once every member serves both.
  const plainChecker = new DataChecker({ endpoints: [plainEndpoint], ratePerSecond: 20, retries: 3 });
  checkers.push(plainChecker);
  plainChecker.start();
  await eventually('the plain-http data checker writing', () => plainChecker.stats().acknowledged >= 20, { timeoutMs: 60_000 });

  await applyCluster(env.client, ns, NAME, TLS_SPEC);
  // The positive signal of the first pass: every pod serves https beside http (or already https only).
  const served = (p: PodObj): string => p.metadata.annotations?.[CLIENT_TLS_ANNOTATION] ?? 'off';
  await eventually('every member serving https beside http', async () => {
    const ps = (await pods(ns, NAME)).filter((p) => !p.metadata.deletionTimestamp);
    return ps.length === 3 && ps.every((p) => served(p) !== 'off') ? ps : undefined;
  }, { timeoutMs: 600_000, intervalMs: 2000 });
  const identity = await clientIdentity(ns, NAME);
  const tlsChecker = new DataChecker({ endpoints: [`https://${ip}:2379`], tls: identity, ratePerSecond: 20, retries: 3 });
  checkers.push(tlsChecker);
  tlsChecker.start();
  await eventually('the https data checker writing', () => tlsChecker.stats().acknowledged >= 20, { timeoutMs: 60_000 });
  await plainChecker.stop();

  // The end: etcd lists every peer URL as https, every pod serves https only, and the rollout is over.
  const done = await eventually('every member on TLS, peer and client', async () => {
    const s = await getCluster(env.client, ns, NAME);
    const ps = (await pods(ns, NAME)).filter((p) => !p.metadata.deletionTimestamp);
    const finished = s.available && !s.cluster.status?.rollout && s.members.length === 3 && s.members.every((m) => m.ready && (m.peerURL ?? '').startsWith('https://') && (m.clientURL ?? '').startsWith('https://')) &&
      ps.length === 3 && ps.every((p) => served(p) === 'on');
    return finished ? s : undefined;
  }, { timeoutMs: 900_000, intervalMs: 2000 });
  assert.deepEqual(ids(done), ids(before), 'the same members, with the same IDs');
  assert.deepEqual(await claims(), claimsBefore, 'the same volumes');
  assert.match(done.cluster.status?.clientEndpoint ?? '', /^https:\/\//);
  const seen = await events(ns, NAME);
  assert.equal(seen.filter((e) => e.reason === 'PeerURLSwitched').length, 3, 'each member switched once');
  for (const reason of ['CertificatesIssued', 'RollingUpdateStarted', 'LeaderMoved', 'RollingUpdateCompleted']) assert.ok(seen.some((e) => e.reason === reason), reason);
  for (const reason of ['MemberRemoved', 'UpgradeFailed', 'StepStalled']) assert.ok(!seen.some((e) => e.reason === reason), `no ${reason}`);

  // Plain http is gone: the client Service no longer answers it.
  await assert.rejects(new EtcdClient({ endpoint: plainEndpoint, timeoutMs: 3000 }).version(), 'plain http is refused');
  const afterSwitch = tlsChecker.stats().acknowledged;
  await eventually('the https data checker acknowledged 50 more writes after the last member switched', () => tlsChecker.stats().acknowledged >= afterSwitch + 50, { timeoutMs: 120_000 });
  await verifyNoWriteLost(tlsChecker, 'TLS in place, https', { minAcknowledged: 70 });
  // What was written over plain http is all there, read back over https.
  const plainReport = await plainChecker.verify({ endpoints: [`https://${ip}:2379`], tls: identity, timeoutMs: 60_000 });
  process.stderr.write(`data checker (TLS in place, plain http): ${plainReport.acknowledged} acknowledged, ${plainReport.unacknowledged} failed or unacknowledged, lost ${plainReport.lost.length}, corrupted ${plainReport.corrupted.length}\n`);
  assert.ok(plainReport.acknowledged >= 20);
  assert.deepEqual(plainReport.lost, []);
  assert.deepEqual(plainReport.corrupted, []);

  // TLS cannot be turned off in place: refused, and nothing changes.
  await assert.rejects(applyCluster(env.client, ns, NAME, { replicas: 3 }), /spec.tls cannot be removed/);
  await env.client.delete(EtcdClusters, { namespace: ns, name: NAME });
  await eventually(`the pods of ${NAME} gone`, async () => (await pods(ns, NAME)).length === 0, { timeoutMs: 120_000, intervalMs: 1000 });
});

test('rotate-ca while writing: each operator-managed CA goes through TrustNew, Reissue and DropOld; every member ends serving certificates of the new CAs; same members; no acknowledged write lost', async () => {
  const ns = await env.namespace('tls-ca', { labels: { ...RESTRICTED_NAMESPACE_LABELS } });
  const NAME = 'ca';
  await applyCluster(env.client, ns, NAME, TLS_SPEC);
  const before = await waitAvailable(env.client, ns, NAME, 3, 300_000);
  const ids = (s: ClusterState): string[] => s.members.map((m) => `${m.name}=${m.id}`).sort();
  const caCert = async (secret: string): Promise<X509Certificate> => new X509Certificate((await secretData(env.client, ns, secret))['tls.crt']!);
  const oldPeerCA = await caCert(`${NAME}-peer-ca`);
  const oldClientCA = await caCert(`${NAME}-client-ca`);
  const first = await startChecker(ns, NAME);

  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: NAME }, { metadata: { annotations: { 'etcd.quorum.dev/rotate-ca': 'e2e-ca-1' } } });
  // An application moves to the new client certificate once it is signed by the new client CA (the Reissue step),
  // well before the old CA is dropped: the members first have to serve the new one, which takes the kubelet's refresh.
  await eventually('the client certificate signed by the new client CA', async () => {
    const ca = await caCert(`${NAME}-client-ca`);
    const leaf = new X509Certificate((await secretData(env.client, ns, clientTLSSecretName(NAME)))['tls.crt']!);
    return ca.fingerprint256 !== oldClientCA.fingerprint256 && leaf.verify(ca.publicKey);
  }, { timeoutMs: 900_000, intervalMs: 1000 });
  const second = await startChecker(ns, NAME);
  await first.stop();

  const done = await eventually('both CAs rotated: one CA in each bundle, the rotation token recorded, no rotation and no step in status', async () => {
    const peer = await secretData(env.client, ns, `${NAME}-peer-ca`);
    const client = await secretData(env.client, ns, `${NAME}-client-ca`);
    const s = await getCluster(env.client, ns, NAME);
    const finished = [peer, client].every((d) => d['rotation-token'] === 'e2e-ca-1' && !d['previous.crt'] && !d['next.crt'] && (d['ca.crt'] ?? '').match(/BEGIN CERTIFICATE/g)?.length === 1) &&
      s.available && !s.cluster.status?.rollout && !s.cluster.status?.tls?.peer?.caRotation && !s.cluster.status?.tls?.client?.caRotation &&
      // Steady too: right after DropOld the members' Secrets are reissued and a member restarts (status.step
      // names it) while neither rollout nor caRotation is set; dialing the members then found one not serving.
      !s.cluster.status?.step;
    return finished ? s : undefined;
  }, { timeoutMs: 900_000, intervalMs: 2000 });
  const newPeerCA = await caCert(`${NAME}-peer-ca`);
  const newClientCA = await caCert(`${NAME}-client-ca`);
  assert.notEqual(newPeerCA.fingerprint256, oldPeerCA.fingerprint256);
  assert.notEqual(newClientCA.fingerprint256, oldClientCA.fingerprint256);
  assert.deepEqual(ids(done), ids(before), 'the same members, with the same IDs');

  // Every member serves certificates of the new CAs on both ports, and trusts only them: the old client
  // certificate (kept by the first checker's identity) is refused now.
  const identity = await clientIdentity(ns, NAME);
  for (const p of await pods(ns, NAME)) {
    const own = await secretData(env.client, ns, memberTLSSecretName(p.metadata.name));
    const servername = memberHost(NAME, ns, p.metadata.name);
    const client = await served(p.status!.podIP!, 2379, { servername, ca: identity.ca!, cert: identity.cert!, key: identity.key! });
    const peer = await served(p.status!.podIP!, 2380, { servername, ca: own['peer-ca.crt']!, cert: own['peer.crt']!, key: own['peer.key']! });
    assert.ok(client.certificate && new X509Certificate(client.certificate.raw).verify(newClientCA.publicKey), `${p.metadata.name} serves clients a certificate of the new client CA`);
    assert.ok(peer.certificate && new X509Certificate(peer.certificate.raw).verify(newPeerCA.publicKey), `${p.metadata.name} serves peers a certificate of the new peer CA`);
  }
  const seen = await events(ns, NAME);
  assert.equal(seen.filter((e) => e.reason === 'CARotation').length, 6, 'three steps for each CA');
  for (const reason of ['MemberRemoved', 'UpgradeFailed', 'StepStalled']) assert.ok(!seen.some((e) => e.reason === reason), `no ${reason}`);

  const afterRotation = second.stats().acknowledged;
  await eventually('the second data checker acknowledged 50 more writes after the rotation', () => second.stats().acknowledged >= afterRotation + 50, { timeoutMs: 120_000 });
  await verifyNoWriteLost(second, 'CA rotation, new client certificate', { minAcknowledged: 70 });
  const firstReport = await first.verify({ endpoints: [`https://${await serviceIP(ns, NAME)}:2379`], tls: identity, timeoutMs: 60_000 });
  process.stderr.write(`data checker (CA rotation, old client certificate): ${firstReport.acknowledged} acknowledged, ${firstReport.unacknowledged} failed or unacknowledged, lost ${firstReport.lost.length}, corrupted ${firstReport.corrupted.length}\n`);
  assert.ok(firstReport.acknowledged >= 20);
  assert.deepEqual(firstReport.lost, []);
  assert.deepEqual(firstReport.corrupted, []);
  await env.client.delete(EtcdClusters, { namespace: ns, name: NAME });
  await eventually(`the pods of ${NAME} gone`, async () => (await pods(ns, NAME)).length === 0, { timeoutMs: 120_000, intervalMs: 1000 });
});
