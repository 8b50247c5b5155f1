// The reasons the docs list are exactly those the code can set: docs/operations.md is generated from
// cluster/reasons.ts, and every reason in the planner's waits and the reconciler's events is in that table.
import assert from 'node:assert/strict';
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { test } from 'node:test';
import { buildStatus, type StatusInput } from '../../src/cluster/status.ts';
import { CONDITIONS, EVENT_REASONS, OPERATIONS_FILE, WAIT_REASONS, withGeneratedReasons } from '../../src/cluster/reasons.ts';

const repo = join(import.meta.dirname, '..', '..', '..', '..');
const src = (file: string): Promise<string> => readFile(join(repo, 'packages/etcd-operator/src/cluster', file), 'utf8');
// A folder of cluster/ (plan/, act/): its files' sources, one after the other.
const folder = async (dir: string): Promise<string> => (await Promise.all((await readdir(join(repo, 'packages/etcd-operator/src/cluster', dir))).sort().map((f) => src(`${dir}/${f}`)))).join('\n');

test('docs/operations.md carries the generated reasons (run packages/etcd-operator/scripts/generate.ts)', async () => {
  const doc = await readFile(join(repo, OPERATIONS_FILE), 'utf8');
  assert.equal(doc, withGeneratedReasons(doc));
});

test('every wait reason the planner returns is documented, and every documented one is returned', async () => {
  const plan = await folder('plan');
  const used = new Set([...plan.matchAll(/type: 'wait', reason: '(\w+)'/g)].map((m) => m[1]!));
  // Multi-line waits name their reason on the next line.
  for (const m of plan.matchAll(/type: 'wait',\s+reason: '(\w+)'/g)) used.add(m[1]!);
  assert.deepEqual([...used].sort(), Object.keys(WAIT_REASONS).sort());
});

test('every event reason the reconciler records is documented', async () => {
  const code = (await folder('act')) + (await src('reconcile.ts')) + (await src('report.ts')) + (await src('take.ts'));
  const used = new Set([...code.matchAll(/(?:event|ev)\((?:'Normal'|'Warning'|[^,]+), '(\w+)'/g)].map((m) => m[1]!));
  for (const m of code.matchAll(/'(MemberPodCreated|MemberPodRecreated)'/g)) used.add(m[1]!);
  // The step's Warning events: the kit's StepVoice records them under the reasons memory.ts gives it.
  const voiced = [...(await src('memory.ts')).matchAll(/(?:retrying|stalled)Reason: '(\w+)'/g)].map((m) => m[1]!);
  assert.deepEqual(voiced, ['StepRetrying', 'StepStalled']);
  for (const reason of voiced) used.add(reason);
  for (const reason of used) assert.ok(reason in EVENT_REASONS, `event reason ${reason} is not in EVENT_REASONS`);
  assert.ok(used.size >= 10, [...used].join());
});

test('every condition reason buildStatus sets, in each kind of situation, is documented', () => {
  const documented = new Map(Object.entries(CONDITIONS).map(([type, c]) => [type, new Set(c.reasons.map((r) => r.reason))]));
  const now = new Date('2026-11-23T08:00:00Z');
  const members = [0, 1, 2].map((i) => ({ id: String(100 + i), member: `c-${i}`, started: true, learner: false, healthy: i !== 2 }));
  const view = { membership: { members, leaderId: '100' }, health: [], unreachable: [] };
  const pods = [0, 1, 2].map((i) => ({ member: `c-${i}`, phase: 'Running', ready: i !== 2, deleting: false, ...(i === 2 ? { crashLoopingSince: 0, lastTermination: { exitCode: 2, message: 'panic: unrecognized level: "shouting"' } } : {}) }));
  const base = { cluster: 'c', namespace: 'n', generation: 1, replicas: 4, targetVersion: '3.6.16', previous: undefined, pods, etcd: view, nextMemberIndex: 3, paused: false, now };
  const rollout = { target: 't', fromVersion: '3.5.35', targetVersion: '3.6.16', startedAt: '2026-11-23T07:00:00Z' };
  const inputs: StatusInput[] = [
    { ...base, action: { type: 'steady' }, outdated: [] },
    { ...base, action: { type: 'addMember', member: 'c-3' }, step: { name: 'addMember c-3', startedAt: '2026-11-23T07:00:00Z', lastError: 'etcd refused' }, stepDeadlineMs: 1000, outdated: [{ member: 'c-0', fields: ['etcd'] }] },
    { ...base, pods: [], etcd: { membership: undefined, health: [], unreachable: [] }, action: { type: 'wait', reason: 'QuorumUnavailable', detail: 'x', requeueAfterMs: 1 } },
    { ...base, action: { type: 'steady' }, paused: true },
    { ...base, action: { type: 'steady' }, invalid: 'spec.replicas: too many' },
    { ...base, pods: [pods[0]!, pods[1]!, { member: 'c-2', phase: 'Pending', ready: false, deleting: false, cannotStart: 'peer-wait: ImagePullBackOff: Back-off pulling image' }], action: { type: 'wait', reason: 'MembersNotReady', detail: 'x', requeueAfterMs: 1 } },
    { ...base, pods: pods.slice(0, 2), action: { type: 'createPod', member: 'c-2', state: 'existing', initialMembers: [], reason: 'PodMissing' } },
    // A rolling update: under way, halted, and blocked.
    { ...base, previous: { rollout }, action: { type: 'updateMember', member: 'c-1', id: '101', via: 'evict', detail: 'x' }, outdated: [{ member: 'c-1', fields: ['etcd'] }] },
    { ...base, previous: { rollout }, action: { type: 'haltRollout', member: 'c-1', reason: 'CrashLooping', message: 'exit code 2' }, outdated: [{ member: 'c-0', fields: ['etcd'] }] },
    { ...base, action: { type: 'wait', reason: 'UpgradeBlocked', detail: 'x', requeueAfterMs: 1 }, outdated: [{ member: 'c-0', fields: ['etcd'] }] },
  ];
  const seen = new Set<string>();
  for (const input of inputs) {
    for (const c of buildStatus(input).conditions ?? []) {
      seen.add(`${c.type}/${c.reason}`);
      assert.ok(documented.get(c.type)?.has(c.reason), `condition ${c.type} reason ${c.reason} is not documented`);
    }
  }
  for (const wanted of [
    'Degraded/MembersCrashLooping', 'Progressing/ProgressDeadlineExceeded', 'MembersUpToDate/RollingUpdate', 'Available/Unreachable', 'Degraded/InvalidSpec', 'Degraded/MembersCannotStart',
    'Progressing/RollingUpdate', 'Progressing/UpgradeFailed', 'Degraded/UpgradeFailed', 'MembersUpToDate/UpgradeFailed', 'Progressing/UpgradeBlocked', 'Degraded/UpgradeBlocked',
  ]) assert.ok(seen.has(wanted), wanted);
});
