// The operator's metrics about the objects it manages, read from its caches at scrape time: each EtcdCluster's
// status, its member pods' etcd containers, the newest successful backup per cluster and each schedule's
// interval; and the two things a cache cannot say afterwards (a leader change, a finished step's duration).
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1Pod } from '@kubernetes/client-node';
import { RuntimeMetrics, type EventHandler } from '@quorum/runtime';
import type { EtcdBackup } from '../../src/api/etcdbackup.ts';
import type { EtcdBackupSchedule } from '../../src/api/etcdbackupschedule.ts';
import type { EtcdCluster, Member } from '../../src/api/etcdcluster.ts';
import { backupSamples, clusterSamples, memberPodSamples, registerResourceMetrics, scheduleSamples, StatusTransitions } from '../../src/operator/metrics.ts';

const member = (name: string, over: Partial<Member> = {}): Member => ({ name, ready: true, learner: false, leader: false, ...over });

function cluster(name: string, status: EtcdCluster['status'], replicas = 3): EtcdCluster {
  return { metadata: { name, namespace: 'ns' }, spec: { replicas }, ...(status ? { status } : {}) };
}

const healthy = cluster('a', {
  clusterID: 'c0ffee',
  leader: 'a-0',
  updatedReplicas: 3,
  members: [member('a-0', { leader: true, dbSize: 4096 }), member('a-1'), member('a-2', { ready: false }), member('a-3', { learner: true })],
});

test('cluster status: members, ready and voting members, leader, per-member readiness and size', () => {
  const s = clusterSamples([healthy], Date.parse('2026-01-01T00:00:00Z'));
  const one = (samples: { value: number }[]): number[] => samples.map((x) => x.value);
  assert.deepEqual(one(s.desired), [3]);
  assert.deepEqual(one(s.members), [4]);
  assert.deepEqual(one(s.readyMembers), [3]);
  assert.deepEqual(one(s.votingMembers), [3]);
  assert.deepEqual(one(s.readyVotingMembers), [2]);
  assert.deepEqual(one(s.hasLeader), [1]);
  assert.deepEqual(s.memberReady.map((x) => [x.labels.member, x.value]), [['a-0', 1], ['a-1', 1], ['a-2', 0], ['a-3', 1]]);
  assert.deepEqual(s.memberDbSize, [{ labels: { namespace: 'ns', cluster: 'a', member: 'a-0' }, value: 4096 }]);
  assert.deepEqual(one(s.updatedMembers), [3]);
  assert.deepEqual(one(s.rolloutInProgress), [0]);
  assert.deepEqual(s.rolloutHalted, []);
  assert.deepEqual(s.stepAge, []);
});

test('has_leader is 0 once the cluster exists and status names no leader, and absent before it exists', () => {
  const lost = cluster('lost', { clusterID: 'c0ffee', members: [member('lost-0', { ready: false }), member('lost-1', { ready: false }), member('lost-2')] });
  const creating = cluster('new', { members: [] });
  const s = clusterSamples([lost, creating], 0);
  assert.deepEqual(s.hasLeader, [{ labels: { namespace: 'ns', cluster: 'lost' }, value: 0 }]);
  assert.deepEqual(s.readyVotingMembers.map((x) => x.value), [1, 0]);
});

test('a halted rollout and a stalled step are reported with their member, reason, step and age', () => {
  const now = Date.parse('2026-01-01T00:10:00Z');
  const c = cluster('b', {
    clusterID: 'c0ffee',
    leader: 'b-0',
    members: [member('b-0', { leader: true })],
    rollout: { target: 'h', targetVersion: '3.6.16', startedAt: '2026-01-01T00:00:00Z', halted: { member: 'b-1', reason: 'CrashLooping', message: 'exit 1', at: '2026-01-01T00:05:00Z' } },
    step: { name: 'addMember b-3', startedAt: '2026-01-01T00:08:00Z', failures: 4, stalled: true },
  });
  const s = clusterSamples([c], now);
  assert.deepEqual(s.rolloutInProgress.map((x) => x.value), [1]);
  assert.deepEqual(s.rolloutHalted, [{ labels: { namespace: 'ns', cluster: 'b', member: 'b-1', reason: 'CrashLooping' }, value: 1 }]);
  assert.deepEqual(s.stepAge, [{ labels: { namespace: 'ns', cluster: 'b', step: 'addMember b-3' }, value: 120 }]);
  assert.deepEqual(s.stepFailures.map((x) => x.value), [4]);
  assert.deepEqual(s.stepStalled.map((x) => x.value), [1]);
});

test("member pods: the etcd container's restarts and CrashLoopBackOff; other pods are not members", () => {
  const pod = (name: string, labels: Record<string, string>, state: NonNullable<V1Pod['status']>['containerStatuses']): V1Pod => ({ metadata: { name, namespace: 'ns', labels }, status: { containerStatuses: state } });
  const etcdLabels = (m: string): Record<string, string> => ({ 'app.kubernetes.io/name': 'etcd', 'app.kubernetes.io/instance': 'a', 'etcd.quorum.dev/member': m });
  const s = memberPodSamples([
    pod('a-0', etcdLabels('a-0'), [{ name: 'etcd', image: 'etcd', imageID: '', ready: true, restartCount: 0, state: { running: {} } }]),
    pod('a-1', etcdLabels('a-1'), [{ name: 'etcd', image: 'etcd', imageID: '', ready: false, restartCount: 7, state: { waiting: { reason: 'CrashLoopBackOff' } } }]),
    pod('backup-x', { 'app.kubernetes.io/name': 'etcd-backup', 'app.kubernetes.io/instance': 'a' }, [{ name: 'agent', image: 'op', imageID: '', ready: true, restartCount: 3 }]),
  ]);
  assert.deepEqual(s.restarts.map((x) => [x.labels.member, x.value]), [['a-0', 0], ['a-1', 7]]);
  assert.deepEqual(s.crashLooping.map((x) => [x.labels.member, x.value]), [['a-0', 0], ['a-1', 1]]);
});

test('backups: the newest Succeeded backup of each cluster, its size and duration; failed ones are not successes', () => {
  const backup = (name: string, clusterName: string, status: EtcdBackup['status']): EtcdBackup => ({ metadata: { name, namespace: 'ns' }, spec: { clusterName, destination: { pvc: { claimName: 'x' } } }, ...(status ? { status } : {}) });
  const s = backupSamples([
    backup('old', 'a', { phase: 'Succeeded', startedAt: '2026-01-01T00:00:00Z', completedAt: '2026-01-01T00:00:30Z', sizeBytes: 100 }),
    backup('new', 'a', { phase: 'Succeeded', startedAt: '2026-01-02T00:00:00Z', completedAt: '2026-01-02T00:01:00Z', sizeBytes: 200 }),
    backup('failed', 'a', { phase: 'Failed', startedAt: '2026-01-03T00:00:00Z', completedAt: '2026-01-03T00:00:05Z' }),
    backup('running', 'b', { phase: 'Running', startedAt: '2026-01-03T00:00:00Z' }),
  ]);
  const t = Date.parse('2026-01-02T00:01:00Z') / 1000;
  assert.deepEqual(s.lastSuccess, [{ labels: { namespace: 'ns', cluster: 'a' }, value: t }]);
  assert.deepEqual(s.size.map((x) => x.value), [200]);
  assert.deepEqual(s.duration.map((x) => x.value), [60]);
});

test('schedules: the interval around now and the creation time; no interval while suspended or invalid', () => {
  const schedule = (name: string, cron: string, suspend = false): EtcdBackupSchedule => ({
    metadata: { name, namespace: 'ns', creationTimestamp: '2026-01-01T00:00:00Z' },
    spec: { clusterName: 'a', schedule: cron, suspend, destination: { pvc: { claimName: 'x' } } },
  });
  // Saturday 2026-01-03 12:00 UTC: a weekday schedule's interval now spans the weekend, Friday 03:00 to Monday 03:00.
  const now = Date.parse('2026-01-03T12:00:00Z');
  const s = scheduleSamples([schedule('hourly', '0 * * * *'), schedule('weekdays', '0 3 * * 1-5'), schedule('paused', '0 * * * *', true), schedule('bad', 'not a cron')], now);
  assert.deepEqual(s.interval.map((x) => [x.labels.schedule, x.value]), [['hourly', 3600], ['weekdays', 3 * 86400]]);
  assert.deepEqual(s.created.map((x) => x.labels.schedule), ['hourly', 'weekdays', 'paused', 'bad']);
  assert.equal(s.created[0]!.value, Date.parse('2026-01-01T00:00:00Z') / 1000);
});

test('status transitions: a leader change is counted once per new leader, a finished step is timed by kind', () => {
  const changes: string[] = [];
  const steps: [string, number][] = [];
  let now = Date.parse('2026-01-01T00:01:00Z');
  const handler = new StatusTransitions((l) => changes.push(l.cluster), (l, s) => steps.push([l.step, s]), () => now).handler();
  const withStatus = (status: EtcdCluster['status']): EtcdCluster => cluster('a', status);
  const first = withStatus({ leader: 'a-0', step: { name: 'addMember a-3', startedAt: '2026-01-01T00:00:00Z' } });
  handler.onAdd?.(first);
  const noLeader = withStatus({ step: { name: 'addMember a-3', startedAt: '2026-01-01T00:00:00Z' } });
  handler.onUpdate?.(first, noLeader);
  const sameLeader = withStatus({ leader: 'a-0' });
  handler.onUpdate?.(noLeader, sameLeader);
  assert.deepEqual(changes, [], 'a-0 lost and regained its leadership as far as status says: no change of leader');
  assert.deepEqual(steps, [['addMember', 60]]);
  now += 1000;
  const moved = withStatus({ leader: 'a-1' });
  handler.onUpdate?.(sameLeader, moved);
  handler.onUpdate?.(moved, moved);
  assert.deepEqual(changes, ['a']);
  assert.equal(steps.length, 1, 'a resync (the same object again) ends no step');
});

test('registered: every series on /metrics, computed from the caches at each read', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const clusters = [healthy];
  let handler: EventHandler<EtcdCluster> | undefined;
  registerResourceMetrics(metrics, {
    clusters: { store: { list: () => clusters } },
    pods: { store: { list: () => [] } },
    backups: { store: { list: () => [] } },
    schedules: { store: { list: () => [] } },
    addClusterHandler: (h) => (handler = h),
  });
  let text = await metrics.registry.metrics();
  assert.match(text, /^quorum_etcdcluster_ready_voting_members\{namespace="ns",cluster="a"\} 2$/m);
  assert.match(text, /^quorum_etcdcluster_has_leader\{namespace="ns",cluster="a"\} 1$/m);
  handler?.onAdd?.(healthy);
  const moved = { ...healthy, status: { ...healthy.status, leader: 'a-1' } };
  handler?.onUpdate?.(healthy, moved);
  clusters.splice(0, 1);
  text = await metrics.registry.metrics();
  assert.doesNotMatch(text, /^quorum_etcdcluster_members\{/m, 'a deleted cluster has no gauges left');
  assert.match(text, /^quorum_etcdcluster_leader_changes_total\{namespace="ns",cluster="a"\} 1$/m);
});

test("a deleted cluster's counter and histogram series go with it; another cluster's stay (issue 23, finding 9)", async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  let handler: EventHandler<EtcdCluster> | undefined;
  registerResourceMetrics(metrics, {
    clusters: { store: { list: () => [] } },
    pods: { store: { list: () => [] } },
    backups: { store: { list: () => [] } },
    schedules: { store: { list: () => [] } },
    addClusterHandler: (h) => (handler = h),
  });
  const stepping = (name: string, step: string, leader: string): EtcdCluster => cluster(name, { leader, step: { name: step, startedAt: '2026-01-01T00:00:00Z' } });
  for (const name of ['a', 'b']) {
    const first = stepping(name, `addMember ${name}-3`, `${name}-0`);
    handler?.onAdd?.(first);
    const next = stepping(name, `replaceMember ${name}-1`, `${name}-1`);
    handler?.onUpdate?.(first, next);
    handler?.onUpdate?.(next, cluster(name, { leader: `${name}-1` }));
  }
  let text = await metrics.registry.metrics();
  for (const name of ['a', 'b']) {
    assert.match(text, new RegExp(`^quorum_etcdcluster_leader_changes_total\\{namespace="ns",cluster="${name}"\\} 1$`, 'm'));
    assert.match(text, new RegExp(`^quorum_etcdcluster_step_duration_seconds_count\\{namespace="ns",cluster="${name}",step="replaceMember"\\} 1$`, 'm'));
  }
  handler?.onDelete?.(cluster('a', { leader: 'a-1' }));
  text = await metrics.registry.metrics();
  assert.doesNotMatch(text, /cluster="a"/, 'no series of the deleted cluster is left');
  assert.match(text, /^quorum_etcdcluster_leader_changes_total\{namespace="ns",cluster="b"\} 1$/m);
  assert.match(text, /^quorum_etcdcluster_step_duration_seconds_count\{namespace="ns",cluster="b",step="addMember"\} 1$/m);
});
