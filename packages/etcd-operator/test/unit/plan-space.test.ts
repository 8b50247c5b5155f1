// Storage maintenance in the planner (pure): defragmentation by threshold and schedule, and the NOSPACE recovery
// (compact, defragment each member with the leader last, disarm once the data fits), with what holds them back.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFRAG_COOLDOWN_MS, plan, type Action, type Observed, type ObservedMember, type ObservedPod, type ObservedSpace } from '../../src/cluster/plan/index.ts';
import { maintenanceStatus } from '../../src/cluster/maintenance.ts';

const MiB = 1024 * 1024;
const member = (i: number, extra: Partial<ObservedMember> = {}): ObservedMember => ({ id: String(100 + i), member: `c-${i}`, started: true, learner: false, healthy: true, ...extra });
const pod = (i: number, extra: Partial<ObservedPod> = {}): ObservedPod => ({ member: `c-${i}`, phase: 'Running', ready: true, deleting: false, ...extra });
const NOW = 10_000_000;

function space(over: Partial<ObservedSpace> = {}): ObservedSpace {
  return { sizes: [0, 1, 2].map((i) => ({ member: `c-${i}`, dbSize: 40 * MiB, dbSizeInUse: 38 * MiB })), alarms: [], revision: '5000', quotaBytes: 64 * MiB, lastDefrag: {}, ...over };
}

function observed(over: Partial<Observed> = {}): Observed {
  return {
    cluster: 'c', replicas: 3, persistent: true, reclaimPolicy: 'Retain',
    pods: [pod(0), pod(1), pod(2)], pvcs: ['c-0', 'c-1', 'c-2'],
    // c-0 leads: the leader-last order must put it after c-1 and c-2 although its index is lowest.
    membership: { members: [member(0), member(1), member(2)], leaderId: '100' },
    lastKnownMembers: ['c-0', 'c-1', 'c-2'], bootstrapped: true, bootstrapMembers: ['c-0', 'c-1', 'c-2'], nextMemberIndex: 3,
    now: NOW, crashLoopGraceMs: 60_000, stuckTerminatingReplaceMs: 300_000, refusedRestartMs: 120_000, disasterRecovery: 'Manual',
    rollout: { outdated: [], target: 't1', targetVersion: '3.6.16', currentVersion: '3.6.16', path: { kind: 'None' }, alarms: [], gateBoundMs: 300_000, minReadyMs: 2000 },
    space: space(),
    ...over,
  };
}

const fragmented = (members: number[]): ObservedSpace['sizes'] => [0, 1, 2].map((i) => ({ member: `c-${i}`, dbSize: 40 * MiB, dbSizeInUse: members.includes(i) ? 10 * MiB : 38 * MiB }));
const defrag = (a: Action): string | undefined => (a.type === 'defragment' ? `${a.member} ${a.reason}` : undefined);

test('no policy, no alarm: steady, whatever the fragmentation', () => {
  assert.deepEqual(plan(observed({ space: space({ sizes: fragmented([0, 1, 2]) }) })), { type: 'steady' });
});

test('threshold: members over it are defragmented one per step, followers first, the leader last', () => {
  const all = space({ sizes: fragmented([0, 1, 2]), thresholdPercent: 50 });
  assert.equal(defrag(plan(observed({ space: all }))), 'c-1 Threshold');
  assert.equal(defrag(plan(observed({ space: { ...all, lastDefrag: { 'c-1': NOW - 1000 } } }))), 'c-2 Threshold', 'c-1 was just done: its cooldown holds it');
  assert.equal(defrag(plan(observed({ space: { ...all, lastDefrag: { 'c-1': NOW - 1000, 'c-2': NOW - 500 } } }))), 'c-0 Threshold', 'the leader last');
  // Below the threshold, or too few bytes free to matter: nothing.
  assert.deepEqual(plan(observed({ space: space({ sizes: fragmented([0]), thresholdPercent: 80 }) })), { type: 'steady' });
  const tiny = space({ thresholdPercent: 10, sizes: [0, 1, 2].map((i) => ({ member: `c-${i}`, dbSize: 1.5 * MiB, dbSizeInUse: 0.8 * MiB })) });
  assert.deepEqual(plan(observed({ space: tiny })), { type: 'steady' });
  // The cooldown ends.
  assert.equal(defrag(plan(observed({ space: { ...all, lastDefrag: { 'c-1': NOW - DEFRAG_COOLDOWN_MS } } }))), 'c-1 Threshold');
  const a = plan(observed({ space: all }));
  assert.ok(a.type === 'defragment' && a.dbSize === 40 * MiB && a.timeoutMs > 60_000);
});

test('schedule: every member not defragmented since it fired, followers first, the leader last', () => {
  const s = space({ scheduledAt: NOW - 60_000 });
  assert.equal(defrag(plan(observed({ space: s }))), 'c-1 Schedule');
  assert.equal(defrag(plan(observed({ space: { ...s, lastDefrag: { 'c-1': NOW - 30_000, 'c-2': NOW - 20_000 } } }))), 'c-0 Schedule');
  assert.deepEqual(plan(observed({ space: { ...s, lastDefrag: { 'c-0': NOW - 1, 'c-1': NOW - 30_000, 'c-2': NOW - 20_000 } } })), { type: 'steady' });
});

test('no defragmentation by policy while anything else is under way or a member does not serve', () => {
  const s = space({ sizes: fragmented([0, 1, 2]), thresholdPercent: 50 });
  assert.equal(plan(observed({ space: s, pods: [pod(0), pod(1, { ready: false }), pod(2)] })).type, 'wait', 'a member not Ready');
  assert.equal(plan(observed({ space: s, membership: { members: [member(0), member(1), member(2, { healthy: false })], leaderId: '100' } })).type, 'wait');
  assert.equal(plan(observed({ space: s, replicas: 5 })).type, 'addMember', 'scaling first');
  const rolling = observed({ space: s, rollout: { ...observed().rollout, outdated: [{ member: 'c-1', fields: ['render'] }] } });
  assert.equal(plan(rolling).type, 'startRollout');
  assert.deepEqual(plan(observed({ space: { ...s, alarms: [{ member: 'c-1', memberId: '101', alarm: 'CORRUPT' }] } })), { type: 'steady' }, 'never on suspect data');
  const rotating = observed({ space: s, tls: { issue: [], memberSecrets: [], caRotation: { ca: 'peer', phase: 'Reissue', why: 'x', notServedByNew: ['c-1'] } } });
  assert.equal(plan(rotating).type, 'wait');
});

const NOSPACE = [{ member: 'c-2', memberId: '102', alarm: 'NOSPACE' }];

test('NOSPACE: compact to the current revision, then each member (the leader last), then disarm once the data fits', () => {
  const raised = space({ alarms: NOSPACE, noSpace: {} });
  assert.deepEqual(pick(plan(observed({ space: raised }))), { type: 'compact', revision: '5000', via: 'c-0' });
  const compacted = { ...raised, noSpace: { compactedAt: NOW - 5000 }, lastDefrag: { 'c-1': NOW - 100_000 } };
  assert.equal(defrag(plan(observed({ space: compacted }))), 'c-1 NoSpace', 'a defragmentation before the compaction does not count');
  assert.equal(defrag(plan(observed({ space: { ...compacted, lastDefrag: { 'c-1': NOW - 4000, 'c-2': NOW - 3000 } } }))), 'c-0 NoSpace');
  const done = { ...compacted, lastDefrag: { 'c-0': NOW - 1000, 'c-1': NOW - 4000, 'c-2': NOW - 3000 }, sizes: [0, 1, 2].map((i) => ({ member: `c-${i}`, dbSize: 11 * MiB, dbSizeInUse: 10 * MiB })) };
  assert.deepEqual(pick(plan(observed({ space: done }))), { type: 'disarmAlarm', alarms: NOSPACE, via: 'c-0' });
  // Still too full: the alarm would come back at once. Said, not disarmed.
  const full = { ...done, sizes: [0, 1, 2].map((i) => ({ member: `c-${i}`, dbSize: 60 * MiB, dbSizeInUse: 59 * MiB })) };
  const a = plan(observed({ space: full }));
  assert.ok(a.type === 'wait' && a.reason === 'NoSpace' && /quotaBackendBytes/.test(a.detail), JSON.stringify(a));
});

test('NOSPACE members are not down: no membership wait, and the recovery goes before a rollout', () => {
  // A rollout outdated every member (the readiness probe changed): pods made before it are not Ready under NOSPACE.
  const notReady = [pod(0, { ready: false }), pod(1, { ready: false }), pod(2, { ready: false })];
  const rollout = { ...observed().rollout, outdated: [0, 1, 2].map((i) => ({ member: `c-${i}`, fields: ['render'] })), alarms: NOSPACE.map(({ member, alarm }) => ({ member, alarm })) };
  assert.equal(plan(observed({ pods: notReady, rollout, space: space({ alarms: NOSPACE, noSpace: {} }) })).type, 'compact');
  // Data that does not fit: the rollout goes on (a larger quotaBackendBytes is how it is fixed).
  const full = space({ alarms: NOSPACE, noSpace: { compactedAt: NOW - 5000 }, lastDefrag: { 'c-0': NOW, 'c-1': NOW, 'c-2': NOW }, sizes: [0, 1, 2].map((i) => ({ member: `c-${i}`, dbSize: 60 * MiB, dbSizeInUse: 60 * MiB })) });
  assert.equal(plan(observed({ rollout, space: full })).type, 'startRollout');
});

test('NOSPACE waits while a member does not serve, as any change does', () => {
  const a = plan(observed({ space: space({ alarms: NOSPACE, noSpace: {} }), membership: { members: [member(0), member(1), member(2, { healthy: false })], leaderId: '100' } }));
  assert.ok(a.type === 'wait' && a.reason === 'MembersNotReady', JSON.stringify(a));
});

test('status.maintenance: results of the last step folded in; the NOSPACE record lives exactly while the alarm does', () => {
  const at = new Date(NOW);
  const s1 = maintenanceStatus(undefined, [], true, ['c-0', 'c-1', 'c-2'], at);
  assert.deepEqual(s1, { noSpace: { since: at.toISOString() } });
  const s2 = maintenanceStatus(s1, [{ kind: 'compacted', revision: '5000', at }], true, ['c-0', 'c-1', 'c-2'], new Date(NOW + 1000));
  assert.deepEqual(s2?.noSpace, { since: at.toISOString(), compactedRevision: '5000', compactedAt: at.toISOString() });
  const s3 = maintenanceStatus(s2, [{ kind: 'defragmented', member: 'c-1', reason: 'NoSpace', durationMs: 120, dbSizeBefore: 40 * MiB, dbSizeAfter: 10 * MiB, at }], false, ['c-0', 'c-1', 'c-2'], at);
  assert.deepEqual(s3, { lastDefrag: [{ member: 'c-1', at: at.toISOString(), durationMs: 120, reason: 'NoSpace', dbSizeBefore: 40 * MiB, dbSizeAfter: 10 * MiB }] });
  assert.equal(maintenanceStatus(s3, [], false, ['c-0', 'c-2'], at), undefined, 'a member gone takes its record with it');
});

function pick(a: Action): Record<string, unknown> {
  const { detail: _, ...rest } = a as Action & { detail?: string };
  return rest;
}
