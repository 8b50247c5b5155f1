// A cluster with spec.tls, from the spec to what the operator renders, decides, observes and writes: the member
// pod (Secret volumes, etcd's flags, https URLs), the plan's TLS steps, the Secrets it issues through a Kubernetes
// API held in memory, how it dials members, and status. Real etcd accepting the rendered flags is tls-etcd.test.ts.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { parse } from 'yaml';
import { errorsOf, validateEtcdCluster } from '../../src/api/defaults.ts';
import { AlreadyExistsError, NotFoundError, type KubeObject } from '@quorum/runtime';
import { plan, type Observed, type ObservedMember, type ObservedPod } from '../../src/cluster/plan/index.ts';
import { memberPod, outdatedFields, templateFingerprint } from '../../src/cluster/resources.ts';
import { rolloutTarget } from '../../src/cluster/rollout.ts';
import { applyDefaults, type EtcdCluster, type EtcdClusterSpec } from '../../src/cluster/spec.ts';
import { buildStatus } from '../../src/cluster/status.ts';
import { caBundleHash, CLIENT_TLS_ANNOTATION, clientEndpoint, inPodEtcdctlFlags, MEMBER_TLS_DIR, peerSkipSANFlag } from '../../src/tls/members.ts';
import { effectiveTLS } from '../../src/tls/defaults.ts';
import { clientIdentitySecret, membersWithSecrets, observeTLS, secretContents, writeTLSSecrets, TLSNotReadyError } from '../../src/tls/cluster-secrets.ts';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import { backupJob, CLIENT_TLS_DIR } from '../../src/backup/job.ts';
import { clientCAProfile, clientCertificateProfile } from '../../src/tls/issue.ts';
import { clientCASecretName, clientTLSSecretName, memberTLSSecretName, peerCASecretName } from '../../src/tls/secrets.ts';
import { issueCertificate } from '@quorum/kit';

const cluster = (spec: EtcdClusterSpec = {}): EtcdCluster => ({ apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'c', namespace: 'ns', uid: 'uid-1' }, spec });
const podOf = (spec: EtcdClusterSpec, member = 'c-0') =>
  memberPod(cluster(spec), applyDefaults(spec), { member, initialClusterState: 'new', initialCluster: [`${member}=https://${member}.c.ns.svc:2380`] });
const etcdArgs = (spec: EtcdClusterSpec): string[] => podOf(spec).spec.containers[0]!.args!;
const flag = (args: string[], name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

test('operator-managed TLS: https listeners and URLs, the flags of design §3.4, the member Secret mounted whole', () => {
  const pod = podOf({ version: '3.6.16', tls: { peer: {}, client: {} } });
  const args = pod.spec.containers[0]!.args!;
  assert.equal(flag(args, 'listen-peer-urls'), 'https://0.0.0.0:2380');
  assert.equal(flag(args, 'listen-client-urls'), 'https://0.0.0.0:2379');
  assert.equal(flag(args, 'listen-metrics-urls'), 'http://0.0.0.0:2381', 'probes read /health without a certificate');
  assert.equal(flag(args, 'advertise-client-urls'), 'https://c-0.c.ns.svc:2379');
  assert.equal(flag(args, 'initial-advertise-peer-urls'), 'https://c-0.c.ns.svc:2380');
  assert.equal(flag(args, 'cert-file'), `${MEMBER_TLS_DIR}/server.crt`);
  assert.equal(flag(args, 'key-file'), `${MEMBER_TLS_DIR}/server.key`);
  assert.equal(flag(args, 'trusted-ca-file'), `${MEMBER_TLS_DIR}/client-ca.crt`);
  assert.equal(flag(args, 'client-cert-auth'), 'true');
  assert.equal(flag(args, 'peer-cert-file'), `${MEMBER_TLS_DIR}/peer.crt`);
  assert.equal(flag(args, 'peer-key-file'), `${MEMBER_TLS_DIR}/peer.key`);
  assert.equal(flag(args, 'peer-trusted-ca-file'), `${MEMBER_TLS_DIR}/peer-ca.crt`);
  assert.equal(flag(args, 'peer-client-cert-auth'), 'true');
  assert.ok(args.includes('--peer-skip-client-san-verification'));

  assert.deepEqual(pod.spec.volumes!.find((v) => v.name === 'tls'), { name: 'tls', secret: { secretName: 'c-0-tls', defaultMode: 0o440 } });
  const mount = pod.spec.containers[0]!.volumeMounts!.find((m) => m.name === 'tls');
  assert.deepEqual(mount, { name: 'tls', mountPath: MEMBER_TLS_DIR, readOnly: true }, 'no subPath: the kubelet never updates a subPath mount');
  assert.equal(pod.metadata.annotations?.[CLIENT_TLS_ANNOTATION], 'on');
  // Probes stay on the plaintext metrics port.
  assert.equal(pod.spec.containers[0]!.readinessProbe?.httpGet?.port, 2381);
});

test('the peer client-SAN flag goes by the name the release knows', () => {
  assert.equal(peerSkipSANFlag('3.6.16'), '--peer-skip-client-san-verification');
  assert.equal(peerSkipSANFlag('3.5.35'), '--experimental-peer-skip-client-san-verification');
  assert.equal(peerSkipSANFlag('3.4.37'), '--experimental-peer-skip-client-san-verification');
  assert.ok(etcdArgs({ version: '3.5.35', tls: { peer: {} } }).includes('--experimental-peer-skip-client-san-verification'));
});

test("a user's Secrets: each mounted whole in its own directory, with the kubernetes.io/tls key names", () => {
  const pod = podOf({ tls: { peer: { secretName: 'peer-certs' }, client: { secretName: 'client-certs' } } });
  const args = pod.spec.containers[0]!.args!;
  assert.deepEqual(
    pod.spec.volumes!.filter((v) => v.secret).map((v) => [v.name, v.secret!.secretName]),
    [['client-tls', 'client-certs'], ['peer-tls', 'peer-certs']],
  );
  assert.equal(flag(args, 'cert-file'), '/etc/etcd/client-tls/tls.crt');
  assert.equal(flag(args, 'trusted-ca-file'), '/etc/etcd/client-tls/ca.crt');
  assert.equal(flag(args, 'peer-key-file'), '/etc/etcd/peer-tls/tls.key');
  assert.equal(flag(args, 'peer-trusted-ca-file'), '/etc/etcd/peer-tls/ca.crt');
});

test('peer TLS alone: clients stay on http, and the pod says so', () => {
  const pod = podOf({ tls: { peer: {} } });
  const args = pod.spec.containers[0]!.args!;
  assert.equal(flag(args, 'listen-client-urls'), 'http://0.0.0.0:2379');
  assert.equal(flag(args, 'cert-file'), undefined);
  assert.equal(flag(args, 'listen-peer-urls'), 'https://0.0.0.0:2380');
  assert.equal(pod.metadata.annotations?.[CLIENT_TLS_ANNOTATION], undefined);
});

test('a cluster without TLS renders as before: no Secret volume, no certificate flag, the same fingerprint keys', () => {
  const pod = podOf({});
  const args = pod.spec.containers[0]!.args!;
  assert.equal(pod.spec.volumes!.some((v) => v.secret), false);
  assert.equal(args.some((a) => /cert|tls|peer-client|peer-skip/.test(a)), false);
  assert.equal(flag(args, 'listen-peer-urls'), 'http://0.0.0.0:2380');
  assert.deepEqual(Object.keys(templateFingerprint(applyDefaults({}))).sort(), ['antiAffinity', 'etcd', 'image', 'podTemplate', 'render']);
  assert.ok('tls' in templateFingerprint(applyDefaults({ tls: { peer: {} } })));
});

test('members are dialled by the scheme their pod serves, with the member host name as TLS server name', () => {
  const credentials = { ca: 'CA', cert: 'CERT', key: 'KEY' };
  const pod = (annotations: Record<string, string>, ip = '10.0.0.7') => ({ metadata: { labels: { 'etcd.quorum.dev/member': 'c-1' }, annotations }, status: { podIP: ip } });
  assert.deepEqual(clientEndpoint(pod({}), 'c', 'ns', credentials), { url: 'http://10.0.0.7:2379' });
  assert.deepEqual(clientEndpoint(pod({ [CLIENT_TLS_ANNOTATION]: 'on' }), 'c', 'ns', credentials), {
    url: 'https://10.0.0.7:2379',
    tls: { ca: 'CA', cert: 'CERT', key: 'KEY', servername: 'c-1.c.ns.svc' },
  });
  assert.equal(clientEndpoint(pod({ [CLIENT_TLS_ANNOTATION]: 'on' }, 'fd00::7'), 'c', 'ns', undefined)?.url, 'https://[fd00::7]:2379');
  assert.equal(clientEndpoint({ metadata: {}, status: {} }, 'c', 'ns', credentials), undefined);
});

// ---- the plan ----

const member = (i: number): ObservedMember => ({ id: String(100 + i), member: `c-${i}`, started: true, learner: false, healthy: true });
const running = (i: number): ObservedPod => ({ member: `c-${i}`, phase: 'Running', ready: true, deleting: false });
function observed(over: Partial<Observed> = {}): Observed {
  return {
    cluster: 'c', replicas: 3, persistent: true, reclaimPolicy: 'Retain',
    pods: [running(0), running(1), running(2)], pvcs: ['c-0', 'c-1', 'c-2'],
    membership: { members: [member(0), member(1), member(2)], leaderId: '100' },
    lastKnownMembers: ['c-0', 'c-1', 'c-2'], bootstrapped: true, bootstrapMembers: ['c-0', 'c-1', 'c-2'], nextMemberIndex: 3,
    now: 1_000_000, crashLoopGraceMs: 60_000, stuckTerminatingReplaceMs: 300_000, refusedRestartMs: 120_000, disasterRecovery: 'Manual',
    rollout: { outdated: [], target: 't', targetVersion: '3.6.16', path: { kind: 'None' }, alarms: [], gateBoundMs: 300_000, minReadyMs: 2000 },
    tls: { issue: [], memberSecrets: ['c-0', 'c-1', 'c-2'] },
    ...over,
  };
}

test('plan: certificates before the first member, and a Secret that fails its check stops everything', () => {
  const fresh = { pods: [], pvcs: [], membership: undefined, lastKnownMembers: [], bootstrapped: false, bootstrapMembers: [], nextMemberIndex: 0 };
  const issue = [{ name: 'c-peer-ca', reason: 'Missing' }, { name: 'c-client-ca', reason: 'Missing' }, { name: 'c-client-tls', reason: 'Missing' }];
  assert.deepEqual(plan(observed({ ...fresh, tls: { issue, memberSecrets: [] } })), {
    type: 'issueTLSSecrets', secrets: issue, detail: 'issuing c-peer-ca (Missing), c-client-ca (Missing), c-client-tls (Missing)',
  });
  assert.equal(plan(observed({ ...fresh, tls: { issue: [], memberSecrets: [] } })).type, 'bootstrap', 'member Secrets come with their pods');
  const invalid = plan(observed({ tls: { issue: [], memberSecrets: [], invalid: 'Secret x (spec.tls.peer) does not exist' }, pods: [running(0), running(1)] }));
  assert.deepEqual(invalid, { type: 'wait', reason: 'TLSSecretInvalid', detail: 'Secret x (spec.tls.peer) does not exist', requeueAfterMs: 30_000 }, 'not even a missing pod is recreated');
  // A renewal goes before anything else the steady cluster might do.
  assert.equal(plan(observed({ tls: { issue: [{ name: 'c-1-tls', reason: 'Expiring' }], memberSecrets: ['c-0', 'c-1', 'c-2'] } })).type, 'issueTLSSecrets');
});

test("plan: a former member's Secret goes once nothing of the member is left; a member being made keeps its own", () => {
  assert.deepEqual(plan(observed({ tls: { issue: [], memberSecrets: ['c-0', 'c-1', 'c-2', 'c-3'] } })), { type: 'deleteTLSSecret', member: 'c-3' });
  // c-3 was added (a learner without a pod yet): its Secret is made with its pod and must not be deleted meanwhile.
  const adding = observed({ replicas: 4, membership: { members: [member(0), member(1), member(2), { ...member(3), started: false, learner: true, healthy: false }], leaderId: '100' }, tls: { issue: [], memberSecrets: ['c-0', 'c-1', 'c-2', 'c-3'] } });
  assert.equal(plan(adding).type, 'createPod');
  assert.deepEqual(plan(observed()), { type: 'steady' });
  // An initial member replaced after bootstrap (its volume wiped, c-0 → c-3): its Secret goes too.
  const replaced = observed({ pods: [running(3), running(1), running(2)], pvcs: ['c-0', 'c-1', 'c-2', 'c-3'], membership: { members: [member(3), member(1), member(2)], leaderId: '100' }, tls: { issue: [], memberSecrets: ['c-0', 'c-1', 'c-2', 'c-3'] } });
  assert.deepEqual(plan({ ...replaced, reclaimPolicy: 'Retain' }), { type: 'deleteTLSSecret', member: 'c-0' });
});

// ---- Secrets through an in-memory API ----

type Obj = KubeObject & { data?: Record<string, string> };
class MemoryAPI {
  readonly objects = new Map<string, Obj>();
  writes: string[] = [];
  #rv = 0;
  find(_type: unknown, key: { namespace?: string; name: string } | string): Promise<Obj | undefined> {
    const k = typeof key === 'string' ? key : `${key.namespace}/${key.name}`;
    return Promise.resolve(structuredClone(this.objects.get(k)));
  }
  create(_type: unknown, obj: Obj): Promise<Obj> {
    const k = `${obj.metadata.namespace}/${obj.metadata.name}`;
    if (this.objects.has(k)) return Promise.reject(new AlreadyExistsError('POST', `/api/v1/namespaces/ns/secrets`, 409, { reason: 'AlreadyExists', message: 'exists' }));
    this.writes.push(`create ${obj.metadata.name}`);
    this.objects.set(k, { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } });
    return Promise.resolve(obj);
  }
  replace(_type: unknown, obj: Obj): Promise<Obj> {
    const k = `${obj.metadata.namespace}/${obj.metadata.name}`;
    const held = this.objects.get(k);
    if (!held) return Promise.reject(new NotFoundError('PUT', `/api/v1/namespaces/ns/secrets/${obj.metadata.name}`, 404, { reason: 'NotFound', message: 'gone' }));
    assert.equal(obj.metadata.resourceVersion, held.metadata.resourceVersion, 'a replace carries the resourceVersion it read');
    this.writes.push(`replace ${obj.metadata.name}`);
    this.objects.set(k, { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++this.#rv) } });
    return Promise.resolve(obj);
  }
  delete(_type: unknown, key: { namespace?: string; name: string }): Promise<void> {
    this.writes.push(`delete ${key.name}`);
    this.objects.delete(`${key.namespace}/${key.name}`);
    return Promise.resolve();
  }
  cached = (name: string): Obj | undefined => this.objects.get(`ns/${name}`);
}

const NOW = new Date('2026-06-01T00:00:00Z');
const tlsCluster = cluster({ tls: { peer: {}, client: {} } });
const write = (api: MemoryAPI, members: string[], mayIssueCA: boolean, now = NOW) =>
  writeTLSSecrets({ client: api as never, cluster: tlsCluster, clusterDomain: 'cluster.local', now, signal: new AbortController().signal, mayIssueCA }, members);
const observe = (api: MemoryAPI, podMembers: string[], podsWithTLS: boolean, spec: EtcdClusterSpec = tlsCluster.spec, now = NOW) =>
  observeTLS({
    client: api as never, cluster: { ...tlsCluster, spec }, spec: applyDefaults(spec), cached: api.cached, podMembers,
    memberSecrets: membersWithSecrets([...api.objects.values()], 'c'), podsWithTLS, clusterDomain: 'cluster.local', now,
  });

test('a new cluster: the CAs and the client Secret first, each member Secret with its pod, then nothing to do', async () => {
  const api = new MemoryAPI();
  const first = await observe(api, [], false);
  assert.deepEqual(first?.observed.issue.map((s) => s.name), ['c-peer-ca', 'c-client-ca', 'c-client-tls']);
  assert.equal(first?.credentials, undefined, 'nothing to dial with yet');
  assert.deepEqual(await write(api, [], true), [{ name: 'c-peer-ca', reason: 'Missing' }, { name: 'c-client-ca', reason: 'Missing' }, { name: 'c-client-tls', reason: 'Missing' }]);
  for (const m of ['c-0', 'c-1', 'c-2']) assert.deepEqual(await write(api, [m], false), [{ name: `${m}-tls`, reason: 'Missing' }]);
  assert.deepEqual(await write(api, ['c-0', 'c-1', 'c-2'], false), [], 'idempotent');

  const after = await observe(api, ['c-0', 'c-1', 'c-2'], true);
  assert.deepEqual(after?.observed, { issue: [], memberSecrets: ['c-0', 'c-1', 'c-2'] });
  const client = secretContents(api.cached(clientTLSSecretName('c')))!;
  assert.deepEqual(after?.credentials, { ca: client['ca.crt'], cert: client['tls.crt'], key: client['tls.key'] });
  assert.equal(after?.status.peer?.mode, 'Operator');
  assert.equal(after?.status.clientSecret, 'c-client-tls');
  assert.equal(after?.status.peer?.notAfter, new X509Certificate(secretContents(api.cached(memberTLSSecretName('c-0')))!['peer.crt']!).validToDate.toISOString());
  assert.equal(after?.clientScheme, 'https');
  // Every Secret is the cluster's (deleted with it) and the operator's (in its informer's label selector).
  for (const s of api.objects.values()) {
    assert.equal(s.metadata.ownerReferences?.[0]?.uid, 'uid-1');
    assert.equal(s.metadata.labels?.['app.kubernetes.io/managed-by'], 'quorum');
  }
});

test('renewal: a member certificate with less than a third of its year left is replaced, the CAs are not', async () => {
  const api = new MemoryAPI();
  await write(api, ['c-0', 'c-1'], true);
  const later = new Date(NOW.getTime() + 250 * 86_400_000);
  const seen = await observe(api, ['c-0', 'c-1'], true, tlsCluster.spec, later);
  assert.deepEqual(seen?.observed.issue, [{ name: 'c-0-tls', reason: 'Expiring' }, { name: 'c-1-tls', reason: 'Expiring' }, { name: 'c-client-tls', reason: 'Expiring' }]);
  api.writes = [];
  await write(api, ['c-0', 'c-1'], false, later);
  assert.deepEqual(api.writes.sort(), ['replace c-0-tls', 'replace c-1-tls', 'replace c-client-tls']);
});

test('a CA lost under running members is reported for a person, never replaced', async () => {
  const api = new MemoryAPI();
  await write(api, ['c-0'], true);
  api.objects.delete(`ns/${peerCASecretName('c')}`);
  const seen = await observe(api, ['c-0'], true);
  assert.match(seen?.observed.invalid ?? '', /the CA Secret c-peer-ca is missing while members hold certificates it signed/);
  assert.deepEqual(seen?.observed.issue, []);
  await assert.rejects(write(api, ['c-0'], false), TLSNotReadyError);
  assert.equal(api.cached(peerCASecretName('c')), undefined);
});

test("a user's Secret: missing, then failing its check, then good; the operator dials with it", async () => {
  const api = new MemoryAPI();
  const spec: EtcdClusterSpec = { tls: { client: { secretName: 'mine' } } };
  assert.match((await observe(api, [], false, spec))?.observed.invalid ?? '', /Secret mine \(spec\.tls\.client\) does not exist in namespace ns/);

  const ca = await issueCertificate(clientCAProfile('corp', 'ns'), NOW);
  const authority = { certificate: ca.certificate, privateKey: ca.privateKey };
  const put = (cert: { certificatePem: string; privateKeyPem: string }): void => {
    api.objects.set('ns/mine', { apiVersion: 'v1', kind: 'Secret', metadata: { name: 'mine', namespace: 'ns' }, data: Object.fromEntries(Object.entries({ 'ca.crt': ca.certificatePem, 'tls.crt': cert.certificatePem, 'tls.key': cert.privateKeyPem }).map(([k, v]) => [k, Buffer.from(v).toString('base64')])) });
  };
  // A client-only certificate: no member host names, no serverAuth.
  put(await issueCertificate(clientCertificateProfile('c'), NOW, authority));
  const bad = await observe(api, [], false, spec);
  assert.match(bad?.observed.invalid ?? '', /does not cover every member host name/);
  assert.match(bad?.observed.invalid ?? '', /lacks the extended key usage serverAuth/);
  assert.equal(bad?.credentials, undefined);

  const good = await issueCertificate(
    { subject: { commonName: 'etcd' }, isCA: false, extendedKeyUsage: ['serverAuth', 'clientAuth'], dnsNames: ['*.c.ns.svc', 'c-client', 'c-client.ns', 'c-client.ns.svc', 'c-client.ns.svc.cluster.local'], ipAddresses: [], validityDays: 20 },
    NOW,
    authority,
  );
  put(good);
  const ok = await observe(api, [], false, spec);
  assert.deepEqual(ok?.observed, { issue: [], memberSecrets: [] }, 'nothing of the operator is issued for a user-only cluster');
  assert.deepEqual(ok?.credentials, { ca: ca.certificatePem, cert: good.certificatePem, key: good.privateKeyPem });
  assert.deepEqual(ok?.status, { client: { mode: 'Secret', notAfter: good.certificate.validToDate.toISOString() }, clientSecret: 'mine' });
  assert.match(ok?.expiring ?? '', /tls\.crt "CN=etcd" expires on .*, in 20 days: update the Secret before then/);
});

test('status: https URLs, TLSSecretInvalid and CertificateExpiring in Degraded, status.tls', () => {
  const base = {
    cluster: 'c', namespace: 'ns', generation: 1, replicas: 1, targetVersion: '3.6.16', previous: undefined, nextMemberIndex: 1, paused: false, now: NOW,
    pods: [running(0)],
    etcd: { membership: { members: [member(0)], leaderId: '100' }, health: [], unreachable: [] },
  };
  const tls = { status: { client: { mode: 'Operator' as const } , clientSecret: 'c-client-tls' }, clientScheme: 'https' as const, peerScheme: 'https' as const };
  const steady = buildStatus({ ...base, action: { type: 'steady' }, tls });
  assert.equal(steady.clientEndpoint, 'https://c-client.ns.svc:2379');
  assert.deepEqual([steady.members?.[0]?.peerURL, steady.members?.[0]?.clientURL], ['https://c-0.c.ns.svc:2380', 'https://c-0.c.ns.svc:2379']);
  assert.deepEqual(steady.tls, tls.status);
  assert.equal(steady.conditions?.find((c) => c.type === 'Degraded')?.status, 'False');

  const expiring = buildStatus({ ...base, action: { type: 'steady' }, tls: { ...tls, expiring: 'tls.crt expires in 3 days' } });
  assert.deepEqual(['status', 'reason', 'message'].map((k) => expiring.conditions?.find((c) => c.type === 'Degraded')?.[k as 'reason']), ['True', 'CertificateExpiring', 'tls.crt expires in 3 days']);

  const invalid = buildStatus({ ...base, action: { type: 'wait', reason: 'TLSSecretInvalid', detail: 'Secret x lacks tls.key', requeueAfterMs: 30_000 }, tls });
  const degraded = invalid.conditions?.find((c) => c.type === 'Degraded');
  assert.deepEqual([degraded?.status, degraded?.reason, degraded?.message], ['True', 'TLSSecretInvalid', 'Secret x lacks tls.key']);
  assert.equal(invalid.conditions?.find((c) => c.type === 'Progressing')?.status, 'False', 'a person must fix it: not a step being retried');

  const plain = buildStatus({ ...base, action: { type: 'steady' } });
  assert.equal(plain.clientEndpoint, 'http://c-client.ns.svc:2379');
  assert.equal(plain.tls, undefined);
});

test("the Secret names are the design's", () => {
  assert.deepEqual([peerCASecretName('c'), clientCASecretName('c'), clientTLSSecretName('c'), memberTLSSecretName('c-0')], ['c-peer-ca', 'c-client-ca', 'c-client-tls', 'c-0-tls']);
});

test('a backup Job of a client-TLS cluster: the client identity Secret mounted whole, https, --tls-dir', () => {
  const backup: EtcdBackup = { metadata: { name: 'b', namespace: 'ns', uid: 'u' }, spec: { clusterName: 'c', destination: { pvc: { claimName: 'store' } } } };
  assert.equal(clientIdentitySecret(applyDefaults({ tls: { client: {} } }), 'c'), 'c-client-tls');
  assert.equal(clientIdentitySecret(applyDefaults({ tls: { client: { secretName: 'mine' } } }), 'c'), 'mine');
  assert.equal(clientIdentitySecret(applyDefaults({ tls: { peer: {} } }), 'c'), undefined, 'peer TLS alone: clients use http');
  type JobShape = { spec: { template: { spec: { volumes: { name: string; secret?: { secretName: string } }[]; containers: { args: string[]; volumeMounts: { name: string; mountPath: string; readOnly?: boolean }[] }[] } } } };
  const job = backupJob(backup, { member: 'c-1', dbSize: 1, agentImage: 'agent', clientTLSSecret: 'c-client-tls' }) as unknown as JobShape;
  const pod = job.spec.template.spec;
  assert.ok(pod.containers[0]!.args.includes('--endpoint=https://c-1.c.ns.svc:2379'));
  assert.ok(pod.containers[0]!.args.includes(`--tls-dir=${CLIENT_TLS_DIR}`));
  assert.deepEqual(pod.volumes.find((v) => v.name === 'client-tls')?.secret?.secretName, 'c-client-tls');
  assert.deepEqual(pod.containers[0]!.volumeMounts.find((m) => m.name === 'client-tls'), { name: 'client-tls', mountPath: CLIENT_TLS_DIR, readOnly: true });
  const plain = backupJob(backup, { member: 'c-1', dbSize: 1, agentImage: 'agent' }) as unknown as JobShape;
  assert.ok(plain.spec.template.spec.containers[0]!.args.includes('--endpoint=http://c-1.c.ns.svc:2379'));
  assert.equal(plain.spec.template.spec.volumes.some((v) => v.name === 'client-tls'), false);
});

test('etcdctl inside a member pod uses the certificate files mounted there', () => {
  assert.deepEqual(inPodEtcdctlFlags(applyDefaults({ tls: { client: {} } })), ['--cacert=/etc/etcd/tls/client-ca.crt', '--cert=/etc/etcd/tls/server.crt', '--key=/etc/etcd/tls/server.key']);
  assert.deepEqual(inPodEtcdctlFlags(applyDefaults({ tls: { client: { secretName: 'mine' } } })), ['--cacert=/etc/etcd/client-tls/ca.crt', '--cert=/etc/etcd/client-tls/tls.crt', '--key=/etc/etcd/client-tls/tls.key']);
  assert.deepEqual(inPodEtcdctlFlags(applyDefaults({ tls: { peer: {} } })), []);
  // Each flag names a file the rendered pod mounts.
  const pod = podOf({ tls: { client: {} } });
  const mounted = pod.spec.containers[0]!.volumeMounts!.map((m) => m.mountPath);
  for (const f of inPodEtcdctlFlags(applyDefaults({ tls: { client: {} } }))) assert.ok(mounted.some((dir) => f.split('=')[1]!.startsWith(`${dir}/`)), f);
});

test('the examples are valid EtcdClusters: tls.yaml writes out the TLS basic.yaml gets by default, plaintext.yaml opts out', async () => {
  const example = async (name: string): Promise<EtcdCluster> => parse(await readFile(join(import.meta.dirname, '..', '..', '..', '..', 'examples', `${name}.yaml`), 'utf8')) as EtcdCluster;
  const [tls, basic, plaintext] = await Promise.all([example('tls'), example('basic'), example('plaintext')]);
  for (const e of [tls, basic, plaintext]) assert.deepEqual(errorsOf(validateEtcdCluster(e)), [], e.metadata.name);
  assert.deepEqual(tls.spec.tls, { peer: {}, client: {} });
  assert.deepEqual(effectiveTLS(basic.spec.tls, {}), tls.spec.tls);
  assert.equal(effectiveTLS(plaintext.spec.tls, {}), undefined);
});

test('rotate-certificates: a new value issues every leaf again (not the CAs), once, recorded on each Secret', async () => {
  const api = new MemoryAPI();
  await write(api, ['c-0', 'c-1'], true);
  const serial = (secret: string, file: string): string => new X509Certificate(secretContents(api.cached(secret))![file]!).serialNumber;
  const before = { peer: serial('c-0-tls', 'peer.crt'), client: serial('c-client-tls', 'tls.crt'), ca: serial('c-peer-ca', 'tls.crt') };
  const rotating = { ...tlsCluster, metadata: { ...tlsCluster.metadata, annotations: { 'etcd.quorum.dev/rotate-certificates': 'r1' } } };
  const seen = await observeTLS({
    client: api as never, cluster: rotating, spec: applyDefaults(rotating.spec), cached: api.cached, podMembers: ['c-0', 'c-1'],
    memberSecrets: ['c-0', 'c-1'], podsWithTLS: true, clusterDomain: 'cluster.local', now: NOW,
  });
  assert.deepEqual(seen?.observed.issue, [{ name: 'c-0-tls', reason: 'RotationRequested' }, { name: 'c-1-tls', reason: 'RotationRequested' }, { name: 'c-client-tls', reason: 'RotationRequested' }]);
  api.writes = [];
  const written = await writeTLSSecrets({ client: api as never, cluster: rotating, clusterDomain: 'cluster.local', now: NOW, signal: new AbortController().signal, mayIssueCA: false }, ['c-0', 'c-1']);
  assert.equal(written.length, 3);
  assert.deepEqual(api.writes.sort(), ['replace c-0-tls', 'replace c-1-tls', 'replace c-client-tls'], 'replaced in place: the pods keep their mounts, etcd reads the new files');
  assert.notEqual(serial('c-0-tls', 'peer.crt'), before.peer);
  assert.notEqual(serial('c-client-tls', 'tls.crt'), before.client);
  assert.equal(serial('c-peer-ca', 'tls.crt'), before.ca, 'the CA stays');
  assert.equal(api.cached('c-1-tls')?.metadata.annotations?.['etcd.quorum.dev/rotate-certificates'], 'r1');
  assert.deepEqual(await writeTLSSecrets({ client: api as never, cluster: rotating, clusterDomain: 'cluster.local', now: NOW, signal: new AbortController().signal, mayIssueCA: false }, ['c-0', 'c-1']), [], 'done once');
});

test('a new CA bundle makes members outdated (etcd loads CAs only at start); a renewed leaf does not', async () => {
  const spec = applyDefaults({ tls: { peer: { secretName: 'mine' } } });
  const pod = memberPod(cluster(spec), spec, { member: 'c-0', initialClusterState: 'new', initialCluster: [], caBundles: { peer: caBundleHash('OLD') } });
  assert.deepEqual(outdatedFields(pod, spec, { peer: caBundleHash('OLD') }), []);
  assert.deepEqual(outdatedFields(pod, spec, { peer: caBundleHash('OLD\nNEW') }), ['tls']);
  assert.notEqual(rolloutTarget(spec, { peer: caBundleHash('OLD') }), rolloutTarget(spec, { peer: caBundleHash('OLD\nNEW') }));

  // What the reconciler observes: the bundle a user's Secret holds, and the operator's CAs.
  const api = new MemoryAPI();
  await write(api, ['c-0'], true);
  const operator = await observe(api, ['c-0'], true);
  assert.deepEqual(operator?.caBundles, {
    peer: caBundleHash(secretContents(api.cached('c-peer-ca'))!['ca.crt']!),
    client: caBundleHash(secretContents(api.cached('c-client-ca'))!['ca.crt']!),
  });
  // A member certificate renewed (rotate-certificates): the bundles, and so the pods' fingerprint, stay.
  const rotating = { ...tlsCluster, metadata: { ...tlsCluster.metadata, annotations: { 'etcd.quorum.dev/rotate-certificates': 'r' } } };
  await writeTLSSecrets({ client: api as never, cluster: rotating, clusterDomain: 'cluster.local', now: NOW, signal: new AbortController().signal, mayIssueCA: false }, ['c-0']);
  assert.deepEqual((await observe(api, ['c-0'], true))?.caBundles, operator?.caBundles);
});
