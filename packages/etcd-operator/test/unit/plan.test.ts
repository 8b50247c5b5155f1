// The planner's decisions, one situation at a time: the safety rules of docs/design.md as executable facts.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { plan, nextIndex, type Observed, type ObservedMember, type ObservedPod } from '../../src/cluster/plan/index.ts';
import { etcdSaysDataLost, lastLines, observePod, type PodObject } from '../../src/cluster/observe-members.ts';
import { nextStep } from '../../src/cluster/progress.ts';

const member = (i: number, extra: Partial<ObservedMember> = {}): ObservedMember => ({ id: String(100 + i), member: `c-${i}`, started: true, learner: false, healthy: true, ...extra });
const pod = (i: number, extra: Partial<ObservedPod> = {}): ObservedPod => ({ member: `c-${i}`, phase: 'Running', ready: true, deleting: false, ...extra });

function observed(over: Partial<Observed> = {}): Observed {
  const members = [member(0), member(1), member(2)];
  return {
    cluster: 'c',
    replicas: 3,
    persistent: true,
    reclaimPolicy: 'Retain',
    pods: [pod(0), pod(1), pod(2)],
    pvcs: ['c-0', 'c-1', 'c-2'],
    membership: { members, leaderId: '100' },
    lastKnownMembers: ['c-0', 'c-1', 'c-2'],
    bootstrapped: true,
    bootstrapMembers: ['c-0', 'c-1', 'c-2'],
    nextMemberIndex: 3,
    now: 1_000_000,
    crashLoopGraceMs: 60_000,
    stuckTerminatingReplaceMs: 300_000,
    refusedRestartMs: 120_000,
    disasterRecovery: 'Manual',
    rollout: { outdated: [], target: 't1', targetVersion: '3.6.16', currentVersion: '3.6.16', path: { kind: 'None' }, alarms: [], gateBoundMs: 300_000, minReadyMs: 2000 },
    ...over,
  };
}

test('a new cluster bootstraps its initial members statically; a crash part-way resumes the same bootstrap', () => {
  const fresh = { pods: [], pvcs: [], membership: undefined, lastKnownMembers: [], bootstrapped: false, bootstrapMembers: [], nextMemberIndex: 0 };
  assert.deepEqual(plan(observed(fresh)), { type: 'bootstrap', members: ['c-0', 'c-1', 'c-2'] });
  // Recorded, one pod created, then the operator died: the others are created with the same initial cluster.
  const partial = observed({ ...fresh, bootstrapMembers: ['c-0', 'c-1', 'c-2'], pods: [pod(0, { ready: false })], pvcs: ['c-0'] });
  assert.deepEqual(plan(partial), { type: 'createPod', member: 'c-1', state: 'new', initialMembers: ['c-0', 'c-1', 'c-2'], reason: 'Bootstrap' });
  const allCreated = observed({ ...fresh, bootstrapMembers: ['c-0', 'c-1', 'c-2'], pods: [0, 1, 2].map((i) => pod(i, { ready: false })), pvcs: ['c-0', 'c-1', 'c-2'] });
  assert.equal(plan(allCreated).type, 'wait');
});

test('a healthy cluster at its size is steady', () => {
  assert.deepEqual(plan(observed()), { type: 'steady' });
});

test('scale up adds one learner with a never-used name, then creates its pod, then promotes it', () => {
  const o = observed({ replicas: 5, nextMemberIndex: 7 });
  assert.deepEqual(plan(o), { type: 'addMember', member: 'c-7' });
  const added = observed({ replicas: 5, nextMemberIndex: 7, membership: { members: [member(0), member(1), member(2), member(7, { started: false, learner: true, healthy: false })], leaderId: '100' } });
  assert.deepEqual(plan(added), { type: 'createPod', member: 'c-7', state: 'existing', initialMembers: ['c-0', 'c-1', 'c-2', 'c-7'], reason: 'MemberAdded' });
  const running = observed({ replicas: 5, pods: [pod(0), pod(1), pod(2), pod(7)], pvcs: ['c-0', 'c-1', 'c-2', 'c-7'], membership: { members: [member(0), member(1), member(2), member(7, { learner: true })], leaderId: '100' } });
  assert.deepEqual(plan(running), { type: 'promoteMember', member: 'c-7', id: '107' });
});

test('no membership change while a member is unhealthy', () => {
  const o = observed({ replicas: 5, membership: { members: [member(0), member(1), member(2, { healthy: false })], leaderId: '100' } });
  assert.equal(plan(o).type, 'wait');
});

test('scale down removes the newest non-leader first, never the leader', () => {
  const five = observed({ replicas: 3, pods: [0, 1, 2, 3, 4].map((i) => pod(i)), membership: { members: [0, 1, 2, 3, 4].map((i) => member(i)), leaderId: '104' } });
  assert.deepEqual(plan(five), { type: 'removeMember', member: 'c-3', id: '103', reason: 'ScaleDown' });
  const two = observed({ replicas: 1, pods: [pod(0), pod(1)], membership: { members: [member(0), member(1)], leaderId: '100' } });
  assert.deepEqual(plan(two), { type: 'removeMember', member: 'c-1', id: '101', reason: 'ScaleDown' });
  const onlyLeader = observed({ replicas: 1, pods: [pod(0), pod(1)], membership: { members: [member(0), member(1)], leaderId: '101' } });
  // c-1 is the newest but leads: c-0 goes (a non-leader), never the leader first.
  assert.deepEqual(plan(onlyLeader), { type: 'removeMember', member: 'c-0', id: '100', reason: 'ScaleDown' });
});

test('after a removal the orphaned pod goes, and its claim only with reclaimPolicy Delete', () => {
  const removed = observed({ pods: [pod(0), pod(1), pod(2), pod(3)], pvcs: ['c-0', 'c-1', 'c-2', 'c-3'] });
  assert.deepEqual(plan(removed), { type: 'deletePod', member: 'c-3', reason: 'NotAMember' });
  assert.deepEqual(plan(observed({ pvcs: ['c-0', 'c-1', 'c-2', 'c-3'] })), { type: 'steady' });
  assert.deepEqual(plan(observed({ pvcs: ['c-0', 'c-1', 'c-2', 'c-3'], reclaimPolicy: 'Delete' })), { type: 'deletePVC', member: 'c-3', reason: 'NotAMember' });
});

test('a deleted pod whose PVC survives is recreated as the same member', () => {
  const o = observed({ pods: [pod(0), pod(2)] });
  assert.deepEqual(plan(o), { type: 'createPod', member: 'c-1', state: 'existing', initialMembers: ['c-0', 'c-1', 'c-2'], reason: 'PodMissing' });
  // Even without a quorum: bringing a member back is what may restore it.
  const noQuorum = observed({ pods: [pod(0, { ready: false })], membership: undefined });
  assert.deepEqual(plan(noQuorum), { type: 'createPod', member: 'c-1', state: 'existing', initialMembers: ['c-0', 'c-1', 'c-2'], reason: 'PodMissing' });
});

test('a member whose PVC is gone is removed (to be replaced under a new name)', () => {
  const o = observed({ pods: [pod(0), pod(2)], pvcs: ['c-0', 'c-2'] });
  assert.deepEqual(plan(o), { type: 'removeMember', member: 'c-1', id: '101', reason: 'DataLost' });
  assert.equal(nextIndex(o), 3);
});

test('silence is not death: unreachable members are waited for, never removed', () => {
  const o = observed({ membership: { members: [member(0), member(1, { healthy: false }), member(2, { healthy: false })], leaderId: '100' } });
  assert.equal(plan(o).type, 'wait');
  assert.equal(plan(observed({ membership: undefined })).type, 'wait');
});

test('a member crash-looping past the grace period is replaced, only while the others keep a quorum', () => {
  const crashing = observed({ pods: [pod(0), pod(1, { ready: false, crashLoopingSince: 1_000_000 - 61_000 }), pod(2)], membership: { members: [member(0), member(1, { healthy: false }), member(2)], leaderId: '100' } });
  assert.deepEqual(plan(crashing), { type: 'removeMember', member: 'c-1', id: '101', reason: 'CrashLooping' });
  const young = observed({ pods: [pod(0), pod(1, { ready: false, crashLoopingSince: 1_000_000 - 10_000 }), pod(2)], membership: { members: [member(0), member(1, { healthy: false }), member(2)], leaderId: '100' } });
  assert.equal(plan(young).type, 'wait');
  const noQuorum = observed({ pods: [pod(0), pod(1, { ready: false, crashLoopingSince: 0 }), pod(2, { ready: false })], membership: { members: [member(0), member(1, { healthy: false }), member(2, { healthy: false })], leaderId: '100' } });
  assert.equal(plan(noQuorum).type, 'wait');
});

test('a member etcd calls data-less ("has already been bootstrapped") is replaced at once, only while the others keep a quorum', () => {
  const wiped = (over: Partial<Observed>): Observed => observed({ pods: [pod(0), pod(1, { ready: false, dataLost: true, lastTermination: { exitCode: 1, message: 'member 8e9e05c52164694d has already been bootstrapped' } }), pod(2)], membership: { members: [member(0), member(1, { healthy: false }), member(2)], leaderId: '100' }, ...over });
  // No crash-loop grace to wait out: etcd's own words say the data is gone.
  assert.deepEqual(plan(wiped({})), { type: 'removeMember', member: 'c-1', id: '101', reason: 'DataLost' });
  const noQuorum = wiped({ membership: { members: [member(0), member(1, { healthy: false }), member(2, { healthy: false })], leaderId: '100' } });
  assert.equal(plan(noQuorum).type, 'wait');
  // A member that answers as healthy again is not replaced on an old termination message.
  const back = observed({ pods: [pod(0), pod(1, { dataLost: true }), pod(2)] });
  assert.notEqual(plan(back).type, 'removeMember');
  // A learner that never started had no data: it is not removed as data-less.
  const learner = observed({ replicas: 4, pods: [pod(0), pod(1), pod(2), pod(3, { ready: false, dataLost: true })], membership: { members: [member(0), member(1), member(2), member(3, { started: false, learner: true, healthy: false })], leaderId: '100' } });
  assert.notDeepEqual(plan(learner), { type: 'removeMember', member: 'c-3', id: '103', reason: 'DataLost' });
});

test('a member added with every member on one minor (3.5+) first ends a downgrade to it etcd may still have enabled', () => {
  const on = (...versions: (string | undefined)[]): Observed => observed({ replicas: 4, membership: { members: versions.map((v, i) => member(i, v ? { version: v } : {})), leaderId: '100' } });
  assert.deepEqual(plan(on('3.5.35', '3.5.35', '3.5.35')), { type: 'addMember', member: 'c-3', endDowngradeTo: '3.5' });
  assert.deepEqual(plan(on('3.6.16', '3.6.15', '3.6.16')), { type: 'addMember', member: 'c-3', endDowngradeTo: '3.6' });
  // Members on two minors (a downgrade or an upgrade under way), a version not read, or 3.4 (no downgrade API): nothing ended.
  assert.deepEqual(plan(on('3.6.16', '3.5.35', '3.5.35')), { type: 'addMember', member: 'c-3' });
  assert.deepEqual(plan(on('3.5.35', undefined, '3.5.35')), { type: 'addMember', member: 'c-3' });
  assert.deepEqual(plan(on('3.4.40', '3.4.40', '3.4.40')), { type: 'addMember', member: 'c-3' });
});

test("etcd's words for a member whose data is gone: an empty data dir joining, or an initial member's empty log", () => {
  assert.ok(etcdSaysDataLost('{"level":"fatal","msg":"discovery failed","error":"member 8e9e05c52164694d has already been bootstrapped"}'));
  assert.ok(etcdSaysDataLost('panic: tocommit(1529) is out of range [lastIndex(0)]. Was the raft log corrupted, truncated, or lost?'));
  // The panic's own line cut off by the kubelet's 2 KiB: its goroutine trace names the same panic.
  assert.ok(etcdSaysDataLost('go.etcd.io/raft/v3.(*raftLog).commitTo(0xc0001d2000, 0x5f9)\n\tgo.etcd.io/raft/v3@v3.6.0/log.go:322 +0x11b'));
  // A pod made while the membership was another one (its --initial-cluster is stale), on an empty data dir.
  assert.ok(etcdSaysDataLost('{"level":"fatal","msg":"discovery failed","error":"error validating peerURLs {ClusterID:50b6e76bf368a4b1 Members:[…] RemovedMemberIDs:[]}: member count is unequal"}'));
  assert.ok(!etcdSaysDataLost('panic: unrecognized level: "shouting"'));
  assert.ok(!etcdSaysDataLost('discovery failed: incompatible with current running cluster'));
});

test('a pod is data-less on those words only while its etcd is not running (a last termination outlives a good start)', () => {
  const lastState = { terminated: { exitCode: 1, message: 'member 8e9e05c52164694d has already been bootstrapped' } };
  const waiting: PodObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'c-1' }, status: { phase: 'Running', containerStatuses: [{ name: 'etcd', image: 'etcd', imageID: '', ready: false, restartCount: 1, state: { waiting: { reason: 'CrashLoopBackOff' } }, lastState }] } };
  const running: PodObject = { apiVersion: 'v1', kind: 'Pod', metadata: { name: 'c-1' }, status: { phase: 'Running', containerStatuses: [{ name: 'etcd', image: 'etcd', imageID: '', ready: false, restartCount: 1, state: { running: {} }, lastState }] } };
  assert.equal(observePod(waiting, 0).dataLost, true);
  assert.equal(observePod(running, 0).dataLost, undefined);
});

test('failed (evicted) pods are deleted to be recreated; names are never reused', () => {
  assert.deepEqual(plan(observed({ pods: [pod(0), pod(1, { phase: 'Failed' }), pod(2)] })), { type: 'deletePod', member: 'c-1', reason: 'PodFailed' });
  assert.equal(nextIndex(observed({ pvcs: ['c-0', 'c-1', 'c-2', 'c-9'], nextMemberIndex: 4 })), 10);
});

test('a pod stuck Terminating on a dead node holds back only its own member; past the bound it is replaced', () => {
  const members = [0, 1, 2, 3].map((i) => member(i, i === 1 ? { healthy: false } : {}));
  const pods = [pod(0), pod(1, { ready: false, deleting: true, deletingSince: 1_000_000 - 60_000, nodeName: 'node-2' }), pod(2), pod(3)];
  const stuck = observed({ replicas: 5, pods, pvcs: ['c-0', 'c-1', 'c-2', 'c-3'], membership: { members, leaderId: '100' }, nextMemberIndex: 4 });
  // 3 of 4 voters serve, a quorum of 5 once the new member is promoted: the scale-up goes on.
  assert.deepEqual(plan(stuck), { type: 'addMember', member: 'c-4' });
  const atSize = observed({ ...stuck, replicas: 4 });
  const waiting = plan(atSize);
  assert.equal(waiting.type, 'wait');
  assert.ok(waiting.type === 'wait' && waiting.reason === 'PodStuckTerminating' && waiting.detail.includes('node-2') && waiting.detail.includes('out-of-service'), JSON.stringify(waiting));
  const past = observed({ ...atSize, now: 1_000_000 + 300_000 });
  assert.deepEqual(plan(past), { type: 'removeMember', member: 'c-1', id: '101', reason: 'PodStuckTerminating' });
  // Not while the rest would lose their quorum without it.
  const fragile = observed({ ...past, replicas: 3, pods: [pod(0), pods[1]!, pod(2, { ready: false })], pvcs: ['c-0', 'c-1', 'c-2'], membership: { members: [member(0), member(1, { healthy: false }), member(2, { healthy: false })], leaderId: '100' } });
  assert.equal(plan(fragile).type, 'wait');
});

test('a learner whose pod never starts does not hold back a lower replicas', () => {
  const o = observed({ replicas: 3, pods: [pod(0), pod(1), pod(2), pod(3, { phase: 'Pending', ready: false })], pvcs: ['c-0', 'c-1', 'c-2', 'c-3'], membership: { members: [member(0), member(1), member(2), member(3, { learner: true, started: false, healthy: false })], leaderId: '100' } });
  assert.deepEqual(plan(o), { type: 'removeMember', member: 'c-3', id: '103', reason: 'ScaleDown' });
  const stillWanted = observed({ ...o, replicas: 5 });
  const w = plan(stillWanted);
  assert.ok(w.type === 'wait' && w.reason === 'LearnerStarting' && w.detail.includes('Pending'), JSON.stringify(w));
});

test('scale-down removes a member that is down before a healthy one', () => {
  const o = observed({ replicas: 3, pods: [0, 1, 2, 3, 4].map((i) => pod(i, i === 1 ? { ready: false, crashLoopingSince: 999_000 } : {})), membership: { members: [0, 1, 2, 3, 4].map((i) => member(i, i === 1 ? { healthy: false } : {})), leaderId: '100' } });
  assert.deepEqual(plan(o), { type: 'removeMember', member: 'c-1', id: '101', reason: 'ScaleDown' });
});

test('a change refused everywhere for longer than the bound restarts the peer another member reports inactive', () => {
  const refused = { since: 1_000_000 - 130_000, activePeers: { 'c-0': ['c-2'], 'c-1': ['c-0', 'c-2'], 'c-2': ['c-0', 'c-1'] } };
  const o = observed({ replicas: 5, refused });
  const a = plan(o);
  assert.equal(a.type, 'restartMember');
  assert.ok(a.type === 'restartMember' && a.member === 'c-1' && a.detail.includes('c-0 reports c-1 inactive'), JSON.stringify(a));
  // Before the bound, or without a stale view, the change is simply tried again.
  assert.deepEqual(plan(observed({ replicas: 5, refused: { ...refused, since: 1_000_000 - 10_000 } })), { type: 'addMember', member: 'c-3' });
  assert.deepEqual(plan(observed({ replicas: 5, refused: { since: 0, activePeers: { 'c-0': ['c-1', 'c-2'], 'c-1': ['c-0', 'c-2'], 'c-2': ['c-0', 'c-1'] } } })), { type: 'addMember', member: 'c-3' });
  // Restarts are bounded per change: past them the change stays refused (and Degraded) for a person.
  assert.deepEqual(plan(observed({ replicas: 5, refused: { ...refused, restarts: 2 } })), { type: 'addMember', member: 'c-3' });
  // The leader's stale view of a follower: the follower restarts, not the leader.
  const leaderStale = plan(observed({ replicas: 5, refused: { since: 0, activePeers: { 'c-1': ['c-2'], 'c-0': ['c-1', 'c-2'], 'c-2': ['c-0', 'c-1'] } } }));
  assert.ok(leaderStale.type === 'restartMember' && leaderStale.member !== 'c-0', JSON.stringify(leaderStale));
});

test('without a quorum the wait names the members that did not answer, and why', () => {
  const a = plan(observed({ membership: undefined, unreachable: [{ member: 'c-1', error: 'etcd unavailable (timeout)' }, { member: 'c-2', error: 'pod Pending, not running yet' }] }));
  assert.ok(a.type === 'wait' && a.reason === 'QuorumUnavailable' && a.detail.includes('c-1 (etcd unavailable (timeout))') && a.detail.includes('c-2 (pod Pending'), JSON.stringify(a));
});

test("a crash's termination message is reduced to its cause, not the stack trace after it", () => {
  const panic = ['panic: unrecognized level: "shouting"', '', 'goroutine 1 [running]:', 'go.etcd.io/etcd/server/v3/etcdmain.startEtcdOrProxyV2(...)', '\t/go/src/etcdmain/etcd.go:58 +0x1f5', 'main.main()', '\t/go/src/main.go:40 +0x13'].join('\n');
  assert.equal(lastLines(panic), 'panic: unrecognized level: "shouting"');
  const fatal = '{"level":"info","msg":"starting"}\n{"level":"fatal","msg":"discovery failed","error":"member x has already been bootstrapped"}\n{"level":"info","msg":"bye"}';
  assert.equal(lastLines(fatal), '{"level":"fatal","msg":"discovery failed","error":"member x has already been bootstrapped"}\n{"level":"info","msg":"bye"}');
  assert.equal(lastLines('a\nb\nc\nd'), 'b\nc\nd');
  // A flag etcd does not have (3.6 dropped --enable-v2): Go's flag package names it, then prints the usage.
  const usage = ['flag provided but not defined: -enable-v2', 'Usage:', '', '  etcd [flags]', '    Start an etcd server.', '  etcd grpc-proxy', '    Run the stateless etcd v3 gRPC L7 reverse proxy.'].join('\n');
  assert.equal(lastLines(usage), 'flag provided but not defined: -enable-v2');
});

test('a one-member cluster grows: the learner it adds counts once promoted', () => {
  const one = observed({ replicas: 3, pods: [pod(0)], pvcs: ['c-0'], membership: { members: [member(0)], leaderId: '100' }, lastKnownMembers: ['c-0'], nextMemberIndex: 1 });
  assert.deepEqual(plan(one), { type: 'addMember', member: 'c-1' });
  // Three voters with one down: two serve, and three would once the new member is promoted (a quorum of 4).
  const threeOneDown = observed({ replicas: 4, pods: [pod(0), pod(1), pod(2, { ready: false, crashLoopingSince: 999_000 })], membership: { members: [member(0), member(1), member(2, { healthy: false })], leaderId: '100' } });
  assert.deepEqual(plan(threeOneDown), { type: 'addMember', member: 'c-3' });
  // Two of five voters down: three serve, four of six would be needed after the add; four would serve.
  const fiveTwoDown = observed({ replicas: 6, pods: [0, 1, 2, 3, 4].map((i) => pod(i, i >= 3 ? { ready: false, crashLoopingSince: 999_000 } : {})), membership: { members: [0, 1, 2, 3, 4].map((i) => member(i, i >= 3 ? { healthy: false } : {})), leaderId: '100' }, nextMemberIndex: 5 });
  assert.deepEqual(plan(fiveTwoDown), { type: 'addMember', member: 'c-5' });
  // Three of five down: no quorum left to change anything.
  const fiveThreeDown = observed({ ...fiveTwoDown, membership: { members: [0, 1, 2, 3, 4].map((i) => member(i, i >= 2 ? { healthy: false } : {})), leaderId: '100' } });
  assert.equal(plan(fiveThreeDown).type, 'wait');
});

test('a stale-peer restart belongs to the refused change: its age goes on, the restart is counted', () => {
  const now = new Date('2026-11-23T08:10:00Z');
  const refused = { name: 'addMember c-3', startedAt: '2026-11-23T08:00:00Z', refusedEverywhereSince: '2026-11-23T08:01:00Z', lastErrorReason: 'UnhealthyCluster' };
  const restarted = nextStep(refused, { type: 'restartMember', member: 'c-1', reason: 'StalePeerView', detail: 'x' }, undefined, now);
  assert.equal(restarted?.name, 'addMember c-3');
  assert.equal(restarted?.startedAt, refused.startedAt);
  assert.equal(restarted?.restarts, 1);
  assert.equal(restarted?.refusedEverywhereSince, now.toISOString());
  const again = nextStep(restarted, { type: 'addMember', member: 'c-3' }, undefined, now);
  assert.equal(again?.restarts, 1);
  assert.equal(again?.startedAt, refused.startedAt);
});

test('a restore waits for its backup, hands the snapshot to every initial member, and stops at a refused snapshot', () => {
  const fresh = { membership: undefined, bootstrapped: false, pods: [], pvcs: [], lastKnownMembers: [], bootstrapMembers: [], nextMemberIndex: 0 };
  const source = { destination: { s3: { bucket: 'quorum', credentialsSecret: 's' } }, key: 'k.db', sha256: 'a'.repeat(64) };
  const waiting = plan(observed({ ...fresh, restore: { ready: false, reason: 'BackupNotReady', why: 'EtcdBackup nightly has not succeeded yet (phase Running)' } }));
  assert.deepEqual(waiting, { type: 'wait', reason: 'BackupNotReady', detail: 'EtcdBackup nightly has not succeeded yet (phase Running)', requeueAfterMs: 5000 });
  const unmarked = plan(observed({ ...fresh, restore: { ready: false, reason: 'CredentialsNotLabelled', why: 'spec.bootstrap.fromBackup: the credentials Secret s is not labelled' } }));
  assert.deepEqual(unmarked, { type: 'wait', reason: 'CredentialsNotLabelled', detail: 'spec.bootstrap.fromBackup: the credentials Secret s is not labelled', requeueAfterMs: 15_000 }, 'no member, and so no mount, until the Secret is marked');
  assert.deepEqual(plan(observed({ ...fresh, restore: { ready: true, source } })), { type: 'bootstrap', members: ['c-0', 'c-1', 'c-2'], restore: source });
  // From a PVC (ReadWriteOnce, pinned to one node, and members run on different nodes): one member restores,
  // and the cluster grows from it.
  const fromClaim = { destination: { pvc: { claimName: 'etcd-backups' } }, key: 'k.db', sha256: 'b'.repeat(64) };
  assert.deepEqual(plan(observed({ ...fresh, restore: { ready: true, source: fromClaim } })), { type: 'bootstrap', members: ['c-0'], restore: fromClaim });
  const partial = observed({ ...fresh, restore: { ready: true, source }, bootstrapMembers: ['c-0', 'c-1', 'c-2'], pods: [pod(0, { ready: false })], pvcs: ['c-0'] });
  assert.deepEqual(plan(partial), { type: 'createPod', member: 'c-1', state: 'new', initialMembers: ['c-0', 'c-1', 'c-2'], reason: 'Bootstrap', restore: source });
  const refused = observed({
    ...fresh,
    restore: { ready: true, source },
    bootstrapMembers: ['c-0', 'c-1', 'c-2'],
    pods: [0, 1, 2].map((i) => pod(i, { ready: false, phase: 'Pending', restoreFailed: 'snapshot sha256 mismatch' })),
    pvcs: ['c-0', 'c-1', 'c-2'],
  });
  const a = plan(refused);
  assert.ok(a.type === 'wait' && a.reason === 'SnapshotRefused' && /no member serves it.*sha256 mismatch/.test(a.detail), JSON.stringify(a));
  // A snapshot with no SHA-256 to check it against: no member is made from it, and the wait says why.
  const unverifiable = plan(observed({ ...fresh, restore: { ready: false, reason: 'SnapshotHashMissing', why: 'EtcdBackup old succeeded without recording a sha256' } }));
  assert.deepEqual(unverifiable, { type: 'wait', reason: 'SnapshotHashMissing', detail: 'EtcdBackup old succeeded without recording a sha256', requeueAfterMs: 30_000 });
  // Once bootstrapped, the restore is history: a lost member is replaced the usual way, never restored.
  const later = plan(observed({ restore: { ready: false, reason: 'BackupNotReady', why: 'backup deleted' }, bootstrapped: true }));
  assert.notEqual(later.type === 'wait' && later.reason, 'BackupNotReady');
});

test('quorum lost for good: Manual says so and changes nothing; Restore picks the newest data', () => {
  const source = { destination: { s3: { bucket: 'quorum', credentialsSecret: 's' } }, key: 'k.db', sha256: 'a'.repeat(64) };
  // c-1 and c-2 lost their volumes (claims gone, pods crash-looping on empty data); c-0 survives alone.
  const lostQuorum = (over: Partial<Observed> = {}): Observed =>
    observed({ membership: undefined, pvcs: ['c-0'], pods: [pod(0, { ready: false }), pod(1, { ready: false, dataLost: true }), pod(2, { ready: false, dataLost: true })], ...over });
  const manual = plan(lostQuorum());
  assert.ok(manual.type === 'wait' && manual.reason === 'QuorumLost' && /c-1, c-2 lost their data/.test(manual.detail) && /Manual/.test(manual.detail), JSON.stringify(manual));

  const backup = { name: 'nightly', revision: '500', completedAt: '2026-11-23T00:00:00Z', source };
  const newerSurvivor = plan(lostQuorum({ disasterRecovery: 'Restore', localRevisions: { 'c-0': '900' }, newestBackup: backup }));
  assert.ok(newerSurvivor.type === 'startRecovery' && newerSurvivor.method === 'ForceNewCluster' && newerSurvivor.from === 'c-0' && newerSurvivor.revision === '900', JSON.stringify(newerSurvivor));
  assert.deepEqual(newerSurvivor.type === 'startRecovery' && newerSurvivor.lost, ['c-1', 'c-2']);

  const olderSurvivor = plan(lostQuorum({ disasterRecovery: 'Restore', localRevisions: { 'c-0': '400' }, newestBackup: backup }));
  assert.ok(olderSurvivor.type === 'startRecovery' && olderSurvivor.method === 'Backup' && olderSurvivor.from === 'nightly' && olderSurvivor.revision === '500', JSON.stringify(olderSurvivor));

  // A survivor that has not answered may hold the newest data: no choice is made without it.
  const silent = plan(lostQuorum({ disasterRecovery: 'Restore', localRevisions: {}, newestBackup: backup }));
  assert.ok(silent.type === 'wait' && silent.reason === 'QuorumLost' && /waiting for c-0 to answer/.test(silent.detail), JSON.stringify(silent));
  const nothing = plan(lostQuorum({ disasterRecovery: 'Restore', pods: [pod(1, { dataLost: true }), pod(2, { dataLost: true })], localRevisions: {} }));
  assert.ok(nothing.type !== 'startRecovery');

  // One member down (its pod missing, its claim there) is not a disaster: its pod comes back.
  const oneDown = plan(observed({ membership: undefined, disasterRecovery: 'Restore', pods: [pod(0), pod(1)], localRevisions: { 'c-0': '1', 'c-1': '1' } }));
  assert.equal(oneDown.type, 'createPod');
});

test('a ForceNewCluster recovery restarts the survivor with the flag, then without it once it serves alone', () => {
  const recovery = { method: 'ForceNewCluster' as const, from: 'c-0' };
  const base = { membership: undefined, pvcs: ['c-0'], disasterRecovery: 'Restore' as const, recovery };
  assert.deepEqual(plan(observed({ ...base, pods: [pod(1, { dataLost: true })] })), { type: 'createPod', member: 'c-0', state: 'existing', initialMembers: ['c-0'], reason: 'ForceNewCluster', forceNewCluster: true });
  assert.deepEqual(plan(observed({ ...base, pods: [pod(0, { ready: false })] })), { type: 'deletePod', member: 'c-0', reason: 'ForceNewCluster' });
  const alone = { membership: { members: [member(0)], leaderId: '100' }, pvcs: ['c-0'], pods: [pod(0, { forcedNewCluster: true })] };
  assert.deepEqual(plan(observed(alone)), { type: 'deletePod', member: 'c-0', reason: 'ForceNewClusterDone' });
});

test('a Backup recovery clears the old members, then bootstraps new ones from the backup', () => {
  const source = { destination: { s3: { bucket: 'quorum', credentialsSecret: 's' } }, key: 'k.db', sha256: 'a'.repeat(64) };
  const recovery = { method: 'Backup' as const, from: 'nightly', source };
  const base = { membership: undefined, bootstrapped: false, bootstrapMembers: [], lastKnownMembers: [], disasterRecovery: 'Restore' as const, recovery, nextMemberIndex: 3 };
  assert.equal(plan(observed({ ...base, pods: [pod(0, { ready: false })], pvcs: ['c-0'] })).type, 'clearForRestore');
  assert.equal(plan(observed({ ...base, pods: [pod(0, { deleting: true })], pvcs: [] })).type, 'wait');
  assert.deepEqual(plan(observed({ ...base, pods: [], pvcs: [] })), { type: 'bootstrap', members: ['c-3', 'c-4', 'c-5'], restore: source });
});
