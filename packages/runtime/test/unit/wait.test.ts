// Bounded waits: the value once the probe has one, a probe's errors counted as "not yet" and named when the
// bound runs out, an abort that stops the wait, and a CRD's Established condition read from its status.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { crdEstablished, waitFor, WaitTimeoutError } from '../../src/helpers/wait.ts';

test('waitFor resolves to the first value that is not undefined or false, a throwing probe counting as not yet', async () => {
  let looks = 0;
  const value = await waitFor('the third look', () => {
    looks++;
    if (looks === 1) throw new Error('not there yet');
    return looks === 3 ? { looks } : false;
  }, { intervalMs: 5 });
  assert.deepEqual(value, { looks: 3 });
});

test('a wait past its bound names what it awaited and the last error, and keeps that error as its cause', async () => {
  const refusal = new Error('connection refused');
  const err = await waitFor('the server', () => Promise.reject(refusal), { timeoutMs: 60, intervalMs: 10 }).catch((e: unknown) => e);
  assert.ok(err instanceof WaitTimeoutError);
  assert.equal(err.message, 'timed out after 0 s waiting for the server: connection refused');
  assert.equal(err.what, 'the server');
  assert.equal(err.cause, refusal);
});

test('an aborted wait stops at once with the signal’s reason', async () => {
  const stop = new AbortController();
  const started = Date.now();
  setTimeout(() => stop.abort(new Error('shutting down')), 20);
  await assert.rejects(waitFor('forever', () => false, { timeoutMs: 60_000, intervalMs: 10_000, signal: stop.signal }), /shutting down/);
  assert.ok(Date.now() - started < 1000);
});

test('a CRD is established when its Established condition is True', () => {
  const crd = (status: string) => ({ metadata: { name: 'x' }, status: { conditions: [{ type: 'NamesAccepted', status: 'True' }, { type: 'Established', status }] } });
  assert.equal(crdEstablished(crd('True')), true);
  assert.equal(crdEstablished(crd('False')), false);
  assert.equal(crdEstablished({ metadata: { name: 'x' } }), false);
  assert.equal(crdEstablished(undefined), false);
});
