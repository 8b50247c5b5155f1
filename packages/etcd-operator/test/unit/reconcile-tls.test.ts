// The reconciler with spec.tls, its planner, status, Secrets and pod rendering all real, the API server held in
// memory (the informer caches are the stores it writes to): a new cluster gets its CAs and client Secret first,
// then each member's Secret right before that member's pod; a user's Secret that is missing stops everything, with
// a voice. No etcd answers here (pods have no IP yet): bootstrapping is what is under test.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyMergePatch } from '@quorum/kit';
import { AlreadyExistsError, createLogger, Store, type Client, type EventInput, type KubeObject, type OpenObject } from '@quorum/runtime';
import { etcdClusterReconciler } from '../../src/cluster/reconcile.ts';
import { EtcdClients } from '../../src/etcd/clients.ts';
import type { EtcdCluster, EtcdClusterSpec } from '../../src/cluster/spec.ts';
import type { StatusShape } from '../../src/cluster/status.ts';
import type { MemberPod } from '../../src/cluster/resources.ts';

const NS = 'ns';

function setUp(spec: EtcdClusterSpec, status?: StatusShape) {
  const clusters = new Store<EtcdCluster>();
  const stores: Record<string, Store<OpenObject>> = { Pod: new Store(), Secret: new Store(), PersistentVolumeClaim: new Store() };
  const empty = new Store<OpenObject>();
  let cluster: EtcdCluster = { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name: 'c', namespace: NS, uid: 'u1', generation: 1 }, spec, ...(status ? { status } : {}) };
  clusters.upsert(cluster);
  const writes: string[] = [];
  const events: EventInput[] = [];
  const store = (kind: string): Store<OpenObject> => stores[kind] ?? empty;
  let rv = 0;
  const client = {
    mergePatch(_t: unknown, _k: unknown, patch: { status: StatusShape }): Promise<KubeObject> {
      cluster = { ...cluster, status: applyMergePatch(cluster.status, patch.status) as StatusShape };
      clusters.upsert(cluster);
      return Promise.resolve(cluster);
    },
    apply: (_t: unknown, obj: KubeObject): Promise<KubeObject> => Promise.resolve(obj),
    create(_t: unknown, obj: OpenObject): Promise<KubeObject> {
      const s = store(obj.kind ?? '');
      if (s.get(`${NS}/${obj.metadata.name}`)) return Promise.reject(new AlreadyExistsError('POST', '/', 409, { reason: 'AlreadyExists' }));
      writes.push(`create ${obj.kind} ${obj.metadata.name}`);
      s.upsert({ ...obj, metadata: { ...obj.metadata, namespace: NS, resourceVersion: String(++rv), uid: `uid-${rv}` } });
      return Promise.resolve(obj);
    },
    replace(_t: unknown, obj: OpenObject): Promise<KubeObject> {
      writes.push(`replace ${obj.kind} ${obj.metadata.name}`);
      store(obj.kind ?? '').upsert({ ...obj, metadata: { ...obj.metadata, resourceVersion: String(++rv) } });
      return Promise.resolve(obj);
    },
    // Only Secrets are read by GET (the operator's own before it writes them, and a user's).
    find: (_t: unknown, key: { namespace: string; name: string }): Promise<OpenObject | undefined> => Promise.resolve(stores['Secret']!.get(`${key.namespace}/${key.name}`)),
    delete: (): Promise<void> => Promise.resolve(),
  } as unknown as Client;
  const reconcile = etcdClusterReconciler({
    client, clusters: { store: clusters }, pods: { store: stores['Pod']! }, pvcs: { store: stores['PersistentVolumeClaim']! }, services: { store: empty }, pdbs: { store: empty }, networkPolicies: { store: empty },
    secrets: { store: stores['Secret']! }, clusterDomain: 'cluster.local', etcd: new EtcdClients(),
    events: { record: (_o: KubeObject, e: EventInput) => void events.push(e) },
    crashLoopGraceMs: 60_000,
    now: () => new Date('2026-11-23T08:00:00Z'),
  });
  const log = createLogger({ level: 'silent' });
  const run = async () => reconcile({ namespace: NS, name: 'c' }, { signal: new AbortController().signal, log, retries: 0 });
  return { run, writes, events, stores, status: (): StatusShape => (clusters.get(`${NS}/c`)?.status ?? {}) };
}

test('a new TLS cluster: CAs and the client Secret first, then each member Secret right before its pod', async () => {
  const t = setUp({ replicas: 3, tls: { peer: {}, client: {} } });
  await t.run();
  assert.deepEqual(t.writes, ['create Secret c-peer-ca', 'create Secret c-client-ca', 'create Secret c-client-tls']);
  assert.equal(t.status().conditions?.find((c) => c.type === 'Progressing')?.reason, 'IssuingCertificates');
  assert.ok(t.events.some((e) => e.reason === 'CertificatesIssued' && e.note?.includes('c-peer-ca (Missing)')));

  t.writes.length = 0;
  await t.run(); // records the bootstrap members, then creates their pods
  assert.deepEqual(t.writes, [
    'create PersistentVolumeClaim data-c-0', 'create Secret c-0-tls', 'create Pod c-0',
    'create PersistentVolumeClaim data-c-1', 'create Secret c-1-tls', 'create Pod c-1',
    'create PersistentVolumeClaim data-c-2', 'create Secret c-2-tls', 'create Pod c-2',
  ]);
  const pod = t.stores['Pod']!.get(`${NS}/c-1`) as unknown as MemberPod;
  const args = pod.spec.containers[0]!.args!;
  assert.ok(args.includes('--initial-cluster=c-0=https://c-0.c.ns.svc:2380,c-1=https://c-1.c.ns.svc:2380,c-2=https://c-2.c.ns.svc:2380'), args.join(' '));
  assert.ok(args.includes('--client-cert-auth=true'));
  assert.equal(pod.spec.volumes?.find((v) => v.name === 'tls')?.secret?.secretName, 'c-1-tls');

  const s = t.status();
  assert.equal(s.clientEndpoint, 'https://c-client.ns.svc:2379');
  assert.equal(s.tls?.clientSecret, 'c-client-tls');
  assert.deepEqual(s.bootstrapMembers, ['c-0', 'c-1', 'c-2']);

  // Nothing more to issue while the members start.
  t.writes.length = 0;
  await t.run();
  assert.deepEqual(t.writes, []);
  assert.equal(t.status().tls?.peer?.mode, 'Operator');
  assert.ok(t.status().tls?.peer?.notAfter, 'the members’ certificates are known now');
});

test('TLS by default: a new cluster without spec.tls starts like one with both sides operator-managed; disabled: true starts plaintext', async () => {
  const t = setUp({ replicas: 3 });
  await t.run();
  assert.deepEqual(t.writes, ['create Secret c-peer-ca', 'create Secret c-client-ca', 'create Secret c-client-tls']);
  await t.run();
  const args = (t.stores['Pod']!.get(`${NS}/c-0`) as unknown as MemberPod).spec.containers[0]!.args!;
  assert.ok(args.includes('--client-cert-auth=true'), args.join(' '));
  assert.equal(t.status().clientEndpoint, 'https://c-client.ns.svc:2379');
  assert.equal(t.status().tls?.peer?.mode, 'Operator');

  const plain = setUp({ replicas: 3, tls: { disabled: true } });
  await plain.run();
  await plain.run();
  assert.ok(!plain.writes.some((w) => w.includes('Secret')), plain.writes.join(', '));
  assert.equal(plain.status().clientEndpoint, 'http://c-client.ns.svc:2379');
  assert.equal(plain.status().tls, undefined);
});

test('a cluster that runs plaintext and has no spec.tls stays plaintext; one that runs TLS refuses disabled: true', async () => {
  // Created before TLS by default: members recorded in its status, none of status.tls.
  const running: StatusShape = { clusterID: 'a1', bootstrapMembers: ['c-0'], nextMemberIndex: 1, members: [{ name: 'c-0', peerURL: 'http://c-0.c.ns.svc:2380', ready: true, learner: false, leader: true }] };
  const old = setUp({ replicas: 1 }, running);
  await old.run();
  assert.ok(!old.writes.some((w) => w.includes('Secret')), old.writes.join(', '));
  assert.equal(old.status().tls, undefined);

  const tls = setUp({ replicas: 1, tls: { disabled: true } }, { ...running, tls: { peer: { mode: 'Operator' }, client: { mode: 'Operator' }, clientSecret: 'c-client-tls' } });
  await tls.run();
  assert.deepEqual(tls.writes, []);
  const degraded = tls.status().conditions?.find((c) => c.type === 'Degraded');
  assert.equal(degraded?.reason, 'InvalidSpec');
  assert.match(degraded?.message ?? '', /turning TLS off in place is not built/);
  assert.equal(tls.status().tls?.client?.mode, 'Operator', 'status.tls is kept while the spec is invalid: it is what tells the default');
});

test("a user's Secret that does not exist: no pod, no Secret, Degraded TLSSecretInvalid and one Warning event", async () => {
  const t = setUp({ replicas: 3, tls: { peer: { secretName: 'corp-peer' } } });
  await t.run();
  await t.run();
  assert.deepEqual(t.writes, []);
  const degraded = t.status().conditions?.find((c) => c.type === 'Degraded');
  assert.equal(degraded?.reason, 'TLSSecretInvalid');
  assert.match(degraded?.message ?? '', /Secret corp-peer \(spec\.tls\.peer\) does not exist in namespace ns/);
  assert.equal(t.status().conditions?.find((c) => c.type === 'Progressing')?.status, 'False');
  assert.equal(t.events.filter((e) => e.reason === 'TLSSecretInvalid').length, 1, 'said once, not on every reconcile');
});
