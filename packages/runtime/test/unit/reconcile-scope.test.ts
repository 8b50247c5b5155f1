// One reconcile's context: its signal aborts at the timeout (a TimeoutError, as AbortSignal.timeout's) or at
// shutdown (with the shutdown's reason), leaves no listener on the shutdown signal once the reconcile ended,
// and its logger is built once, when first read, carrying the request's key.
import assert from 'node:assert/strict';
import { getEventListeners } from 'node:events';
import { Writable } from 'node:stream';
import { test } from 'node:test';
import { ReconcileScope } from '../../src/controller/reconcile-scope.ts';
import { createLogger } from '../../src/manager/log.ts';

const request = { namespace: 'ns', name: 'a' };

function capturingLogger(): { log: ReturnType<typeof createLogger>; lines: Record<string, unknown>[] } {
  const lines: Record<string, unknown>[] = [];
  const destination = new Writable({
    write(chunk: Buffer, _encoding, done) {
      for (const line of chunk.toString('utf8').split('\n')) if (line.trim()) lines.push(JSON.parse(line) as Record<string, unknown>);
      done();
    },
  });
  return { log: createLogger({ level: 'info', destination }), lines };
}

test('the signal aborts with a TimeoutError once the timeout has passed, and the scope says it timed out', async () => {
  const shutdown = new AbortController();
  const scope = new ReconcileScope(capturingLogger().log, request, shutdown.signal, 30, 2);
  assert.equal(scope.retries, 2);
  const { signal } = scope;
  assert.equal(signal.aborted, false);
  assert.equal(scope.timedOut, false);
  await new Promise((resolve) => signal.addEventListener('abort', resolve, { once: true }));
  assert.equal((signal.reason as DOMException).name, 'TimeoutError');
  assert.equal(scope.timedOut, true);
  scope.end();
  assert.equal(getEventListeners(shutdown.signal, 'abort').length, 0);
});

test('the signal aborts with the shutdown reason, read before or after it; the end of the reconcile removes its listener', () => {
  const shutdown = new AbortController();
  const early = new ReconcileScope(capturingLogger().log, request, shutdown.signal, 60_000, 0);
  const { signal } = early;
  assert.equal(getEventListeners(shutdown.signal, 'abort').length, 1);
  const ended = new ReconcileScope(capturingLogger().log, request, shutdown.signal, 60_000, 0);
  void ended.signal;
  ended.end();
  assert.equal(getEventListeners(shutdown.signal, 'abort').length, 1);
  const reason = new Error('stopping');
  shutdown.abort(reason);
  assert.equal(signal.reason, reason);
  const late = new ReconcileScope(capturingLogger().log, request, shutdown.signal, 60_000, 0);
  assert.equal(late.signal.reason, reason);
  early.end();
});

test('the logger is built once, when first read, and carries the key and one reconcile ID', async () => {
  const { log, lines } = capturingLogger();
  const scope = new ReconcileScope(log, request, new AbortController().signal, 60_000, 0);
  assert.equal(scope.log, scope.log);
  scope.log.info('one');
  scope.log.info('two');
  scope.end();
  await new Promise((r) => setImmediate(r));
  assert.equal(lines.length, 2);
  assert.deepEqual(lines.map((l) => [l['namespace'], l['name']]), [['ns', 'a'], ['ns', 'a']]);
  assert.match(String(lines[0]!['reconcileID']), /^[0-9a-f]{8}$/);
  assert.equal(lines[0]!['reconcileID'], lines[1]!['reconcileID']);
});
