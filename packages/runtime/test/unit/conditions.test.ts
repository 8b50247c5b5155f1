import { test } from 'node:test';
import assert from 'node:assert/strict';
import { conditionsEqual, findCondition, isConditionTrue, removeCondition, rfc3339, setCondition, type Condition } from '../../src/helpers/conditions.ts';

const T0 = new Date('2026-01-01T00:00:00.789Z');
const T1 = new Date('2026-01-01T00:05:00.123Z');

function frozen(conditions: Condition[]): Condition[] {
  for (const c of conditions) Object.freeze(c);
  return Object.freeze(conditions) as Condition[];
}

test('rfc3339 drops sub-second precision like the API server', () => {
  assert.equal(rfc3339(T0), '2026-01-01T00:00:00Z');
});

test('setCondition adds an absent condition stamped with now', () => {
  const result = setCondition(undefined, { type: 'Ready', status: 'True', reason: 'Up', message: 'all members healthy', observedGeneration: 3 }, T0);
  assert.deepEqual(result, [{ type: 'Ready', status: 'True', reason: 'Up', message: 'all members healthy', observedGeneration: 3, lastTransitionTime: '2026-01-01T00:00:00Z' }]);
});

test('setCondition leaves observedGeneration absent, not undefined, when not given', () => {
  const [condition] = setCondition([], { type: 'Ready', status: 'True', reason: 'Up', message: '' }, T0);
  assert.ok(condition);
  assert.equal(Object.hasOwn(condition, 'observedGeneration'), false);
});

test('setCondition keeps lastTransitionTime when the status does not change, updating the rest', () => {
  const before = frozen(setCondition([], { type: 'Ready', status: 'False', reason: 'Starting', message: 'a', observedGeneration: 1 }, T0));
  const after = setCondition(before, { type: 'Ready', status: 'False', reason: 'Degraded', message: 'b', observedGeneration: 2 }, T1);
  assert.deepEqual(after, [{ type: 'Ready', status: 'False', reason: 'Degraded', message: 'b', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' }]);
  assert.notEqual(after, before);
  assert.equal(before[0]?.reason, 'Starting');
});

test('setCondition moves lastTransitionTime when the status flips', () => {
  const before = frozen(setCondition([], { type: 'Ready', status: 'False', reason: 'Starting', message: '' }, T0));
  const after = setCondition(before, { type: 'Ready', status: 'True', reason: 'Up', message: '' }, T1);
  assert.equal(after[0]?.lastTransitionTime, '2026-01-01T00:05:00Z');
  assert.equal(after[0]?.status, 'True');
});

test('setCondition honours an explicit lastTransitionTime only on a transition', () => {
  const added = setCondition([], { type: 'Ready', status: 'False', reason: 'A', message: '', lastTransitionTime: '2025-06-01T00:00:00Z' }, T0);
  assert.equal(added[0]?.lastTransitionTime, '2025-06-01T00:00:00Z');
  const unchanged = setCondition(added, { type: 'Ready', status: 'False', reason: 'B', message: '', lastTransitionTime: '2025-07-01T00:00:00Z' }, T1);
  assert.equal(unchanged[0]?.lastTransitionTime, '2025-06-01T00:00:00Z');
  const flipped = setCondition(unchanged, { type: 'Ready', status: 'True', reason: 'C', message: '', lastTransitionTime: '2025-08-01T00:00:00Z' }, T1);
  assert.equal(flipped[0]?.lastTransitionTime, '2025-08-01T00:00:00Z');
});

test('setCondition keeps the position and the other conditions of the list', () => {
  let list = setCondition([], { type: 'Ready', status: 'False', reason: 'A', message: '' }, T0);
  list = setCondition(list, { type: 'Degraded', status: 'False', reason: 'A', message: '' }, T0);
  list = setCondition(frozen(list), { type: 'Ready', status: 'True', reason: 'B', message: '' }, T1);
  assert.deepEqual(
    list.map((c) => [c.type, c.status]),
    [
      ['Ready', 'True'],
      ['Degraded', 'False'],
    ],
  );
});

test('findCondition, isConditionTrue and removeCondition', () => {
  const list = frozen([
    { type: 'Ready', status: 'True', reason: 'Up', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
    { type: 'Degraded', status: 'Unknown', reason: 'Probing', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' },
  ]);
  assert.equal(findCondition(list, 'Degraded')?.reason, 'Probing');
  assert.equal(findCondition(list, 'Missing'), undefined);
  assert.equal(findCondition(undefined, 'Ready'), undefined);
  assert.equal(isConditionTrue(list, 'Ready'), true);
  assert.equal(isConditionTrue(list, 'Degraded'), false);
  assert.equal(isConditionTrue(list, 'Missing'), false);
  const removed = removeCondition(list, 'Ready');
  assert.deepEqual(
    removed.map((c) => c.type),
    ['Degraded'],
  );
  assert.equal(list.length, 2);
  assert.deepEqual(removeCondition(undefined, 'Ready'), []);
});

test('conditionsEqual ignores order but not content', () => {
  const ready: Condition = { type: 'Ready', status: 'True', reason: 'Up', message: 'ok', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' };
  const degraded: Condition = { type: 'Degraded', status: 'False', reason: 'Fine', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
  assert.equal(conditionsEqual([ready, degraded], [degraded, ready]), true);
  assert.equal(conditionsEqual([ready, degraded], [ready]), false);
  assert.equal(conditionsEqual([ready], [{ ...ready, message: 'changed' }]), false);
  assert.equal(conditionsEqual([ready], [{ ...ready, status: 'False' }]), false);
  assert.equal(conditionsEqual([ready], [{ ...ready, observedGeneration: 3 }]), false);
  assert.equal(conditionsEqual([ready], [{ ...ready, lastTransitionTime: '2026-01-01T00:00:01Z' }]), false);
  assert.equal(conditionsEqual([ready, ready], [ready, degraded]), false);
});

test('conditionsEqual treats absent lists, observedGeneration 0 and equal instants as equal', () => {
  const c: Condition = { type: 'Ready', status: 'True', reason: 'Up', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' };
  assert.equal(conditionsEqual(undefined, []), true);
  assert.equal(conditionsEqual([c], [{ ...c, observedGeneration: 0 }]), true);
  assert.equal(conditionsEqual([c], [{ ...c, lastTransitionTime: '2026-01-01T01:00:00+01:00' }]), true);
});

test('a repeated setCondition with the same values compares equal, so the status write can be skipped', () => {
  const input = { type: 'Ready', status: 'True', reason: 'Up', message: 'ok', observedGeneration: 1 } as const;
  const first = setCondition(undefined, input, T0);
  const again = setCondition(first, input, T1);
  assert.equal(conditionsEqual(first, again), true);
});
