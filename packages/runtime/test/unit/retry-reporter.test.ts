// The voice of retry loops: warn lines spaced at least 30 s apart while a loop fails, one info line when it
// recovers, and the metrics in the manager's registry. The clock is fake, so "30 s" takes no time.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { ApiError, GoneError } from '../../src/client/errors.ts';
import { RuntimeMetrics } from '../../src/manager/metrics.ts';
import { errorText, retryReason, RetryReporter } from '../../src/watch/retry-reporter.ts';
import { metricValue, recordingLog } from './retry-support.ts';

const unavailable = () => new ApiError('GET', '/api/v1/pods', 503, { reason: 'ServiceUnavailable', message: 'etcdserver: leader changed' });

test('a failing loop warns at most once per 30 s, with the server\'s words and how long; debug in between', () => {
  const clock = { ms: 1_000_000 };
  const log = recordingLog();
  const reporter = new RetryReporter({ component: 'informer/pods', log, now: () => clock.ms });
  // One failure every 10 s for 70 s: warns at 0, 30 and 60 s.
  for (let i = 0; i < 8; i++) {
    reporter.failed(unavailable(), { retryInMs: 10_000 });
    clock.ms += 10_000;
  }
  const warns = log.at('warn');
  assert.equal(warns.length, 3, JSON.stringify(log.lines));
  assert.deepEqual(warns.map((w) => w.fields['failingForSeconds']), [0, 30, 60]);
  assert.equal(log.at('debug').length, 5);
  assert.match(warns[1]!.msg, /^informer\/pods: GET \/api\/v1\/pods: 503 ServiceUnavailable: etcdserver: leader changed \(failing for 30 s, 4 attempts; retrying in 10 s\)$/);
  assert.equal(warns[1]!.fields['reason'], 'ServiceUnavailable');
  assert.equal(warns[1]!.fields['error'], 'GET /api/v1/pods: 503 ServiceUnavailable: etcdserver: leader changed');
  assert.equal(log.at('info').length, 0);
  assert.deepEqual(reporter.failing(), { sinceMs: 1_000_000, forMs: 80_000, attempts: 8, reason: 'ServiceUnavailable', message: 'GET /api/v1/pods: 503 ServiceUnavailable: etcdserver: leader changed' });
});

test('recovery is one info line with how long it failed and the last error; success while healthy says nothing', () => {
  const clock = { ms: 0 };
  const log = recordingLog();
  const reporter = new RetryReporter({ component: 'leader-election', log, now: () => clock.ms, fields: { lease: 'ns/name' } });
  reporter.succeeded();
  assert.equal(log.lines.length, 0);
  reporter.failed(new Error('connect ECONNREFUSED 10.0.0.1:443'));
  clock.ms = 45_000;
  reporter.succeeded();
  reporter.succeeded();
  const infos = log.at('info');
  assert.equal(infos.length, 1);
  assert.equal(infos[0]!.msg, 'leader-election: recovered after 45 s and 1 failed attempt (last error: connect ECONNREFUSED 10.0.0.1:443)');
  assert.equal(infos[0]!.fields['recoveredAfterSeconds'], 45);
  assert.equal(infos[0]!.fields['lease'], 'ns/name');
  assert.equal(reporter.failing(), undefined);
});

test('a loop that flaps still warns at most once per 30 s', () => {
  const clock = { ms: 0 };
  const log = recordingLog();
  const reporter = new RetryReporter({ component: 'events', log, now: () => clock.ms });
  for (let i = 0; i < 6; i++) {
    reporter.failed(unavailable());
    clock.ms += 5_000;
    reporter.succeeded();
  }
  assert.equal(log.at('warn').length, 1);
  assert.equal(log.at('info').length, 6, 'each recovery is told, at info');
});

test('runtime_retries_total counts every retry by component and reason; runtime_failing_since_seconds marks a run', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const clock = { ms: 1_700_000_000_000 };
  const reporter = new RetryReporter({ component: 'informer/pods', metrics: metrics.retries, now: () => clock.ms });
  reporter.failed(unavailable());
  clock.ms += 1000;
  reporter.failed(Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' }));
  reporter.retried('Gone', new GoneError('WATCH', '/api/v1/pods', 410, { reason: 'Expired', message: 'too old resource version' }), 'relisting');
  assert.equal(await metricValue(metrics, 'runtime_retries_total', { component: 'informer/pods', reason: 'ServiceUnavailable' }), 1);
  assert.equal(await metricValue(metrics, 'runtime_retries_total', { component: 'informer/pods', reason: 'ECONNREFUSED' }), 1);
  assert.equal(await metricValue(metrics, 'runtime_retries_total', { component: 'informer/pods', reason: 'Gone' }), 1);
  assert.equal(await metricValue(metrics, 'runtime_failing_since_seconds', { component: 'informer/pods' }), 1_700_000_000);
  reporter.succeeded();
  assert.equal(await metricValue(metrics, 'runtime_failing_since_seconds', { component: 'informer/pods' }), 0);
  assert.match(await metrics.registry.metrics(), /# HELP runtime_retries_total /);
});

test('reasons are short and bounded; error text keeps the causes', () => {
  assert.equal(retryReason(new ApiError('GET', '/x', 500, {})), 'HTTP500');
  assert.equal(retryReason(new ApiError('GET', '/x', 403, { reason: 'Forbidden' })), 'Forbidden');
  assert.equal(retryReason(Object.assign(new Error('x'), { code: 'ECONNRESET' })), 'ECONNRESET');
  assert.equal(retryReason(new TypeError('x')), 'TypeError');
  assert.equal(retryReason('a string'), 'Error');
  assert.equal(errorText(new Error('reconcile timed out after 60000 ms', { cause: new Error('etcd: context deadline exceeded') })), 'reconcile timed out after 60000 ms: etcd: context deadline exceeded');
});
