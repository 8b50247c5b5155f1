// Secrets at the operator-managed TLS names that are not the cluster's (issue 23, finding 5): a Secret someone
// else made under `<cluster>-peer-ca` is neither adopted as the CA nor overwritten; the cluster reports it
// (Degraded TLSSecretInvalid, naming it) and goes on once it is out of the way. The operator runs in-cluster with
// its generated RBAC; the API server decides every read and write.
// And each cluster's NetworkPolicy (issue 23, finding 3), on a default cluster (TLS, policy on) while the
// first test runs: a pod of its namespace reaches the client port, a pod of another namespace reaches neither
// the client nor the peer port (localkube enforces NetworkPolicy, docs/localkube.md), and the operator, in its
// own namespace, still manages the cluster through the policy.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
// @shared operator
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import { NetworkPolicies, Pods, Secrets, Services, type Pod } from '@quorum/runtime';
import type { TestEnv } from '@quorum/localkube/testing';
import { EtcdClusters } from '../../src/resources.ts';
import { peerCASecretName } from '../../src/tls/secrets.ts';
import { applyCluster, eventually, memberPods, operatorImage, setUpOperator, waitAvailable } from './support.ts';

let env: TestEnv;
let ns: string;
let otherNs: string;
const FENCED = 'fenced';
before(async () => {
  env = await setUpOperator();
  ns = await env.namespace('tls-owner');
  otherNs = await env.namespace('tls-owner-out');
  // Started now, to come up while the first test runs: a default cluster, and a probe in each namespace.
  await applyCluster(env.client, ns, FENCED, { replicas: 1 });
  await probePod(otherNs, {});
  await probePod(ns, {});
});
after(() => env.stop());

const PROBE = 'probe';

/** A pod that only sleeps, in the operator's image (it has node, which connects for probeConnect). */
async function probePod(namespace: string, labels: Record<string, string>): Promise<void> {
  await env.client.create(Pods, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: PROBE, namespace, labels },
    spec: {
      automountServiceAccountToken: false,
      terminationGracePeriodSeconds: 0,
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [{
        name: PROBE,
        image: operatorImage,
        imagePullPolicy: 'IfNotPresent',
        command: ['/usr/local/bin/node', '-e', 'setInterval(() => {}, 1 << 30)'],
        securityContext: { allowPrivilegeEscalation: false, capabilities: { drop: ['ALL'] }, readOnlyRootFilesystem: true },
      }],
    },
  });
}

/** A TCP connection from the probe of `namespace` to host:port: `open`, `timeout`, or the error's code (a policy's REJECT: ECONNREFUSED). */
async function probeConnect(namespace: string, host: string, port: number): Promise<string> {
  const script = `const s = require('node:net').connect({ host: ${JSON.stringify(host)}, port: ${port}, timeout: 3000 });`
    + "s.on('connect', () => { console.log('open'); s.destroy(); }); s.on('timeout', () => { console.log('timeout'); s.destroy(); }); s.on('error', (e) => console.log(e.code));";
  return (await env.kube.kubectl(['exec', '-n', namespace, PROBE, '--', '/usr/local/bin/node', '-e', script], { allowFailure: true })).trim();
}

const running = async (namespace: string): Promise<Pod | undefined> => {
  const pod = await env.client.find(Pods, { namespace, name: PROBE });
  return pod?.status?.containerStatuses?.[0]?.state?.running ? pod : undefined;
};

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

test("a default cluster's NetworkPolicy: its namespace reaches 2379, another namespace neither 2379 nor 2380; clientsFrom narrows it; the operator still manages the cluster", async () => {
  await waitAvailable(env.client, ns, FENCED, 1);
  const policy = await env.client.get(NetworkPolicies, { namespace: ns, name: FENCED });
  assert.ok(policy.metadata.ownerReferences?.some((r) => r.kind === 'EtcdCluster' && r.name === FENCED && r.controller === true), 'owned by the cluster');
  const [member] = await memberPods(env.client, ns, FENCED);
  const memberIP = member!.status!.podIP!;
  const serviceIP = (await env.client.get(Services, { namespace: ns, name: `${FENCED}-client` })).spec!.clusterIP!;
  await eventually('both probes running', async () => (await running(ns)) && (await running(otherNs)), { timeoutMs: 60_000 });

  // The positive signal first: the agent has synced the policy with the namespace's probe in its allow rule.
  await eventually("the cluster's namespace reaches the client port, by pod IP and Service", async () =>
    (await probeConnect(ns, memberIP, 2379)) === 'open' && (await probeConnect(ns, serviceIP, 2379)) === 'open', { timeoutMs: 60_000 });
  // The other probe's network works: it reaches an unrestricted pod (CoreDNS, through its Service).
  const dns = (await env.client.get(Services, { namespace: 'kube-system', name: 'kube-dns' })).spec!.clusterIP!;
  assert.equal(await probeConnect(otherNs, dns, 53), 'open', 'the other namespace reaches CoreDNS');
  for (const [what, host, port] of [['client port', memberIP, 2379], ['client Service', serviceIP, 2379], ['peer port', memberIP, 2380], ['metrics port', memberIP, 2381]] as const) {
    assert.equal(await probeConnect(otherNs, host, port), 'ECONNREFUSED', `another namespace must not reach the ${what}`);
  }
  assert.equal(await probeConnect(ns, memberIP, 2380), 'ECONNREFUSED', 'the peer port admits the members only');

  // clientsFrom narrows the clients to labelled pods: the unlabelled probe is refused once the operator has
  // applied it, and the operator, which reads the member through the policy, reports the new generation Available.
  await env.client.mergePatch(EtcdClusters, { namespace: ns, name: FENCED }, { spec: { network: { clientsFrom: [{ podSelector: { matchLabels: { role: 'client' } } }] } } });
  await eventually("the namespace's unlabelled probe refused", async () => (await probeConnect(ns, memberIP, 2379)) === 'ECONNREFUSED', { timeoutMs: 60_000 });
  await waitAvailable(env.client, ns, FENCED, 1, 60_000);
});
