// What status says during a rolling update: currentVersion moves only once every member runs one version,
// updatedReplicas counts members on the current spec, clusterVersion is etcd's own, the rollout record is
// kept across steps (and the operator's restarts) until every member is updated, and the conditions name the
// member being updated, or why the rollout halted and how to go on.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { RolloutRecord } from '../../src/api/etcdcluster.ts';
import type { EtcdView } from '../../src/cluster/observe-members.ts';
import type { ObservedPod } from '../../src/cluster/plan/types.ts';
import { stepName } from '../../src/cluster/progress.ts';
import { buildStatus, type StatusInput, type StatusShape } from '../../src/cluster/status.ts';

const now = new Date('2026-11-23T08:00:00Z');
const record: RolloutRecord = { target: 'T2', fromVersion: '3.5.35', targetVersion: '3.6.16', startedAt: '2026-11-23T07:59:00Z' };

function input(versions: (string | undefined)[], over: Partial<StatusInput> = {}): StatusInput {
  const members = versions.map((_, i) => ({ id: String(100 + i), member: `c-${i}`, started: true, learner: false, healthy: true }));
  const etcd: EtcdView = {
    membership: { members, leaderId: '100' },
    health: versions.map((version, i) => ({ member: `c-${i}`, id: String(100 + i), healthy: true, learner: false, ...(version ? { version } : {}) })),
    unreachable: [],
  };
  const pods: ObservedPod[] = versions.map((_, i) => ({ member: `c-${i}`, phase: 'Running', ready: true, deleting: false }));
  return {
    cluster: 'c', namespace: 'n', generation: 2, replicas: versions.length, targetVersion: '3.6.16',
    previous: { phase: 'Running', currentVersion: '3.5.35', clusterVersion: '3.5.0', rollout: record },
    pods, etcd, action: { type: 'wait', reason: 'RollingUpdate', detail: 'rolling update to 3.6.16 (1/3 updated): updating c-1: its pod is not Ready yet', requeueAfterMs: 1000, subject: 'c-1' },
    nextMemberIndex: 3, paused: false, outdated: [], now, ...over,
  };
}
const condition = (s: StatusShape, type: string) => s.conditions?.find((c) => c.type === type);

test('currentVersion stays until every member reports one and the same version', () => {
  assert.equal(buildStatus(input(['3.6.16', '3.5.35', '3.5.35'])).currentVersion, '3.5.35');
  // A member that is down says nothing: the others agreeing is not enough.
  assert.equal(buildStatus(input(['3.6.16', '3.6.16', undefined])).currentVersion, '3.5.35');
  assert.equal(buildStatus(input(['3.6.16', '3.6.16', '3.6.16'])).currentVersion, '3.6.16');
});

test('updatedReplicas counts members whose pod is on the current spec and not going away', () => {
  const s = buildStatus(input(['3.6.16', '3.5.35', '3.5.35'], { outdated: [{ member: 'c-1', fields: ['image'] }, { member: 'c-2', fields: ['image'] }] }));
  assert.equal(s.updatedReplicas, 1);
  const terminating = input(['3.6.16', '3.5.35', '3.5.35'], { outdated: [{ member: 'c-2', fields: ['image'] }] });
  terminating.pods[1] = { ...terminating.pods[1]!, deleting: true };
  assert.equal(buildStatus(terminating).updatedReplicas, 1);
});

test("clusterVersion is etcd's as last read: kept when not read again", () => {
  assert.equal(buildStatus(input(['3.6.16', '3.6.16', '3.6.16'])).clusterVersion, '3.5.0');
  assert.equal(buildStatus(input(['3.6.16', '3.6.16', '3.6.16'], { clusterVersion: '3.6.0' })).clusterVersion, '3.6.0');
});

test('the rollout record: begun, the member and when its update began (kept while it is retried), halted, cleared once done, kept on an invalid spec', () => {
  const started = buildStatus(input(['3.5.35', '3.5.35', '3.5.35'], { previous: {}, action: { type: 'startRollout', record, detail: 'x' } }));
  assert.deepEqual(started.rollout, record);
  const member = buildStatus(input(['3.5.35', '3.5.35', '3.5.35'], { action: { type: 'updateMember', member: 'c-1', id: '101', via: 'evict', detail: 'x' } }));
  assert.deepEqual(member.rollout, { ...record, member: 'c-1', memberSince: now.toISOString() });
  const retried = buildStatus(input(['3.5.35', '3.5.35', '3.5.35'], { previous: { rollout: member.rollout }, action: { type: 'updateMember', member: 'c-1', id: '101', via: 'evict', detail: 'x' }, now: new Date(now.getTime() + 5000) }));
  assert.equal(retried.rollout?.memberSince, now.toISOString(), "the gate's clock does not restart on a retried eviction");
  const halted = buildStatus(input(['3.5.35', undefined, '3.5.35'], { previous: { rollout: member.rollout }, action: { type: 'haltRollout', member: 'c-1', reason: 'CrashLooping', message: 'exit code 2' } }));
  assert.deepEqual(halted.rollout?.halted, { member: 'c-1', reason: 'CrashLooping', message: 'exit code 2', at: now.toISOString() });
  assert.equal(buildStatus(input(['3.6.16', '3.6.16', '3.6.16'], { action: { type: 'steady' } })).rollout, undefined);
  assert.deepEqual(buildStatus(input(['3.5.35', '3.5.35', '3.5.35'], { action: { type: 'steady' }, invalid: 'spec.replicas: too many' })).rollout, record);
});

test('under way: Progressing RollingUpdate naming the member, MembersUpToDate counting, phase Updating', () => {
  const s = buildStatus(input(['3.6.16', '3.5.35', '3.5.35'], { outdated: [{ member: 'c-1', fields: ['image a → b'] }, { member: 'c-2', fields: ['image a → b'] }] }));
  assert.deepEqual([condition(s, 'Progressing')?.status, condition(s, 'Progressing')?.reason], ['True', 'RollingUpdate']);
  assert.match(condition(s, 'Progressing')!.message, /updating c-1/);
  assert.deepEqual([condition(s, 'MembersUpToDate')?.status, condition(s, 'MembersUpToDate')?.reason], ['False', 'RollingUpdate']);
  assert.equal(condition(s, 'MembersUpToDate')?.message, '1/3 members updated; still to update: c-1 (image a → b); c-2 (image a → b)');
  assert.equal(s.phase, 'Updating');
  assert.equal(condition(s, 'Degraded')?.status, 'False');
  // Each member's gate is a step of its own: its age restarts with the next member.
  assert.equal(stepName({ type: 'wait', reason: 'RollingUpdate', detail: 'x', requeueAfterMs: 1, subject: 'c-1' }), 'wait RollingUpdate c-1');
});

test('halted: Degraded UpgradeFailed with where, why and how to go on; Progressing False; no step to retry', () => {
  const halted: RolloutRecord = { ...record, member: 'c-1', halted: { member: 'c-1', reason: 'CrashLooping', message: 'its etcd keeps exiting: exit code 2: flag provided but not defined: -name', at: now.toISOString() } };
  const i = input(['3.5.35', undefined, '3.5.35'], {
    previous: { phase: 'Updating', currentVersion: '3.5.35', rollout: halted },
    action: { type: 'wait', reason: 'UpgradeFailed', detail: 'x', requeueAfterMs: 30_000 },
    outdated: [{ member: 'c-0', fields: ['image'] }, { member: 'c-2', fields: ['image'] }],
  });
  i.pods[1] = { ...i.pods[1]!, ready: false, crashLoopingSince: 0, lastTermination: { exitCode: 2, message: 'flag provided but not defined: -name' } };
  const s = buildStatus(i);
  const degraded = condition(s, 'Degraded')!;
  assert.deepEqual([degraded.status, degraded.reason], ['True', 'UpgradeFailed']);
  assert.match(degraded.message, /^rolling update to 3\.6\.16 halted at c-1 \(CrashLooping\): its etcd keeps exiting: exit code 2: flag provided but not defined: -name\. No further member is updated\. To roll back, set spec\.version back to 3\.5\.35/);
  assert.deepEqual([condition(s, 'Progressing')?.status, condition(s, 'Progressing')?.reason], ['False', 'UpgradeFailed']);
  assert.deepEqual([condition(s, 'MembersUpToDate')?.status, condition(s, 'MembersUpToDate')?.reason], ['False', 'UpgradeFailed']);
  assert.equal(s.phase, 'Degraded');
  assert.equal(stepName({ type: 'wait', reason: 'UpgradeFailed', detail: 'x', requeueAfterMs: 1 }), undefined);
  // Available still tells the truth: two of three serve.
  assert.equal(condition(s, 'Available')?.status, 'True');
});

test('blocked: Degraded UpgradeBlocked with the reason, Progressing False', () => {
  const s = buildStatus(input(['3.6.16', '3.6.16', '3.6.16'], { previous: { phase: 'Running' }, action: { type: 'wait', reason: 'UpgradeBlocked', detail: 'spec.version 3.5.35 is not rolled out: no', requeueAfterMs: 30_000 }, outdated: [{ member: 'c-0', fields: ['image'] }] }));
  assert.deepEqual([condition(s, 'Degraded')?.reason, condition(s, 'Degraded')?.message], ['UpgradeBlocked', 'spec.version 3.5.35 is not rolled out: no']);
  assert.deepEqual([condition(s, 'Progressing')?.status, condition(s, 'Progressing')?.reason], ['False', 'UpgradeBlocked']);
});
