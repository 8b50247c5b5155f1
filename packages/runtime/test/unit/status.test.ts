import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { Condition, ResourceType } from '../../src/index.ts';
import { applyMergePatch, sameStatus, statusMergePatch, writeStatus } from '../../src/helpers/status.ts';

const ready = (status: 'True' | 'False', at = '2026-01-01T00:00:00Z'): Condition => ({ type: 'Ready', status, reason: 'R', message: 'm', lastTransitionTime: at });
const degraded: Condition = { type: 'Degraded', status: 'False', reason: 'Fine', message: '', observedGeneration: 2, lastTransitionTime: '2026-01-01T00:00:00Z' };

test('the merge patch removes top-level and nested fields the new status lacks, and applies to exactly the new status', () => {
  const previous = { phase: 'Running', clusterID: 'abc', step: { kind: 'addMember', member: 'm-3', since: 'x' }, tls: { peer: { secret: 's', caRotation: { phase: 'Trust' } } } };
  const next = { phase: 'Running', step: { kind: 'promote', member: 'm-3' }, tls: { peer: { secret: 's' } } };
  const patch = statusMergePatch(previous, next);
  assert.deepEqual(patch, { phase: 'Running', clusterID: null, step: { kind: 'promote', member: 'm-3', since: null }, tls: { peer: { secret: 's', caRotation: null } } });
  assert.deepEqual(applyMergePatch(previous, patch), next);
});

test('arrays are replaced whole, and undefined values count as absent', () => {
  const previous = { members: [{ name: 'a', leader: true }, { name: 'b' }], active: 'x' };
  const next = { members: [{ name: 'a' }], active: undefined };
  const patch = statusMergePatch(previous, next);
  assert.deepEqual(patch, { members: [{ name: 'a' }], active: null });
  assert.deepEqual(applyMergePatch(previous, patch), { members: [{ name: 'a' }] });
});

test('an object replaced by a scalar, or a new nested object, is sent as it is', () => {
  assert.deepEqual(statusMergePatch({ a: { x: 1 } }, { a: 'now a string', b: { y: 2 } }), { a: 'now a string', b: { y: 2 } });
  assert.deepEqual(statusMergePatch(undefined, { a: { x: 1 } }), { a: { x: 1 } });
});

test('sameStatus ignores key order, condition order, time formatting and a missing observedGeneration', () => {
  const a = { phase: 'Running', nested: { x: 1, y: 2 }, conditions: [ready('True'), degraded] };
  const b = { nested: { y: 2, x: 1 }, conditions: [{ ...degraded }, ready('True', '2026-01-01T00:00:00.000Z')], phase: 'Running', gone: undefined };
  assert.equal(sameStatus(a, b), true);
  assert.equal(sameStatus({ conditions: [{ ...degraded, observedGeneration: 0 }] }, { conditions: [{ ...degraded, observedGeneration: undefined }] }), true);
});

test('sameStatus sees a flipped condition, a removed field, a nested change and an array change', () => {
  const base = { phase: 'Running', nested: { x: 1 }, list: [1, 2], conditions: [ready('True')] };
  assert.equal(sameStatus(base, { ...base, conditions: [ready('False')] }), false);
  assert.equal(sameStatus(base, { nested: base.nested, list: base.list, conditions: base.conditions }), false);
  assert.equal(sameStatus(base, { ...base, nested: { x: 2 } }), false);
  assert.equal(sameStatus(base, { ...base, list: [2, 1] }), false);
  assert.equal(sameStatus(undefined, {}), true);
  assert.equal(sameStatus(undefined, { phase: 'Pending' }), false);
});

test('writeStatus patches /status with the nulls, and writes nothing when nothing changed', async () => {
  const calls: unknown[][] = [];
  const client = {
    mergePatch: (...args: unknown[]) => {
      calls.push(args);
      return Promise.resolve({ metadata: {} });
    },
  };
  const type = { plural: 'things' } as ResourceType;
  const key = { namespace: 'ns', name: 'n' };
  assert.equal(await writeStatus(client, type, key, { phase: 'A', since: 't' }, { phase: 'A', since: 't' }, { fieldManager: 'm' }), false);
  assert.equal(calls.length, 0);
  assert.equal(await writeStatus(client, type, key, { phase: 'A', since: 't' }, { phase: 'B' }, { fieldManager: 'm' }), true);
  assert.deepEqual(calls, [[type, key, { status: { phase: 'B', since: null } }, { fieldManager: 'm', subresource: 'status' }]]);
});
