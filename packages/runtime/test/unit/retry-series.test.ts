// Retry series of an owner that is gone leave /metrics, and a new owner of the same name counts from zero.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { RetryReporter, RetrySeriesScope, RuntimeMetrics } from '../../src/index.ts';

async function seriesOf(metrics: RuntimeMetrics, component: string): Promise<string[]> {
  const text = await metrics.registry.metrics();
  return text.split('\n').filter((line) => line.includes(`component="${component}"`));
}

test('forget(component) removes its retries of every reason and its failing-since gauge, and nothing else', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  metrics.retries.retried('informer/pods', 'Forbidden');
  metrics.retries.retried('informer/pods', 'ECONNREFUSED');
  metrics.retries.failingSince('informer/pods', 1_000);
  metrics.retries.retried('leader-election', 'Conflict');
  assert.equal((await seriesOf(metrics, 'informer/pods')).length, 3);

  metrics.retries.forget('informer/pods');
  assert.deepEqual(await seriesOf(metrics, 'informer/pods'), []);
  assert.deepEqual(await seriesOf(metrics, 'leader-election'), ['runtime_retries_total{component="leader-election",reason="Conflict"} 1']);
});

test('a scope names its components below its prefix and forgets all of them; counted again, they start from zero', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const owner = new RetrySeriesScope(metrics.retries, 'recorder/app/');
  const watch = new RetrySeriesScope(owner);
  const reporter = (component: string, scope: RetrySeriesScope): RetryReporter => new RetryReporter({ component, metrics: scope });
  const storage = reporter('storage', owner);
  storage.failed(new Error('bucket down'), { reason: 'Timeout' });
  storage.failed(new Error('bucket down'), { reason: 'Timeout' });
  reporter('informer/configmaps', watch).failed(new Error('no'), { reason: 'Forbidden' });
  metrics.retries.retried('recorder/other/storage', 'Timeout');
  const [retries, failingSince] = await seriesOf(metrics, 'recorder/app/storage');
  assert.equal(retries, 'runtime_retries_total{component="recorder/app/storage",reason="Timeout"} 2');
  assert.match(failingSince ?? '', /^runtime_failing_since_seconds\{component="recorder\/app\/storage"\} [1-9]/);
  assert.equal((await seriesOf(metrics, 'recorder/app/informer/configmaps')).length, 2);

  // The watch stops: only its series go.
  watch.forgetAll();
  assert.deepEqual(await seriesOf(metrics, 'recorder/app/informer/configmaps'), []);
  assert.equal((await seriesOf(metrics, 'recorder/app/storage')).length, 2);

  // The owner goes: everything it counted goes; another owner's series stay.
  owner.forgetAll();
  assert.deepEqual(await seriesOf(metrics, 'recorder/app/storage'), []);
  assert.equal((await seriesOf(metrics, 'recorder/other/storage')).length, 1);

  // Re-created under the same name: it counts from zero, not from its predecessor's 2.
  const again = new RetrySeriesScope(metrics.retries, 'recorder/app/');
  reporter('storage', again).failed(new Error('bucket down'), { reason: 'Timeout' });
  assert.equal((await seriesOf(metrics, 'recorder/app/storage'))[0], 'runtime_retries_total{component="recorder/app/storage",reason="Timeout"} 1');
});

test('a scope over metrics that cannot forget still counts, and forgetting is a no-op', () => {
  const counted: string[] = [];
  const scope = new RetrySeriesScope({ retried: (c, r) => counted.push(`${c} ${r}`), failingSince: () => undefined }, 'x/');
  scope.retried('loop', 'Gone');
  scope.forgetAll();
  assert.deepEqual(counted, ['x/loop Gone']);
});
