// The operator's own metrics in a manager's registry: a collected gauge lists exactly what its collector
// returns at each read (a series whose object went is gone, not stale), and a histogram counts durations.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RuntimeMetrics } from '../../src/manager/metrics.ts';

test('a collected gauge is computed at every read: new values, and no series left behind', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  let members = new Map([['a', 3], ['b', 5]]);
  metrics.collectedGauge('test_members', 'Members per cluster', ['cluster'], () => [...members].map(([cluster, value]) => ({ labels: { cluster }, value })));
  const first = await metrics.registry.getSingleMetricAsString('test_members');
  assert.match(first, /^test_members\{cluster="a"\} 3$/m);
  assert.match(first, /^test_members\{cluster="b"\} 5$/m);
  members = new Map([['a', 1]]);
  const second = await metrics.registry.getSingleMetricAsString('test_members');
  assert.match(second, /^test_members\{cluster="a"\} 1$/m);
  assert.doesNotMatch(second, /cluster="b"/);
});

test('registering a collected gauge again replaces its collector', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  metrics.collectedGauge('test_value', 'A value', ['k'], () => [{ labels: { k: 'x' }, value: 1 }]);
  metrics.collectedGauge('test_value', 'A value', ['k'], () => [{ labels: { k: 'x' }, value: 2 }]);
  assert.match(await metrics.registry.metrics(), /^test_value\{k="x"\} 2$/m);
});

test('a histogram observes durations, and asking twice gives the same one', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  metrics.histogram('test_seconds', 'Durations', ['step'], [1, 10]).observe({ step: 'addMember' }, 4);
  metrics.histogram('test_seconds', 'Durations', ['step']).observe({ step: 'addMember' }, 0.5);
  const text = await metrics.registry.getSingleMetricAsString('test_seconds');
  assert.match(text, /^test_seconds_bucket\{le="1",step="addMember"\} 1$/m);
  assert.match(text, /^test_seconds_bucket\{le="10",step="addMember"\} 2$/m);
  assert.match(text, /^test_seconds_count\{step="addMember"\} 2$/m);
});
