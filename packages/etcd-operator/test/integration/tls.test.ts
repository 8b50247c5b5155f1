// TLS on a real cluster (issue 9 item 4, docs/tls.md), in restricted namespaces, with the data checker writing
// through the client Service over mutual TLS:
// - a new 3-member cluster without spec.tls gets operator-managed peer and client TLS (the default) and becomes Available; the client Service answers
//   only a client that presents <cluster>-client-tls (no certificate: the handshake is refused; plain http: no
//   answer), every member's peer URL is https, and each member serves the certificates of its Secret, with the
//   names design §3.2 gives them;
// - the etcd.quorum.dev/rotate-certificates annotation has every member serve new certificates on both ports
//   without a restart (same pod UIDs, same restart counts), while writing, with no acknowledged write lost;
// (the CA rotation is in tls-ca-rotation.test.ts, so that the two files run side by side)
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
import { after, before, test } from 'node:test';
import { PersistentVolumeClaims } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { memberHost } from '../../src/names.ts';
import { CLIENT_TLS_ANNOTATION } from '../../src/tls/members.ts';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';
import { EtcdClient } from '../../src/etcd/client.ts';
import { EtcdClusters } from '../../src/resources.ts';
import { DataChecker } from '../../src/testing/data-checker.ts';
import { memberTLSSecretName } from '../../src/tls/secrets.ts';
import { applyCluster, eventually, getCluster, setUpOperator, verifyNoWriteLost, waitAvailable, type ClusterState } from './support.ts';
import { TLS_SPEC, tlsViews, type PodObj } from './tls-support.ts';

let env: TestEnv;
const checkers: DataChecker[] = [];

before(async () => {
  env = await setUpOperator();
});
after(async () => {
  for (const c of checkers) await c.close();
  await env.stop();
});

const { describe, pods, events, restarts, secretData, clientIdentity, serviceIP, httpsGet, startChecker, servedCertificates, secretCertificates } = tlsViews(() => env, checkers);

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
