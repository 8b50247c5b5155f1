// Rolling updates through the whole reconciler (observe → plan → act → report), with Kubernetes and etcd
// scripted: evictions delete pods, created pods come up on the image they name, and etcd reports each
// member's version, the leader, a commit index and the cluster version a real leader would decide. The
// operator is also restarted (a new reconciler, its memory lost) right after its writes. What etcd itself does
// on a real binary upgrade is tested in etcd-rollout.test.ts; here the unit is the operator's loop.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyMergePatch } from '@quorum/kit';
import { createLogger, NotFoundError, Store, type Client, type EventInput, type KubeObject, type OpenObject, type ResourceType } from '@quorum/runtime';
import { applyDefaults } from '../../src/api/defaults.ts';
import type { EtcdClusterSpec } from '../../src/api/etcdcluster.ts';
import type { PodObject } from '../../src/cluster/observe-members.ts';
import { EtcdClients, type EtcdEndpoint } from '../../src/etcd/clients.ts';
import { etcdClusterReconciler } from '../../src/cluster/reconcile.ts';
import { memberPod, memberPVC } from '../../src/cluster/resources.ts';
import type { EtcdCluster } from '../../src/cluster/spec.ts';
import type { StatusShape } from '../../src/cluster/status.ts';
import type { Alarm, EtcdClient, EtcdStatus, Member, Versions } from '../../src/etcd/client.ts';
import { EtcdUnavailableError, NotLeaderError } from '../../src/etcd/errors.ts';

const NS = 'ns';
const NAME = 'c';
const peer = (m: string): string => `http://${m}.${NAME}.${NS}.svc:2380`;

/** etcd as the members' pods run it: a member answers while its pod runs an etcd that starts. */
class ScriptedEtcd extends EtcdClients {
  readonly members: Member[];
  leader = '100';
  commit = 1000;
  /** Member name → the etcd version its running pod runs; absent while it has no running etcd. */
  readonly running = new Map<string, string>();
  readonly endpoints = new Map<string, string>();
  readonly moves: string[] = [];
  clusterVersion = '3.5.0';

  constructor(names: string[]) {
    super();
    this.members = names.map((n, i) => ({ id: String(100 + i), name: n, peerURLs: [peer(n)], clientURLs: [], isLearner: false }));
  }

  /** What a real leader does: the cluster version follows the lowest minor once every member has said its version. */
  decide(): void {
    if (this.running.size < this.members.length) return;
    const minors = [...this.running.values()].map((v) => Number(v.split('.')[1]));
    this.clusterVersion = `3.${Math.min(...minors)}.0`;
  }

  override get(to: string | EtcdEndpoint): EtcdClient {
    const endpoint = typeof to === 'string' ? to : to.url;
    const name = this.endpoints.get(endpoint) ?? '';
    const id = this.members.find((m) => m.name === name)?.id ?? '0';
    const answer = <T>(value: () => T): Promise<T> => {
      const version = this.running.get(name);
      if (!version) return Promise.reject(new EtcdUnavailableError(endpoint, '/v3/maintenance/status', 'refused', 'connection refused'));
      return Promise.resolve(value());
    };
    const fake = {
      memberList: (): Promise<Member[]> => answer(() => this.members),
      status: (): Promise<EtcdStatus> => answer(() => {
        this.commit += 7; // writes keep flowing
        return { memberId: id, leaderId: this.leader, version: this.running.get(name)!, dbSize: 4096, raftIndex: String(this.commit), raftTerm: '2', raftAppliedIndex: String(this.commit), revision: '50', clusterId: '999', isLearner: false, errors: [] };
      }),
      version: (): Promise<Versions> => answer(() => ({ server: this.running.get(name)!, cluster: this.clusterVersion })),
      alarms: (): Promise<Alarm[]> => answer(() => []),
      moveLeader: (target: string): Promise<void> => answer(() => {
        if (id !== this.leader) throw new NotLeaderError(endpoint, '/v3/maintenance/transfer-leadership', 500, 9, 'etcdserver: not leader');
        this.moves.push(`${name} → ${this.members.find((m) => m.id === target)?.name}`);
        this.leader = target;
      }),
    };
    return fake as unknown as EtcdClient;
  }
}

interface Harness {
  etcd: ScriptedEtcd;
  events: EventInput[];
  /** Every write the operator made to Kubernetes or etcd, in order: "evict c-1", "create c-1", … */
  writes: string[];
  run(): Promise<void>;
  restartOperator(): void;
  tick(ms: number): void;
  status(): StatusShape;
  setSpec(spec: EtcdClusterSpec): void;
  annotate(key: string, value: string): void;
  podImage(member: string): string | undefined;
}

function setUp(spec: EtcdClusterSpec): Harness {
  const clusters = new Store<EtcdCluster>();
  const pods = new Store<OpenObject>();
  const pvcs = new Store<OpenObject>();
  const empty = new Store<OpenObject>();
  const names = ['c-0', 'c-1', 'c-2'];
  let clock = Date.parse('2026-11-23T08:00:00Z');
  let cluster: EtcdCluster = {
    apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster',
    metadata: { name: NAME, namespace: NS, uid: 'u1', generation: 1 },
    spec,
    status: { clusterID: '3e7', nextMemberIndex: 3, currentVersion: '3.5.35', clusterVersion: '3.5.0', members: names.map((n, i) => ({ name: n, id: String(100 + i), ready: true, learner: false, leader: i === 0, version: '3.5.35' })) },
  };
  clusters.upsert(cluster);
  const etcd = new ScriptedEtcd(names);
  const events: EventInput[] = [];
  const writes: string[] = [];
  let ip = 10;

  /** The kubelet's part: a created pod runs the etcd of its image, or crash-loops on a broken one. */
  const start = (pod: KubeObject & { spec?: { containers?: { name: string; image?: string }[] } }): OpenObject => {
    const member = pod.metadata.labels?.['etcd.quorum.dev/member'] ?? '';
    const image = pod.spec?.containers?.find((c) => c.name === 'etcd')?.image ?? '';
    const podIP = `10.0.0.${ip++}`;
    etcd.endpoints.set(`http://${podIP}:2379`, member);
    const crashing = image.includes('crashloop');
    if (crashing) etcd.running.delete(member);
    else etcd.running.set(member, /:v(\d+\.\d+\.\d+)$/.exec(image)![1]!);
    etcd.decide();
    const status: PodObject['status'] = crashing
      ? {
          phase: 'Running', podIP, conditions: [{ type: 'Ready', status: 'False' }],
          containerStatuses: [{ name: 'etcd', image, imageID: '', ready: false, restartCount: 3, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState: { terminated: { exitCode: 2, message: 'flag provided but not defined: -name' } } }],
        }
      : { phase: 'Running', podIP, conditions: [{ type: 'Ready', status: 'True', lastTransitionTime: new Date(clock - 10_000).toISOString() }], containerStatuses: [{ name: 'etcd', image, imageID: '', ready: true, restartCount: 0, state: { running: {} } }] };
    return { ...pod, metadata: { ...pod.metadata, uid: `uid-${member}-${ip}` }, status };
  };
  const defaulted = applyDefaults(spec);
  for (const n of names) {
    pods.upsert(start(memberPod(cluster, defaulted, { member: n, initialClusterState: 'new', initialCluster: names.map((m) => `${m}=${peer(m)}`) })));
    pvcs.upsert(memberPVC(cluster, defaulted, n));
  }

  const client = {
    mergePatch(_t: unknown, _k: unknown, patch: { status: Record<string, unknown> }): Promise<KubeObject> {
      cluster = { ...cluster, status: applyMergePatch(cluster.status, patch.status) as EtcdCluster['status'] };
      clusters.upsert(cluster);
      return Promise.resolve(cluster);
    },
    apply: (_t: unknown, obj: KubeObject): Promise<KubeObject> => Promise.resolve(obj),
    delete: (): Promise<void> => Promise.resolve(),
    create(type: ResourceType<KubeObject>, obj: KubeObject): Promise<KubeObject> {
      assert.equal(type.kind, 'Pod', 'only pods are created (the claims exist)');
      const member = obj.metadata.labels?.['etcd.quorum.dev/member'] ?? '';
      writes.push(`create ${member}`);
      pods.upsert(start(obj));
      return Promise.resolve(obj);
    },
    request(method: string, path: string): Promise<unknown> {
      const member = /pods\/([^/]+)\/eviction$/.exec(path)?.[1];
      assert.ok(method === 'POST' && member, `unexpected request ${method} ${path}`);
      if (!pods.get(`${NS}/${member}`)) return Promise.reject(new NotFoundError('POST', path, 404, { message: 'not found' }));
      // The eviction deletes the pod; this kubelet is quick about it.
      const leader = etcd.members.find((m) => m.id === etcd.leader)?.name;
      writes.push(`evict ${member}${member === leader ? ' (the leader)' : ''}`);
      pods.remove(`${NS}/${member}`);
      etcd.running.delete(member);
      return Promise.resolve({});
    },
  } as unknown as Client;

  const reconciler = () =>
    etcdClusterReconciler({
      client, clusters: { store: clusters }, pods: { store: pods }, pvcs: { store: pvcs }, services: { store: empty }, pdbs: { store: empty }, networkPolicies: { store: empty }, etcd,
      events: { record: (_o: KubeObject, e: EventInput) => void events.push(e) },
      crashLoopGraceMs: 60_000,
      now: () => new Date(clock),
      afterWrite: (what) => {
        if (what.startsWith('etcd move-leader')) writes.push(`move-leader ${etcd.moves.at(-1)}`);
      },
    });
  let reconcile = reconciler();
  const log = createLogger({ level: 'silent' });
  return {
    etcd, events, writes,
    run: async () => {
      await reconcile({ namespace: NS, name: NAME }, { signal: new AbortController().signal, log, retries: 0 });
    },
    restartOperator: () => void (reconcile = reconciler()),
    tick: (ms) => void (clock += ms),
    status: () => (clusters.get(`${NS}/${NAME}`)?.status ?? {}),
    setSpec: (next) => {
      cluster = { ...cluster, spec: next, metadata: { ...cluster.metadata, generation: (cluster.metadata.generation ?? 0) + 1 } };
      clusters.upsert(cluster);
    },
    annotate: (key, value) => {
      cluster = { ...cluster, metadata: { ...cluster.metadata, annotations: { ...cluster.metadata.annotations, [key]: value } } };
      clusters.upsert(cluster);
    },
    podImage: (member) => (pods.get(`${NS}/${member}`) as PodObject | undefined)?.spec?.containers?.find((c) => c.name === 'etcd')?.image,
  };
}

const condition = (s: StatusShape, type: string) => s.conditions?.find((c) => c.type === type);
const PVC_STORAGE = { volumeClaimTemplate: { resources: { requests: { storage: '1Gi' } } } };

test('3.5.35 → 3.6.16: followers by index, then LeaderMoved, the old leader last; one member at a time; versions move only at the end', async () => {
  const t = setUp({ replicas: 3, version: '3.5.35', storage: PVC_STORAGE });
  await t.run();
  assert.equal(t.status().rollout, undefined, 'a cluster at rest records no rollout');
  assert.equal(condition(t.status(), 'MembersUpToDate')?.status, 'True');

  t.setSpec({ replicas: 3, version: '3.6.16', storage: PVC_STORAGE });
  const seen = { updated: new Set<number>(), progressing: new Set<string>() };
  for (let i = 0; i < 80 && !(t.status().rollout === undefined && t.status().currentVersion === '3.6.16'); i++) {
    await t.run();
    const s = t.status();
    seen.updated.add(s.updatedReplicas ?? -1);
    const p = condition(s, 'Progressing');
    if (p?.reason === 'RollingUpdate') seen.progressing.add(p.message);
    // Until the last member runs 3.6.16, the versions the status reports stay where they were.
    if (t.etcd.running.size < 3 || [...t.etcd.running.values()].some((v) => v !== '3.6.16')) {
      assert.equal(s.currentVersion, '3.5.35');
      assert.equal(s.clusterVersion, '3.5.0');
    }
    assert.ok(t.etcd.running.size >= 2, 'never more than one member down');
    t.tick(3000);
  }
  assert.deepEqual(t.writes, ['evict c-1', 'create c-1', 'evict c-2', 'create c-2', 'move-leader c-0 → c-2', 'evict c-0', 'create c-0']);
  const s = t.status();
  assert.equal(s.currentVersion, '3.6.16');
  assert.equal(s.clusterVersion, '3.6.0');
  assert.equal(s.updatedReplicas, 3);
  assert.equal(s.rollout, undefined);
  assert.equal(s.phase, 'Running');
  assert.deepEqual([...seen.updated].filter((n) => n >= 0).sort(), [0, 1, 2, 3]);
  for (const m of ['c-0', 'c-1', 'c-2']) assert.ok([...seen.progressing].some((msg) => msg.includes(`updating ${m}`)), `Progressing named ${m}`);
  assert.deepEqual(t.etcd.members.map((m) => m.id), ['100', '101', '102'], 'the same members');
  const reasons = t.events.map((e) => e.reason);
  for (const r of ['RollingUpdateStarted', 'MemberUpdating', 'LeaderMoved', 'MemberPodRecreated', 'RollingUpdateCompleted']) assert.ok(reasons.includes(r), r);
  assert.equal(reasons.filter((r) => r === 'MemberUpdating').length, 3);
  assert.ok(!reasons.includes('StepStalled'));
});

test('the operator restarted right after each of its writes resumes the same rollout, with no member touched twice', async () => {
  const t = setUp({ replicas: 3, version: '3.5.35', storage: PVC_STORAGE });
  await t.run();
  t.setSpec({ replicas: 3, version: '3.6.16', storage: PVC_STORAGE });
  let restarts = 0;
  for (let i = 0; i < 80 && !(t.status().rollout === undefined && t.status().currentVersion === '3.6.16'); i++) {
    const before = t.writes.length;
    await t.run();
    if (t.writes.length > before) {
      t.restartOperator();
      restarts++;
    }
    t.tick(3000);
  }
  assert.ok(restarts >= 7, `restarted after every write (${restarts})`);
  assert.deepEqual(t.writes, ['evict c-1', 'create c-1', 'evict c-2', 'create c-2', 'move-leader c-0 → c-2', 'evict c-0', 'create c-0']);
  assert.equal(t.status().currentVersion, '3.6.16');
});

test('a crash-looping image halts at the first member: Degraded UpgradeFailed in its words, no other member touched, no replacement; a retry halts there again; rollback restores it', async () => {
  const t = setUp({ replicas: 3, version: '3.5.35', storage: PVC_STORAGE });
  await t.run();
  t.setSpec({ replicas: 3, version: '3.6.16', image: 'quorum.test/etcd-crashloop:v3.6.16', storage: PVC_STORAGE });
  for (let i = 0; i < 20 && !t.status().rollout?.halted; i++) {
    await t.run();
    t.tick(3000);
  }
  const halted = t.status();
  assert.deepEqual(halted.rollout?.halted && { member: halted.rollout.halted.member, reason: halted.rollout.halted.reason }, { member: 'c-1', reason: 'CrashLooping' });
  const degraded = condition(halted, 'Degraded')!;
  assert.deepEqual([degraded.status, degraded.reason], ['True', 'UpgradeFailed']);
  assert.match(degraded.message, /halted at c-1 \(CrashLooping\): its etcd keeps exiting: exit code 2: flag provided but not defined: -name\. No further member is updated\. To roll back, set spec\.version back to 3\.5\.35/);
  assert.ok(t.events.some((e) => e.reason === 'UpgradeFailed' && e.type === 'Warning'));
  // Long past the crash-loop grace period: the rollout stays where it stopped.
  for (let i = 0; i < 30; i++) {
    await t.run();
    t.tick(10_000);
  }
  assert.deepEqual(t.writes, ['evict c-1', 'create c-1'], 'no second member touched, and the halted one not replaced');
  assert.equal(condition(t.status(), 'Available')?.status, 'True');
  assert.equal(t.status().phase, 'Degraded');

  // A retry with nothing fixed: the halted member gets a fresh pod, which crash-loops too, and it halts again there.
  t.annotate('etcd.quorum.dev/retry-rollout', '1');
  for (let i = 0; i < 10; i++) {
    await t.run();
    t.tick(3000);
  }
  assert.deepEqual(t.writes, ['evict c-1', 'create c-1', 'evict c-1', 'create c-1']);
  assert.equal(t.status().rollout?.retryToken, '1');
  assert.equal(t.status().rollout?.halted?.member, 'c-1');

  // Rollback: spec.version back, the image unset.
  t.setSpec({ replicas: 3, version: '3.5.35', storage: PVC_STORAGE });
  for (let i = 0; i < 30 && (t.status().rollout !== undefined || condition(t.status(), 'Degraded')?.status !== 'False'); i++) {
    await t.run();
    t.tick(3000);
  }
  assert.deepEqual(t.writes, ['evict c-1', 'create c-1', 'evict c-1', 'create c-1', 'evict c-1', 'create c-1']);
  assert.equal(t.podImage('c-1'), 'gcr.io/etcd-development/etcd:v3.5.35');
  const s = t.status();
  assert.equal(s.rollout, undefined, 'the record is gone, halted part included');
  assert.equal(condition(s, 'Degraded')?.status, 'False');
  assert.equal(condition(s, 'MembersUpToDate')?.status, 'True');
  assert.equal(s.currentVersion, '3.5.35');
  assert.equal(s.phase, 'Running');
});

test('3.5 back to 3.4 once the cluster version is 3.5 (etcd has no downgrade from 3.5): nothing is touched, Degraded UpgradeBlocked (the webhook being off)', async () => {
  const t = setUp({ replicas: 3, version: '3.5.35', storage: PVC_STORAGE });
  t.etcd.clusterVersion = '3.5.0';
  await t.run();
  t.setSpec({ replicas: 3, version: '3.4.37', storage: PVC_STORAGE });
  for (let i = 0; i < 5; i++) {
    await t.run();
    t.tick(3000);
  }
  assert.deepEqual(t.writes, []);
  const degraded = condition(t.status(), 'Degraded')!;
  assert.deepEqual([degraded.status, degraded.reason], ['True', 'UpgradeBlocked']);
  assert.match(degraded.message, /etcd 3\.5 cannot be downgraded to 3\.4/);
  assert.equal(t.events.filter((e) => e.reason === 'UpgradeBlocked').length, 1, 'said once, not on every reconcile');
});
