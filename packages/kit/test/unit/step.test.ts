import { test } from 'node:test';
import assert from 'node:assert/strict';
import { formatAge, nextStepRecord, progressMessage, retryDelayMs, StepVoice, STEP_WARN_MS, type StepVoiceOutput } from '../../src/step.ts';

const T0 = new Date('2026-01-01T00:00:00Z');
const at = (ms: number): Date => new Date(T0.getTime() + ms);

function output(): StepVoiceOutput & { events: [string, string][]; warns: [Record<string, unknown>, string][] } {
  const events: [string, string][] = [];
  const warns: [Record<string, unknown>, string][] = [];
  return { events, warns, warning: (reason, note) => events.push([reason, note]), warn: (fields, message) => warns.push([fields, message]) };
}

test('a step record keeps its start while the step repeats, counts refusals of it, and starts afresh for another step', () => {
  const first = nextStepRecord(undefined, 'addMember m-3', undefined, T0);
  assert.deepEqual(first, { name: 'addMember m-3', startedAt: T0.toISOString() });
  const refused = nextStepRecord(first, 'addMember m-3', { step: 'addMember m-3', reason: 'UnhealthyCluster', message: 'etcdserver: unhealthy cluster' }, at(5000));
  assert.deepEqual(refused, { name: 'addMember m-3', startedAt: T0.toISOString(), lastError: 'etcdserver: unhealthy cluster', lastErrorReason: 'UnhealthyCluster', failures: 1 });
  assert.equal(nextStepRecord(refused, 'addMember m-3', { step: 'other', reason: 'X', message: 'y' }, at(6000))?.failures, 1);
  assert.deepEqual(nextStepRecord(refused, 'promote m-3', undefined, at(7000)), { name: 'promote m-3', startedAt: at(7000).toISOString() });
  assert.equal(nextStepRecord(refused, undefined, undefined, at(8000)), undefined);
});

test('the condition message says what, for how long (coarsely), and the last refusal; retries back off while it fails', () => {
  const record = { name: 's', startedAt: T0.toISOString(), lastError: 'Forbidden: no' };
  assert.equal(progressMessage('adding m-3', record, at(9_000)), 'adding m-3: Forbidden: no');
  assert.equal(progressMessage('adding m-3', record, at(45_000)), 'adding m-3 (for 40 s): Forbidden: no');
  assert.equal(progressMessage('adding m-3', { name: 's', startedAt: T0.toISOString() }, at(3_725_000)), 'adding m-3 (for 1 h 2 min)');
  assert.equal(formatAge(150_000), '2 min');
  assert.equal(retryDelayMs(record, at(5_000), 0), 1000);
  assert.equal(retryDelayMs(record, at(30_000), 0), 2000);
  assert.equal(retryDelayMs(record, at(90_000), 0), 5000);
  assert.equal(retryDelayMs({ name: 's', startedAt: T0.toISOString() }, at(90_000), 300), 300);
});

test('the voice: silent before 30 s, one Warning per step, a stall event past the bound, warn logs at most every 30 s', () => {
  const voice = new StepVoice({ retryingReason: 'StepRetrying', stalledReason: 'StepStalled' });
  const out = output();
  const repeat = (ms: number, step = 'addMember m-3') => voice.repeated({ key: 'ns/c', step, ageMs: ms, boundMs: 120_000, now: at(ms), message: `still ${step}`, fields: { step } }, out);
  assert.deepEqual(repeat(10_000), { warned: false, stalled: false });
  assert.equal(out.events.length, 0);
  assert.deepEqual(repeat(STEP_WARN_MS), { warned: true, stalled: false });
  repeat(40_000);
  assert.deepEqual(out.events, [['StepRetrying', 'still addMember m-3']]);
  assert.deepEqual(out.warns, [[{ step: 'addMember m-3', forSeconds: 30 }, 'still addMember m-3']]);
  repeat(60_000);
  assert.equal(out.warns.length, 2);
  assert.deepEqual(repeat(125_000), { warned: true, stalled: true });
  assert.deepEqual(out.events[1], ['StepStalled', 'no progress for 2 min: still addMember m-3']);
  repeat(130_000);
  assert.equal(out.events.length, 2, 'each event once per step');
  repeat(160_000, 'promote m-3');
  assert.deepEqual(out.events.slice(2).map(([reason]) => reason), ['StepRetrying', 'StepStalled'], 'another step, already past the bound');
  voice.forget('ns/c');
  repeat(165_000);
  assert.equal(out.events.length, 6, 'forgotten: the step warns and stalls again');
});

test('the voice follows what the status recorded, so a restarted operator does not repeat the events', () => {
  const voice = new StepVoice({ retryingReason: 'StepRetrying', stalledReason: 'StepStalled' });
  const out = output();
  const said = voice.repeated({ key: 'ns/c', step: 's', ageMs: 200_000, boundMs: 120_000, now: at(200_000), message: 'm', recorded: { warned: true, stalled: true } }, out);
  assert.deepEqual(said, { warned: true, stalled: true });
  assert.equal(out.events.length, 0);
  assert.equal(out.warns.length, 1, 'the warn log is rationed in memory only');
});
