// An operator-managed CA rotation on a real cluster (issue 9 item 4, docs/tls.md), in a restricted namespace, with
// the data checker writing over mutual TLS: the etcd.quorum.dev/rotate-ca annotation takes each CA (peer, client)
// through TrustNew, Reissue and DropOld; every member ends serving certificates of the new CAs, with the same members
// and IDs, and no acknowledged write is lost, by a client that moved to the new client certificate nor by one that
// kept the old one until the old CA was dropped. (tls.test.ts has the rest of TLS; the two run side by side.)
// Every absence is asserted only after a positive signal.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
// @timeout 30m: a CA rotation of two CAs, each step bounded at 15 minutes
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { after, before, test } from 'node:test';
import type { TestEnv } from '@quorum/localkube/testing';
import { memberHost } from '../../src/names.ts';
import { RESTRICTED_NAMESPACE_LABELS } from '../../src/deploy/manifests.ts';
import { EtcdClusters } from '../../src/resources.ts';
import type { DataChecker } from '../../src/testing/data-checker.ts';
import { clientTLSSecretName, memberTLSSecretName } from '../../src/tls/secrets.ts';
import { applyCluster, eventually, getCluster, setUpOperator, verifyNoWriteLost, waitAvailable, type ClusterState } from './support.ts';
import { TLS_SPEC, tlsViews } from './tls-support.ts';

let env: TestEnv;
const checkers: DataChecker[] = [];

before(async () => {
  env = await setUpOperator();
});
after(async () => {
  for (const c of checkers) await c.close();
  await env.stop();
});

const { pods, events, secretData, clientIdentity, serviceIP, served, startChecker } = tlsViews(() => env, checkers);

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
