// The reconciler's refusal path, with the planner, status, events and metric all real and etcd's answers
// scripted: a membership change that etcd refuses must go through another member when one accepts, and
// otherwise be reported (Progressing message, Warning events, Degraded past the bound, retry metric).
// What etcd decides is tested against real etcd in the integration suite; here the reconciler is the unit.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyMergePatch } from '@quorum/kit';
import { createLogger, Store, type Client, type EventInput, type KubeObject, type OpenObject } from '@quorum/runtime';
import { applyDefaults } from '../../src/api/defaults.ts';
import { etcdClusterReconciler } from '../../src/cluster/reconcile.ts';
import { ReconcilerMemory } from '../../src/cluster/memory.ts';
import { TEMPLATE_ANNOTATION, templateFingerprint } from '../../src/cluster/resources.ts';
import type { PodObject } from '../../src/cluster/observe-members.ts';
import { EtcdClients, type EtcdEndpoint } from '../../src/etcd/clients.ts';
import type { EtcdCluster } from '../../src/cluster/spec.ts';
import type { StatusShape } from '../../src/cluster/status.ts';
import type { Alarm, EtcdClient, EtcdStatus, Member, Versions } from '../../src/etcd/client.ts';
import { UnhealthyClusterError } from '../../src/etcd/errors.ts';

const NS = 'ns';
const ip = (i: number): string => `10.0.0.${10 + i}`;
const peer = (i: number): string => `http://c-${i}.c.${NS}.svc:2380`;

/** etcd as three members answer it: `refuse` lists the members whose MemberAdd says "unhealthy cluster". */
class ScriptedEtcd extends EtcdClients {
  members: Member[] = [0, 1, 2].map((i) => ({ id: String(100 + i), name: `c-${i}`, peerURLs: [peer(i)], clientURLs: [`http://${ip(i)}:2379`], isLearner: false }));
  refuse = new Set<string>();
  calls: string[] = [];
  /** The leader every member reports; '0' while none leads (an election). */
  leaderId = '100';
  override get(to: string | EtcdEndpoint): EtcdClient {
    const endpoint = typeof to === 'string' ? to : to.url;
    const i = Number(/10\.0\.0\.1(\d)/.exec(endpoint)![1]);
    const fake = {
      memberList: (): Promise<Member[]> => Promise.resolve(this.members),
      status: (): Promise<EtcdStatus> =>
        Promise.resolve({ memberId: String(100 + i), leaderId: this.leaderId, version: '3.6.16', dbSize: 1, raftIndex: '9', raftTerm: '2', revision: '1', clusterId: '999', isLearner: false, errors: [], downgrade: { enabled: false } }),
      version: (): Promise<Versions> => Promise.resolve({ server: '3.6.16', cluster: '3.6.0' }),
      alarms: (): Promise<Alarm[]> => Promise.resolve([]),
      memberAdd: (peerURLs: string[]): Promise<{ member: Member; members: Member[] }> => {
        this.calls.push(`add via c-${i}`);
        if (this.refuse.has(`c-${i}`)) return Promise.reject(new UnhealthyClusterError(endpoint, '/v3/cluster/member/add', 503, 14, 'etcdserver: unhealthy cluster'));
        const member = { id: '777', name: '', peerURLs, clientURLs: [], isLearner: true };
        this.members = [...this.members, member];
        return Promise.resolve({ member, members: this.members });
      },
    };
    return fake as unknown as EtcdClient;
  }
}

function setUp(memory = new ReconcilerMemory()) {
  const clusters = new Store<EtcdCluster>();
  const pods = new Store<OpenObject>();
  const empty = new Store<OpenObject>();
  let cluster: EtcdCluster = {
    apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster',
    metadata: { name: 'c', namespace: NS, uid: 'u1', generation: 2 },
    spec: { replicas: 5, storage: { emptyDir: {} } },
    status: { clusterID: '3e7', nextMemberIndex: 3, members: [0, 1, 2].map((i) => ({ name: `c-${i}`, id: String(100 + i), ready: true, learner: false, leader: i === 0 })) },
  };
  clusters.upsert(cluster);
  for (const i of [0, 1, 2]) {
    const pod: PodObject = {
      apiVersion: 'v1', kind: 'Pod',
      metadata: {
        name: `c-${i}`, namespace: NS, uid: `p${i}`, labels: { 'app.kubernetes.io/instance': 'c', 'app.kubernetes.io/managed-by': 'quorum', 'etcd.quorum.dev/member': `c-${i}` },
        // Made from the current spec: no rolling update to do.
        annotations: { [TEMPLATE_ANNOTATION]: JSON.stringify(templateFingerprint(applyDefaults(cluster.spec))) },
      },
      status: { phase: 'Running', podIP: ip(i), conditions: [{ type: 'Ready', status: 'True' }] },
    };
    pods.upsert(pod);
  }
  const events: EventInput[] = [];
  const retries: string[] = [];
  // The API server's part: the status subresource takes the merge patch, the rest is accepted as sent.
  const client = {
    mergePatch(_t: unknown, _k: unknown, patch: { status: StatusShape }): Promise<KubeObject> {
      cluster = { ...cluster, status: applyMergePatch(cluster.status, patch.status) as StatusShape };
      clusters.upsert(cluster);
      return Promise.resolve(cluster);
    },
    apply: (_t: unknown, obj: KubeObject): Promise<KubeObject> => Promise.resolve(obj),
    delete: (): Promise<void> => Promise.resolve(),
  } as unknown as Client;
  let clock = Date.parse('2026-11-23T08:00:00Z');
  const etcd = new ScriptedEtcd();
  const reconcile = etcdClusterReconciler({
    client, clusters: { store: clusters }, pods: { store: pods }, pvcs: { store: empty }, services: { store: empty }, pdbs: { store: empty }, networkPolicies: { store: empty }, etcd,
    events: { record: (_o: KubeObject, e: EventInput) => void events.push(e) },
    crashLoopGraceMs: 60_000,
    metrics: { stepRetried: (step, reason) => void retries.push(`${step}/${reason}`) },
    now: () => new Date(clock),
  }, memory);
  const log = createLogger({ level: 'silent' });
  const run = async () => reconcile({ namespace: NS, name: 'c' }, { signal: new AbortController().signal, log, retries: 0 });
  return { etcd, events, retries, run, pods, clusters, status: (): StatusShape => (clusters.get(`${NS}/c`)?.status ?? {}), tick: (ms: number) => void (clock += ms) };
}

const condition = (s: StatusShape, type: string) => s.conditions?.find((c) => c.type === type);

test('a learner add refused by the leader goes through the next voting member, and the event says so', async () => {
  const t = setUp();
  t.etcd.refuse.add('c-0');
  await t.run();
  assert.deepEqual(t.etcd.calls, ['add via c-0', 'add via c-1']);
  const added = t.events.find((e) => e.reason === 'MemberAdded');
  assert.ok(added?.note?.includes('through c-1, after c-0: etcd refused (unhealthy cluster)'), added?.note);
  assert.equal(t.etcd.members.length, 4);
});

test('a learner add refused through every member is reported: condition, events, metric, Degraded past the bound', async () => {
  const t = setUp();
  for (const m of ['c-0', 'c-1', 'c-2']) t.etcd.refuse.add(m);
  await t.run();
  assert.deepEqual(t.retries, ['addMember/UnhealthyCluster']);
  t.tick(2_000);
  await t.run();
  let s = t.status();
  const progressing = condition(s, 'Progressing')!;
  assert.equal(progressing.status, 'True');
  assert.equal(progressing.reason, 'AddingMember');
  assert.match(progressing.message, /adding member c-3 as a learner: etcd refused \(unhealthy cluster\) through c-0; etcd refused \(unhealthy cluster\) through c-1; etcd refused \(unhealthy cluster\) through c-2/);
  assert.equal(s.step?.lastErrorReason, 'UnhealthyCluster');
  assert.ok(s.step?.refusedEverywhereSince, 'refusal everywhere recorded');
  assert.equal(t.events.filter((e) => e.reason === 'StepRetrying').length, 0, 'no Warning before 30 s');

  t.tick(35_000);
  await t.run();
  s = t.status();
  assert.match(condition(s, 'Progressing')!.message, /\(for 30 s\)/);
  const warning = t.events.find((e) => e.reason === 'StepRetrying');
  assert.equal(warning?.type, 'Warning');
  assert.match(warning?.note ?? '', /unhealthy cluster/);
  assert.equal(condition(s, 'Degraded')!.status, 'False');

  t.tick(90_000);
  await t.run();
  s = t.status();
  assert.equal(condition(s, 'Progressing')!.status, 'False');
  assert.equal(condition(s, 'Progressing')!.reason, 'ProgressDeadlineExceeded');
  assert.equal(condition(s, 'Degraded')!.status, 'True');
  assert.equal(condition(s, 'Degraded')!.reason, 'StepStalled');
  assert.ok(t.events.some((e) => e.reason === 'StepStalled' && e.type === 'Warning'));
  assert.equal(t.events.filter((e) => e.reason === 'StepRetrying').length, 1, 'one StepRetrying event per step');
  assert.ok(t.retries.length >= 4 && t.retries.every((r) => r === 'addMember/UnhealthyCluster'), t.retries.join());
  // Available still means a quorum serves: all three do.
  assert.equal(condition(s, 'Available')!.status, 'True');
  // The step's age survives in status: it is what a restarted operator keeps counting from.
  assert.equal(s.step?.name, 'addMember c-3');

  // One member accepts again: the step completes and its record goes.
  t.etcd.refuse.delete('c-2');
  await t.run();
  assert.equal(t.etcd.members.length, 4);
  assert.ok(t.events.some((e) => e.reason === 'MemberAdded' && e.note?.includes('through c-2')));
});

test('status.leader goes once no member leads (the status write removes a field the new status lacks)', async () => {
  const t = setUp();
  await t.run();
  assert.equal(t.status().leader, 'c-0');
  t.etcd.leaderId = '0';
  t.tick(1_000);
  await t.run();
  const s = t.status();
  assert.ok(s.members?.every((m) => !m.leader), JSON.stringify(s.members));
  assert.equal(s.leader, undefined);
});

test("a crash-looping member's pod that is gone leaves nothing in the reconciler's memory, nor does a deleted cluster (issue 23, finding 9)", async () => {
  const memory = new ReconcilerMemory();
  const t = setUp(memory);
  const crashing = (uid: string): PodObject => {
    const pod = structuredClone(t.pods.get(`${NS}/c-1`)!) as PodObject;
    pod.metadata.uid = uid;
    pod.status = {
      phase: 'Running', podIP: ip(1), conditions: [{ type: 'Ready', status: 'False' }],
      containerStatuses: [{ name: 'etcd', image: 'etcd', imageID: '', ready: false, restartCount: 4, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 2, message: 'bad flag' } } }],
    };
    return pod;
  };
  t.pods.upsert(crashing('p1'));
  await t.run();
  assert.ok(t.events.some((e) => e.reason === 'MembersCrashLooping'), 'the crash is reported');
  assert.equal(memory.podsKept, 2, "the crash-looping pod's start and its reported crash are kept");

  // Replaced (as the operator replaces a member that crash-loops past its grace): a new UID, running again.
  const replaced = structuredClone(t.pods.get(`${NS}/c-0`)!) as PodObject;
  replaced.metadata = { ...replaced.metadata, name: 'c-1', uid: 'p1-new', labels: { ...replaced.metadata.labels, 'etcd.quorum.dev/member': 'c-1' } };
  replaced.status = { ...replaced.status, podIP: ip(1) };
  t.pods.upsert(replaced);
  await t.run();
  assert.equal(memory.podsKept, 0, "the replaced pod's entries are dropped, not kept for the life of the process");

  // A cluster deleted while a member crash-loops: its reconcile finds no cluster and forgets everything of it.
  t.pods.upsert(crashing('p1-third'));
  await t.run();
  assert.equal(memory.podsKept, 2);
  t.clusters.remove(`${NS}/c`);
  await t.run();
  assert.equal(memory.podsKept, 0, "a deleted cluster's pods leave nothing behind");
});
