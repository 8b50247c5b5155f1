// Secrets at the operator-managed TLS names that are not the cluster's (issue 23, finding 5): a Secret someone
// else made under `<cluster>-peer-ca` is neither adopted as the CA nor overwritten; the cluster reports it
// (Degraded TLSSecretInvalid, naming it) and goes on once it is out of the way. The operator runs in-cluster with
// its generated RBAC; the API server decides every read and write.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { Secrets } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { EtcdClusters } from '../../src/resources.ts';
import { peerCASecretName } from '../../src/tls/secrets.ts';
import { applyCluster, eventually, setUpOperator } from './support.ts';

let env: TestEnv;
let ns: string;
before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('tls-owner');
});
after(() => env.stop());

test("a foreign Secret at the peer CA's name is reported, never adopted or overwritten; once gone, the operator issues its own", async () => {
  const name = 'owned';
  const caName = peerCASecretName(name);
  const foreign = await env.client.create(Secrets, { apiVersion: 'v1', kind: 'Secret', metadata: { name: caName, namespace: ns }, type: 'Opaque', data: { note: Buffer.from('not a CA of the operator').toString('base64') } });
  await applyCluster(env.client, ns, name, { replicas: 1, tls: { peer: {}, client: {} } });

  const degraded = await eventually('Degraded TLSSecretInvalid naming the foreign Secret', async () => {
    const cluster = await env.client.get(EtcdClusters, { namespace: ns, name });
    const c = cluster.status?.conditions?.find((x) => x.type === 'Degraded' && x.status === 'True' && x.reason === 'TLSSecretInvalid');
    return c?.message?.includes(`Secret ${caName} is in the way`) ? c : undefined;
  }, { timeoutMs: 60_000 });
  assert.match(degraded.message ?? '', /it has no owner/);
  const after = await env.client.get(Secrets, { namespace: ns, name: caName });
  assert.equal(after.metadata.resourceVersion, foreign.metadata.resourceVersion, 'the foreign Secret was written to');
  assert.equal(after.metadata.ownerReferences, undefined);
  const pods = await env.kube.kubectl(['get', 'pods', '-n', ns, '-l', `app.kubernetes.io/instance=${name}`, '-o', 'name']);
  assert.equal(pods.trim(), '', 'no member starts while its CA is in doubt');

  await env.client.delete(Secrets, { namespace: ns, name: caName });
  const own = await eventually("the operator's own peer CA", async () => {
    const secret = await env.client.find(Secrets, { namespace: ns, name: caName });
    return secret?.metadata.ownerReferences?.some((r) => r.kind === 'EtcdCluster' && r.name === name && r.controller === true) ? secret : undefined;
  }, { timeoutMs: 60_000 });
  assert.ok(own.data?.['ca.crt'], 'the issued CA Secret holds ca.crt');
  await env.client.delete(EtcdClusters, { namespace: ns, name });
});
