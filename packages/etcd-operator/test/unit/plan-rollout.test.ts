// The planner's rolling updates, one situation at a time (design: docs/upgrades.md): the order of members,
// the leader last, the gate between members, halts, rollback, retry, the pre-checks, and what the planner
// does after the operator died between any two of its writes.
import assert from 'node:assert/strict';
import { describe, test } from 'node:test';
import { plan, type Action, type Observed, type ObservedMember, type ObservedPod, type ObservedRollout, type RolloutRecord } from '../../src/cluster/plan/index.ts';

const NOW = 1_700_000_000_000;
const iso = (ms: number): string => new Date(ms).toISOString();
const OLD = 'T1';
const NEW = 'T2';

const member = (i: number, extra: Partial<ObservedMember> = {}): ObservedMember => ({
  id: String(100 + i), member: `c-${i}`, started: true, learner: false, healthy: true, version: '3.5.35', appliedIndex: '500', caughtUp: true, ...extra,
});
const pod = (i: number, extra: Partial<ObservedPod> = {}): ObservedPod => ({ member: `c-${i}`, phase: 'Running', ready: true, deleting: false, readySince: NOW - 60_000, ...extra });
/** An updated member: its pod made from the new spec (so not in `outdated`), running 3.6.16. */
const updated = (i: number, extra: Partial<ObservedMember> = {}): ObservedMember => member(i, { version: '3.6.16', ...extra });
const record = (over: Partial<RolloutRecord> = {}): RolloutRecord => ({ target: NEW, fromVersion: '3.5.35', targetVersion: '3.6.16', startedAt: iso(NOW - 120_000), ...over });
const outdated = (...indexes: number[]): ObservedRollout['outdated'] => indexes.map((i) => ({ member: `c-${i}`, fields: ['image gcr.io/etcd-development/etcd:v3.5.35 → gcr.io/etcd-development/etcd:v3.6.16'] }));

interface Situation {
  members?: ObservedMember[];
  pods?: ObservedPod[];
  leader?: number;
  rollout?: Partial<ObservedRollout>;
  over?: Partial<Observed>;
}

/** Three members on 3.5.35, c-0 leading, spec.version just changed to 3.6.16 (every pod outdated, nothing recorded yet). */
function observed(s: Situation = {}): Observed {
  const members = s.members ?? [member(0), member(1), member(2)];
  return {
    cluster: 'c',
    replicas: members.length,
    persistent: true,
    reclaimPolicy: 'Retain',
    pods: s.pods ?? members.map((m) => pod(Number(m.member.slice(2)))),
    pvcs: members.map((m) => m.member),
    membership: { members, leaderId: String(100 + (s.leader ?? 0)), leaderCommit: '500' },
    lastKnownMembers: members.map((m) => m.member),
    bootstrapped: true,
    bootstrapMembers: ['c-0', 'c-1', 'c-2'],
    nextMemberIndex: 3,
    now: NOW,
    crashLoopGraceMs: 60_000,
    stuckTerminatingReplaceMs: 300_000,
    refusedRestartMs: 120_000,
    disasterRecovery: 'Manual',
    rollout: {
      outdated: outdated(0, 1, 2),
      target: NEW,
      targetVersion: '3.6.16',
      currentVersion: '3.5.35',
      path: { kind: 'Upgrade' },
      alarms: [],
      gateBoundMs: 300_000,
      minReadyMs: 2000,
      ...s.rollout,
    },
    ...s.over,
  };
}

const isWait = (a: Action, reason: string): a is Extract<Action, { type: 'wait' }> => a.type === 'wait' && a.reason === reason;
const updating = (a: Action): string | undefined => (a.type === 'updateMember' ? a.member : undefined);

describe('starting', () => {
  test('a cluster whose pods all match the spec, with nothing recorded, is not rolling: steady', () => {
    assert.deepEqual(plan(observed({ rollout: { outdated: [], path: { kind: 'None' } } })), { type: 'steady' });
  });

  test('a spec change is recorded before any member is touched, with the version it started from', () => {
    const a = plan(observed());
    assert.equal(a.type, 'startRollout');
    assert.ok(a.type === 'startRollout');
    assert.deepEqual(a.record, { target: NEW, fromVersion: '3.5.35', targetVersion: '3.6.16', startedAt: iso(NOW) });
    assert.match(a.detail, /rolling update of 3 members to 3\.6\.16: c-0 \(image .*v3\.5\.35 → .*v3\.6\.16\)/);
    // The retry annotation in place when it starts is consumed by this record (only a new value retries later).
    const withToken = plan(observed({ rollout: { retryToken: 'one' } }));
    assert.ok(withToken.type === 'startRollout' && withToken.record.retryToken === 'one');
  });

  test('a spec change in the middle of a rollout starts a new record (the old one described another target)', () => {
    const a = plan(observed({ rollout: { target: 'T3', record: record({ member: 'c-1', memberSince: iso(NOW - 10_000) }) } }));
    assert.ok(a.type === 'startRollout' && a.record.target === 'T3' && a.record.member === undefined, JSON.stringify(a));
  });

  test('a version move etcd would refuse changes nothing: UpgradeBlocked with the reason', () => {
    const why = 'etcd 3.5 cannot be downgraded to 3.4: etcd has a downgrade API from 3.6 on';
    const a = plan(observed({ rollout: { path: { kind: 'Refused', why } } }));
    assert.ok(isWait(a, 'UpgradeBlocked') && a.detail.includes(why) && a.detail.includes('No member is changed'), JSON.stringify(a));
    // Also mid-rollout: nothing is touched.
    assert.ok(isWait(plan(observed({ rollout: { path: { kind: 'Refused', why }, record: record() } })), 'UpgradeBlocked'));
  });
});

describe('the order: followers by index, the leader last after leadership moved to an updated member', () => {
  const rolling = (s: Situation): Action => plan(observed({ ...s, rollout: { record: record(), ...s.rollout } }));

  test('the first follower by index goes first; the leader is never first', () => {
    assert.equal(updating(rolling({})), 'c-1');
    assert.equal(updating(rolling({ leader: 1 })), 'c-0');
    const a = rolling({});
    assert.ok(a.type === 'updateMember' && a.via === 'evict' && a.id === '101' && /rolling update to 3\.6\.16 \(0\/3 updated\): updating c-1, a follower/.test(a.detail), JSON.stringify(a));
  });

  test('once a follower passed its gate, the next follower goes', () => {
    const a = rolling({ members: [member(0), updated(1), member(2)], rollout: { outdated: outdated(0, 2), record: record({ member: 'c-1', memberSince: iso(NOW - 30_000) }) } });
    assert.equal(updating(a), 'c-2');
    assert.ok(a.type === 'updateMember' && a.detail.includes('(1/3 updated)'));
  });

  test('with every follower updated, leadership moves to the updated member that has applied the most', () => {
    const members = [member(0), updated(1, { appliedIndex: '510' }), updated(2, { appliedIndex: '530' })];
    const a = rolling({ members, rollout: { outdated: outdated(0), record: record({ member: 'c-2', memberSince: iso(NOW - 30_000) }) } });
    assert.deepEqual(a.type === 'moveLeader' && { from: a.from, fromId: a.fromId, to: a.to, toId: a.toId }, { from: 'c-0', fromId: '100', to: 'c-2', toId: '102' });
  });

  test('after the move, the old leader is an outdated follower like any other: it goes last', () => {
    const members = [member(0), updated(1), updated(2)];
    assert.equal(updating(rolling({ members, leader: 2, rollout: { outdated: outdated(0) } })), 'c-0');
  });

  test('every member updated and through its gate: steady (status then drops the record)', () => {
    assert.deepEqual(rolling({ members: [updated(0), updated(1), updated(2)], rollout: { outdated: [], record: record({ member: 'c-0', memberSince: iso(NOW - 30_000) }) } }), { type: 'steady' });
  });

  test('a single member is updated in place (it has no one to hand leadership to)', () => {
    const a = plan(observed({ members: [member(0)], rollout: { outdated: outdated(0), record: record() } }));
    assert.ok(a.type === 'updateMember' && a.member === 'c-0' && /the only member/.test(a.detail), JSON.stringify(a));
  });

  test('on emptyDir a member is replaced by a new one (deleting its pod would lose its data anyway)', () => {
    const a = plan(observed({ over: { persistent: false }, rollout: { record: record() } }));
    assert.ok(a.type === 'updateMember' && a.member === 'c-1' && a.via === 'replace', JSON.stringify(a));
  });

  test('without a leader agreed by a quorum, no member goes (the leader must be known to be left for last)', () => {
    const o = observed({ rollout: { record: record() } });
    const a = plan({ ...o, membership: { ...o.membership!, leaderId: undefined } });
    assert.ok(isWait(a, 'RollingUpdate') && /no leader/.test(a.detail), JSON.stringify(a));
  });

  test('membership and healing come first: a scale-up during a rollout adds its member (made from the new spec) before the next update', () => {
    const a = plan(observed({ over: { replicas: 5 }, rollout: { record: record() } }));
    // Every member is on 3.5 still: a downgrade to 3.5 etcd may still have enabled is ended first (plan.test.ts).
    assert.deepEqual(a, { type: 'addMember', member: 'c-3', endDowngradeTo: '3.5' });
  });
});

describe('the gate: started, healthy, Ready for minReadyMs, caught up with the leader, on spec.version', () => {
  // c-1 is the rollout's member: its pod was evicted 30 s ago.
  const inFlight = (m: Partial<ObservedMember>, p: Partial<ObservedPod> | null, over: Partial<RolloutRecord> = {}): Action => {
    const pods = [pod(0), ...(p === null ? [] : [pod(1, p)]), pod(2)];
    return plan(observed({ members: [member(0), updated(1, m), member(2)], pods, rollout: { outdated: outdated(0, 2), record: record({ member: 'c-1', memberSince: iso(NOW - 30_000), ...over }) } }));
  };
  const waitingOn = (a: Action, text: RegExp): void => {
    assert.ok(isWait(a, 'RollingUpdate'), JSON.stringify(a));
    assert.equal(a.subject, 'c-1', 'a step per member');
    assert.equal(a.boundMs, 300_000, "the gate's bound, not the default step deadline");
    assert.match(a.detail, /^rolling update to 3\.6\.16 \(\d\/3 updated\): updating c-1: /);
    assert.match(a.detail, text);
  };

  test('its pod gone: recreated on its PVC as the same member, with reason RollingUpdate', () => {
    assert.deepEqual(inFlight({}, null), { type: 'createPod', member: 'c-1', state: 'existing', initialMembers: ['c-0', 'c-1', 'c-2'], reason: 'RollingUpdate' });
  });

  test('each missing condition is a wait naming it', () => {
    waitingOn(inFlight({}, { deleting: true, ready: false }), /its old pod is terminating/);
    waitingOn(inFlight({ healthy: false }, { ready: false }), /its etcd does not answer yet, or knows no leader/);
    waitingOn(inFlight({}, { ready: false, readySince: undefined }), /its pod is not Ready yet/);
    waitingOn(inFlight({}, { readySince: NOW - 1000 }), /its pod has been Ready for 1 s of the 2 s required/);
    waitingOn(inFlight({ caughtUp: false, appliedIndex: '480' }, {}), /it has applied raft index 480, behind the leader's commit index 500/);
    waitingOn(inFlight({ caughtUp: undefined, appliedIndex: undefined }, {}), /it has not been seen caught up with the leader yet/);
    waitingOn(inFlight({}, { phase: 'Pending', ready: false, cannotStart: 'etcd: ErrImagePull: pull access denied' }), /it cannot start: etcd: ErrImagePull/);
  });

  test('the Ready dwell ends at a known time: the wait comes back right then, not on the next second', () => {
    const a = inFlight({}, { readySince: NOW - 1500 });
    assert.ok(a.type === 'wait');
    assert.equal(a.requeueAfterMs, 520);
    const other = inFlight({ caughtUp: false, appliedIndex: '480' }, {});
    assert.ok(other.type === 'wait');
    assert.equal(other.requeueAfterMs, 1000);
  });

  test('every condition met: the next member goes', () => {
    assert.equal(updating(inFlight({}, {})), 'c-2');
  });

  test('an updated member that is not the rollout\'s member is gated too (no member goes while one on the new spec is down)', () => {
    const a = plan(observed({ members: [member(0), updated(1, { healthy: false }), member(2)], pods: [pod(0), pod(1, { ready: false }), pod(2)], rollout: { outdated: outdated(0, 2), record: record() } }));
    assert.ok(isWait(a, 'RollingUpdate') && a.subject === 'c-1' && /updated member c-1/.test(a.detail), JSON.stringify(a));
  });

  test('leadership moves only to an updated member seen caught up', () => {
    const members = [member(0), updated(1), updated(2, { caughtUp: false, appliedIndex: '499' })];
    const a = plan(observed({ members, rollout: { outdated: outdated(0), record: record({ member: 'c-2', memberSince: iso(NOW - 30_000) }) } }));
    assert.ok(isWait(a, 'RollingUpdate') && a.subject === 'c-2', JSON.stringify(a));
  });
});

describe('halts: the rollout stops at the member that failed, and never moves to the next one', () => {
  const halting = (m: Partial<ObservedMember>, p: Partial<ObservedPod>, since = NOW - 30_000): Action =>
    plan(observed({ members: [member(0), updated(1, m), member(2)], pods: [pod(0), pod(1, p), pod(2)], rollout: { outdated: outdated(0, 2), record: record({ member: 'c-1', memberSince: iso(since) }) } }));

  test('a crash-looping updated member halts at once, with the exit code and etcd\'s own words', () => {
    const a = halting({ healthy: false, version: undefined }, { ready: false, crashLoopingSince: NOW - 5000, lastTermination: { exitCode: 2, message: 'flag provided but not defined: -name' } });
    assert.deepEqual(a, { type: 'haltRollout', member: 'c-1', reason: 'CrashLooping', message: 'its etcd keeps exiting: exit code 2: flag provided but not defined: -name' });
  });

  test('an updated member running another version than spec.version halts (an image that does not match the version)', () => {
    const a = halting({ version: '3.5.35' }, {});
    assert.deepEqual(a, { type: 'haltRollout', member: 'c-1', reason: 'VersionMismatch', message: 'its image runs etcd 3.5.35, but spec.version is 3.6.16' });
  });

  test('past the gate\'s bound: GateTimeout naming the missing check, or CannotStart with the kubelet\'s words', () => {
    const timeout = halting({ caughtUp: false, appliedIndex: '10' }, {}, NOW - 301_000);
    assert.ok(timeout.type === 'haltRollout' && timeout.reason === 'GateTimeout' && /applied raft index 10.*301 s after its update began \(the bound is 300 s\)/.test(timeout.message), JSON.stringify(timeout));
    const pull = halting({ healthy: false, version: undefined }, { ready: false, phase: 'Pending', cannotStart: 'etcd: ImagePullBackOff: Back-off pulling image "nope"' }, NOW - 301_000);
    assert.ok(pull.type === 'haltRollout' && pull.reason === 'CannotStart' && /ImagePullBackOff/.test(pull.message), JSON.stringify(pull));
    // Within the bound it is only a wait.
    assert.ok(isWait(halting({ caughtUp: false, appliedIndex: '10' }, {}, NOW - 299_000), 'RollingUpdate'));
  });

  test('a halted rollout waits for a person: UpgradeFailed, no next member, no new member, no crash-loop replacement', () => {
    const halted = record({ member: 'c-1', memberSince: iso(NOW - 60_000), halted: { member: 'c-1', reason: 'CrashLooping', message: 'its etcd keeps exiting: exit code 2: bad flag', at: iso(NOW - 50_000) } });
    const members = [member(0), updated(1, { healthy: false, version: undefined }), member(2)];
    const pods = [pod(0), pod(1, { ready: false, crashLoopingSince: NOW - 600_000 }), pod(2)];
    const a = plan(observed({ members, pods, rollout: { outdated: outdated(0, 2), record: halted } }));
    assert.ok(isWait(a, 'UpgradeFailed'), JSON.stringify(a));
    assert.match(a.detail, /^rolling update to 3\.6\.16 halted at c-1 \(CrashLooping\): its etcd keeps exiting: exit code 2: bad flag\. No further member is updated\. To roll back, set spec\.version back to 3\.5\.35; to try again after fixing the cause, set the annotation etcd\.quorum\.dev\/retry-rollout to a new value$/);
    // c-1 has crash-looped for 10 minutes, far past the grace period: a rollout's failure is not replaced.
    assert.notEqual(a.type, 'removeMember');
    const grow = plan(observed({ members, pods, over: { replicas: 5 }, rollout: { outdated: outdated(0, 2), record: halted } }));
    assert.ok(isWait(grow, 'UpgradeFailed') && /no member is added while the rollout is halted/.test(grow.detail), JSON.stringify(grow));
  });

  test('a crash-looping member is replaced as before when no rollout is recorded', () => {
    const pods = [pod(0), pod(1, { ready: false, crashLoopingSince: NOW - 61_000 }), pod(2)];
    const a = plan(observed({ members: [member(0), member(1, { healthy: false }), member(2)], pods, rollout: { outdated: [], path: { kind: 'None' } } }));
    assert.deepEqual(a, { type: 'removeMember', member: 'c-1', id: '101', reason: 'CrashLooping' });
  });
});

describe('rollback and retry', () => {
  const halted = record({ member: 'c-1', memberSince: iso(NOW - 60_000), halted: { member: 'c-1', reason: 'CrashLooping', message: 'exit code 2', at: iso(NOW - 50_000), }, retryToken: 'a' });
  // The members as the halt left them: c-1 crash-looping on the new spec, the others on the old one.
  const members = [member(0), member(1, { healthy: false, version: undefined }), member(2)];
  const pods = [pod(0), pod(1, { ready: false, crashLoopingSince: NOW - 60_000, lastTermination: { exitCode: 2, message: 'bad flag' } }), pod(2)];

  test('setting spec.version back is a new target: a new record (not halted), then the halted member first, since it serves nobody', () => {
    // Back on the old spec: only c-1 (made from the new one) differs now.
    const back = { target: OLD, targetVersion: '3.5.35', outdated: outdated(1), path: { kind: 'Rollback' as const } };
    const start = plan(observed({ members, pods, rollout: { ...back, record: halted } }));
    assert.ok(start.type === 'startRollout' && start.record.target === OLD && start.record.halted === undefined, JSON.stringify(start));
    const next = plan(observed({ members, pods, rollout: { ...back, record: start.record } }));
    assert.ok(next.type === 'updateMember' && next.member === 'c-1' && /which serves nobody now/.test(next.detail), JSON.stringify(next));
    // Back to an older minor: the act checks at the last moment that etcd's cluster version is still 3.5.
    assert.equal(next.type === 'updateMember' && next.clusterVersionAtMost, '3.5');
  });

  test('a new value of the retry annotation retries the same target at the halted member, on a fresh pod; the consumed value does not', () => {
    assert.ok(isWait(plan(observed({ members, pods, rollout: { outdated: outdated(0, 2), record: halted, retryToken: 'a' } })), 'UpgradeFailed'));
    const retry = plan(observed({ members, pods, rollout: { outdated: outdated(0, 2), record: halted, retryToken: 'b' } }));
    assert.ok(retry.type === 'startRollout', JSON.stringify(retry));
    assert.deepEqual(retry.record, { target: NEW, fromVersion: '3.5.35', targetVersion: '3.6.16', startedAt: iso(NOW), member: 'c-1', memberSince: iso(NOW), retryToken: 'b' });
    // Its pod has crash-looped since before the retry (the kubelet's back-off): it is evicted for a fresh one.
    const later = { over: { now: NOW + 1000 }, rollout: { outdated: outdated(0, 2), record: retry.record, retryToken: 'b' } };
    const again = plan(observed({ members, pods, ...later }));
    assert.ok(again.type === 'updateMember' && again.member === 'c-1' && /again, on a fresh pod/.test(again.detail), JSON.stringify(again));
    // The fresh pod crash-loops too: that halts again.
    const fresh = [pod(0), pod(1, { ready: false, crashLoopingSince: NOW + 500 }), pod(2)];
    const haltedAgain = plan(observed({ members, pods: fresh, ...later }));
    assert.ok(haltedAgain.type === 'haltRollout' && haltedAgain.member === 'c-1' && haltedAgain.reason === 'CrashLooping', JSON.stringify(haltedAgain));
  });
});

describe('pre-checks, before each member', () => {
  test('every other member must serve; one that does not is named', () => {
    const a = plan(observed({ members: [member(0), member(1), member(2, { healthy: false })], pods: [pod(0), pod(1), pod(2, { ready: false })], rollout: { record: record() } }));
    assert.ok(isWait(a, 'RollingUpdate') && /only while every other member serves; not serving: c-2/.test(a.detail), JSON.stringify(a));
  });

  test('an outdated member that crash-loops or cannot start goes first: it serves nobody, and the new spec may be its fix', () => {
    const pods = [pod(0), pod(1), pod(2, { ready: false, crashLoopingSince: NOW - 5000 })];
    const a = plan(observed({ members: [member(0), member(1), member(2, { healthy: false })], pods, rollout: { record: record(), path: { kind: 'None' } } }));
    assert.equal(updating(a), 'c-2');
  });

  test('a CORRUPT alarm blocks every rollout; NOSPACE blocks a version move but not a configuration change (raising the quota is its fix)', () => {
    const corrupt = plan(observed({ rollout: { record: record(), alarms: [{ member: 'c-2', alarm: 'CORRUPT' }] } }));
    assert.ok(isWait(corrupt, 'UpgradeBlocked') && /CORRUPT alarm on c-2/.test(corrupt.detail), JSON.stringify(corrupt));
    assert.ok(isWait(plan(observed({ rollout: { record: record(), path: { kind: 'None' }, alarms: [{ member: 'c-2', alarm: 'CORRUPT' }] } })), 'UpgradeBlocked'));
    const nospace = plan(observed({ rollout: { record: record(), alarms: [{ member: 'c-0', alarm: 'NOSPACE' }] } }));
    assert.ok(isWait(nospace, 'UpgradeBlocked') && /NOSPACE alarm on c-0: the operator compacted and defragmented every member, and the data still does not fit the quota: raise spec.etcd.quotaBackendBytes first/.test(nospace.detail), JSON.stringify(nospace));
    const quota = plan(observed({ rollout: { record: record({ fromVersion: '3.6.16' }), targetVersion: '3.6.16', path: { kind: 'None' }, alarms: [{ member: 'c-0', alarm: 'NOSPACE' }] } }));
    assert.equal(updating(quota), 'c-1');
  });

  test('alarms that could not be read are a wait: no member goes on an unknown', () => {
    const { alarms: _, ...rest } = observed({ rollout: { record: record() } }).rollout;
    const a = plan(observed({ rollout: { ...rest, alarms: undefined, alarmsUnread: 'context deadline exceeded' } }));
    assert.ok(isWait(a, 'RollingUpdate') && /alarms could not be read \(context deadline exceeded\)/.test(a.detail), JSON.stringify(a));
  });
});

describe('the operator dies between any two writes: the next reconcile goes on from what it observes', () => {
  test('after startRollout was written: the first follower', () => {
    assert.equal(updating(plan(observed({ rollout: { record: record() } }))), 'c-1');
  });

  test('after the member was recorded, before its eviction: the same member again', () => {
    assert.equal(updating(plan(observed({ rollout: { record: record({ member: 'c-1', memberSince: iso(NOW - 5000) }) } }))), 'c-1');
  });

  test('after the eviction: wait while its pod terminates, recreate it once gone, then its gate', () => {
    const members = [member(0), updated(1, { healthy: false }), member(2)];
    const rec = record({ member: 'c-1', memberSince: iso(NOW - 5000) });
    const terminating = plan(observed({ members, pods: [pod(0), pod(1, { deleting: true }), pod(2)], rollout: { outdated: outdated(0, 2), record: rec } }));
    assert.ok(isWait(terminating, 'RollingUpdate') && terminating.subject === 'c-1');
    const gone = plan(observed({ members, pods: [pod(0), pod(2)], rollout: { outdated: outdated(0, 2), record: rec } }));
    assert.ok(gone.type === 'createPod' && gone.reason === 'RollingUpdate');
  });

  test('after MoveLeader: the old leader is updated as a follower', () => {
    assert.equal(updating(plan(observed({ members: [member(0), updated(1), updated(2)], leader: 1, rollout: { outdated: outdated(0), record: record({ member: 'c-2', memberSince: iso(NOW - 60_000) }) } }))), 'c-0');
  });

  test('after the halt was written: the wait for a person, nothing else', () => {
    const halted = record({ member: 'c-1', halted: { member: 'c-1', reason: 'GateTimeout', message: 'x', at: iso(NOW) } });
    assert.ok(isWait(plan(observed({ rollout: { outdated: outdated(0, 2), record: halted } })), 'UpgradeFailed'));
  });
});

describe('the backup before a version change (spec.backup.beforeVersionChange Always)', () => {
  const destination = { s3: { bucket: 'b', credentialsSecret: 's' } };
  const preBackup = (phase: NonNullable<ObservedRollout['preBackup']>['phase'], message?: string): ObservedRollout['preBackup'] => ({
    name: 'c-pre-3-6-16-abcde', destination, phase, ...(message ? { message } : {}), boundMs: 360_000,
  });
  const rolling = (s: Situation): Action => plan(observed({ ...s, rollout: { record: record(), ...s.rollout } }));

  test('before the first member: the backup is created, then waited for, and only its success lets the first follower go', () => {
    const create = rolling({ rollout: { preBackup: preBackup('Missing') } });
    assert.ok(create.type === 'createBackup' && create.name === 'c-pre-3-6-16-abcde' && create.destination === destination, JSON.stringify(create));
    assert.match(create.detail, /taking EtcdBackup c-pre-3-6-16-abcde before any member is updated/);
    for (const phase of ['Pending', 'Running'] as const) {
      const a = rolling({ rollout: { preBackup: preBackup(phase) } });
      assert.ok(isWait(a, 'BackupBeforeUpgrade') && a.boundMs === 360_000 && a.detail.includes(`EtcdBackup c-pre-3-6-16-abcde (${phase})`), JSON.stringify(a));
    }
    assert.equal(updating(rolling({ rollout: { preBackup: preBackup('Succeeded') } })), 'c-1');
  });

  test('a failed backup halts the rollout with its reason, before any member is touched', () => {
    const a = rolling({ rollout: { preBackup: preBackup('Failed', 'BucketNotFound: the bucket b does not exist') } });
    assert.ok(a.type === 'haltRollout' && a.reason === 'BackupFailed' && a.member === 'c-0', JSON.stringify(a));
    assert.match(a.message, /EtcdBackup c-pre-3-6-16-abcde, taken before the version change, failed \(BucketNotFound: the bucket b does not exist\); no member was updated/);
  });

  test('pre-checks come first: no backup is taken while a member does not serve', () => {
    const a = rolling({ members: [member(0), member(1, { healthy: false }), member(2)], rollout: { preBackup: preBackup('Missing') } });
    assert.ok(isWait(a, 'RollingUpdate'), JSON.stringify(a));
  });

  test('once a member is on the new spec, the backup is not waited for again (the data it was for has moved on)', () => {
    const a = rolling({ members: [member(0), updated(1), member(2)], rollout: { outdated: outdated(0, 2), record: record({ member: 'c-1', memberSince: iso(NOW - 30_000) }), preBackup: preBackup('Missing') } });
    assert.equal(updating(a), 'c-2');
  });

  test('a change that keeps the version takes no backup, even with one observed', () => {
    const a = rolling({ rollout: { targetVersion: '3.5.35', record: record({ targetVersion: '3.5.35' }), path: { kind: 'None' }, preBackup: preBackup('Missing') } });
    assert.equal(updating(a), 'c-1');
  });
});

describe("a downgrade 3.6 → 3.5 through etcd's downgrade API", () => {
  const on36 = (i: number, extra: Partial<ObservedMember> = {}): ObservedMember => member(i, { version: '3.6.16', storageVersion: '3.6.0', downgrade: { enabled: false }, ...extra });
  const down = (over: Partial<ObservedRollout> = {}, members = [on36(0), on36(1), on36(2)]): Action =>
    plan(observed({
      members,
      rollout: {
        outdated: outdated(...members.filter((m) => m.version === '3.6.16').map((m) => Number(m.member.slice(2)))),
        targetVersion: '3.5.35', currentVersion: '3.6.16', path: { kind: 'Downgrade' }, clusterVersion: '3.6.0', downgrade: { enabled: false },
        record: record({ fromVersion: '3.6.16', targetVersion: '3.5.35' }),
        ...over,
      },
    }));

  test('first etcd is told, through the leader, before any member is touched', () => {
    const a = down();
    assert.ok(a.type === 'downgrade' && a.op === 'enable' && a.target === '3.5' && a.via === 'c-0', JSON.stringify(a));
    assert.match(a.detail, /enabling etcd's downgrade to 3\.5 \(its cluster version moves to 3\.5\.0/);
  });

  test('then no member goes back until every member migrated its storage version and the cluster version is 3.5.0', () => {
    const enabled = { enabled: true, targetVersion: '3.5.0' };
    const migrating = down({ clusterVersion: '3.5.0', downgrade: enabled }, [on36(0, { storageVersion: '3.5.0', downgrade: enabled }), on36(1, { downgrade: enabled }), on36(2, { storageVersion: '3.5.0', downgrade: enabled })]);
    assert.ok(isWait(migrating, 'DowngradeMigratingStorage') && migrating.detail.includes('c-1 (storage version 3.6.0)') && migrating.boundMs === 300_000, JSON.stringify(migrating));
    const migrated = [0, 1, 2].map((i) => on36(i, { storageVersion: '3.5.0', downgrade: enabled }));
    const notYet = down({ clusterVersion: '3.6.0', downgrade: enabled }, migrated);
    assert.ok(isWait(notYet, 'DowngradeMigratingStorage') && notYet.detail.includes("cluster version is 3.6.0, not 3.5.0"), JSON.stringify(notYet));
    const go = down({ clusterVersion: '3.5.0', downgrade: enabled }, migrated);
    assert.ok(go.type === 'updateMember' && go.member === 'c-1' && go.clusterVersionAtMost === '3.5' && go.storageVersion === '3.5.0', JSON.stringify(go));
  });

  test('members already on 3.5 are past the storage check; the leader still goes last', () => {
    const enabled = { enabled: true, targetVersion: '3.5.0' };
    const members = [on36(0, { storageVersion: '3.5.0', downgrade: enabled }), member(1, { version: '3.5.35' }), member(2, { version: '3.5.35' })];
    const a = down({ clusterVersion: '3.5.0', downgrade: enabled, record: record({ fromVersion: '3.6.16', targetVersion: '3.5.35', member: 'c-2', memberSince: iso(NOW - 30_000) }) }, members);
    assert.ok(a.type === 'moveLeader' && a.from === 'c-0', JSON.stringify(a));
  });

  test('spec.version set back to 3.6 during a downgrade: etcd\'s downgrade is cancelled first', () => {
    const enabled = { enabled: true, targetVersion: '3.5.0' };
    const members = [on36(0, { storageVersion: '3.5.0', downgrade: enabled }), member(1, { version: '3.5.35' }), on36(2, { storageVersion: '3.5.0', downgrade: enabled })];
    const a = plan(observed({ members, rollout: { outdated: outdated(1), targetVersion: '3.6.16', target: 'T3', path: { kind: 'Upgrade' }, clusterVersion: '3.5.0', downgrade: enabled, record: record({ target: 'T3', fromVersion: '3.5.35', targetVersion: '3.6.16' }) } }));
    assert.ok(a.type === 'downgrade' && a.op === 'cancel' && a.target === '3.5' && a.via === 'c-0', JSON.stringify(a));
    // Once cancelled, the member on 3.5 is upgraded back like any upgrade.
    const after = plan(observed({ members: members.map((m) => ({ ...m, downgrade: m.downgrade ? { enabled: false } : undefined })), rollout: { outdated: outdated(1), targetVersion: '3.6.16', target: 'T3', path: { kind: 'Upgrade' }, clusterVersion: '3.5.0', downgrade: { enabled: false }, record: record({ target: 'T3', fromVersion: '3.5.35', targetVersion: '3.6.16' }) } }));
    assert.equal(updating(after), 'c-1');
  });
});
