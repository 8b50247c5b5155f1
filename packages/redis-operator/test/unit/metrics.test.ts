// The operator's metrics of each Redis: what status says (roles, lag, links, the Sentinels' view), what the
// reconciler last read from the instances (memory, evictions, connected replicas), Sentinel failovers as status
// updates show them, and backup times; every series goes with its Redis or instance.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RuntimeMetrics, type EventHandler } from '@quorum/runtime';
import { InstanceLoad, LOAD_FRESH_MS, lastBackupSamples, redisSamples, registerBackupMetrics, registerRedisMetrics, SentinelFailovers } from '../../src/operator/metrics.ts';
import type { InstanceReading } from '../../src/plan/types.ts';
import { instanceReading, parseInfo } from '../../src/redis/readings.ts';
import type { RedisBackupObject, RedisObject } from '../../src/resources.ts';

const NOW = Date.parse('2026-01-01T00:00:00Z');

function redis(name: string, status?: RedisObject['status'], spec: object = { replicas: 2 }): RedisObject {
  return { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'Redis', metadata: { name, namespace: 'ns' }, spec, ...(status ? { status } : {}) };
}

const running = redis('cache', {
  conditions: [{ type: 'Available', status: 'True', reason: 'PrimaryServing', message: '', lastTransitionTime: '2026-01-01T00:00:00Z' }],
  readyReplicas: 2,
  instances: [
    { name: 'cache-0', role: 'primary', ready: true, offset: 100 },
    { name: 'cache-1', role: 'replica', ready: true, offset: 90, lagBytes: 10, linkStatus: 'up' },
    { name: 'cache-2', role: 'unknown', ready: false },
  ],
  sentinel: { primary: 'cache-0', reporting: 3, agreeing: 3, ableToFailOver: 1, quorum: 2 },
});

const values = <L extends string>(samples: { labels: Record<L, string>; value: number }[], label: L): [string, number][] => samples.map((s) => [s.labels[label], s.value]);

test('status: desired and ready instances, Available, each role, lag and link, the Sentinels\' view', () => {
  const s = redisSamples([running, redis('new')], NOW);
  assert.deepEqual(values(s.desiredInstances, 'redis'), [['cache', 3], ['new', 3]]);
  assert.deepEqual(values(s.minReplicasToWrite, 'redis'), [['cache', 1], ['new', 1]]);
  assert.deepEqual(values(s.readyInstances, 'redis'), [['cache', 2]], 'nothing read yet for a Redis without status');
  assert.deepEqual(values(s.available, 'redis'), [['cache', 1]]);
  assert.deepEqual(s.instanceRole.map((x) => [x.labels.instance, x.labels.role, x.value]), [['cache-0', 'primary', 1], ['cache-1', 'replica', 1], ['cache-2', 'unknown', 1]]);
  assert.deepEqual(values(s.instanceReady, 'instance'), [['cache-0', 1], ['cache-1', 1], ['cache-2', 0]]);
  assert.deepEqual(values(s.replicaLagBytes, 'instance'), [['cache-1', 10]]);
  assert.deepEqual(values(s.replicaLinkUp, 'instance'), [['cache-1', 1]]);
  assert.deepEqual([s.sentinelsReporting, s.sentinelsAgreeing, s.sentinelsAbleToFailOver, s.sentinelQuorum].map((x) => x.map((y) => y.value)), [[3], [3], [1], [2]]);
  assert.deepEqual(redisSamples([redis('solo', undefined, { replicas: 0 })], NOW).minReplicasToWrite.map((x) => x.value), [0]);
});

test('INFO memory, stats and replication give the load figures; an older server without them gives none', () => {
  const info = parseInfo('role:master\nmaster_repl_offset:5\nredis_version:7.0.15\nconnected_slaves:2\nused_memory:1048576\nmaxmemory:0\nevicted_keys:7\n');
  assert.deepEqual(instanceReading(info), { ok: true, role: 'master', offset: 5, version: '7.0.15', stats: { usedMemoryBytes: 1048576, maxMemoryBytes: 0, evictedKeys: 7, connectedReplicas: 2 } });
  assert.equal((instanceReading(parseInfo('role:master\nmaster_repl_offset:5\nredis_version:7.0.15')) as { stats?: unknown }).stats, undefined);
});

const stats = (used: number): InstanceReading => ({ ok: true, role: 'master', offset: 0, version: '7.0.15', stats: { usedMemoryBytes: used, maxMemoryBytes: 2000, evictedKeys: 3, connectedReplicas: 1 } });

test('instance load: the last observation of each Redis that exists, while fresh; an instance that stops answering drops out', () => {
  const load = new InstanceLoad();
  load.record({ namespace: 'ns', redis: 'cache', instances: new Map([['cache-0', stats(1000)], ['cache-1', stats(900)]]) }, NOW);
  load.record({ namespace: 'ns', redis: 'gone', instances: new Map([['gone-0', stats(5)]]) }, NOW);
  const exists = (key: string): boolean => key === 'ns/cache';
  const s = load.samples(exists, NOW + 1000);
  assert.deepEqual(values(s.usedMemory, 'instance'), [['cache-0', 1000], ['cache-1', 900]], 'a deleted Redis has no series');
  assert.deepEqual(values(s.maxMemory, 'instance'), [['cache-0', 2000], ['cache-1', 2000]]);
  assert.deepEqual(values(s.evictedKeys, 'instance'), [['cache-0', 3], ['cache-1', 3]]);
  assert.deepEqual(values(s.connectedReplicas, 'instance'), [['cache-0', 1], ['cache-1', 1]]);
  load.record({ namespace: 'ns', redis: 'cache', instances: new Map<string, InstanceReading>([['cache-0', stats(1100)], ['cache-1', { ok: false, error: 'timeout' }]]) }, NOW + 2000);
  assert.deepEqual(values(load.samples(exists, NOW + 3000).usedMemory, 'instance'), [['cache-0', 1100]]);
  assert.deepEqual(load.samples(exists, NOW + 2000 + LOAD_FRESH_MS + 1).usedMemory, [], 'not observed for a minute: this replica no longer leads');
});

test('Sentinel failovers: a change of the primary the Sentinels name, not the first one named nor a resync', () => {
  const seen: string[] = [];
  const h = new SentinelFailovers((l) => seen.push(`failover ${l.redis}`), (l) => seen.push(`deleted ${l.redis}`)).handler();
  const withPrimary = (p: string | undefined): RedisObject => redis('cache', { ...(p ? { sentinel: { primary: p, reporting: 3, agreeing: 3, ableToFailOver: 3, quorum: 2 } } : {}) });
  h.onAdd?.(withPrimary('cache-0'));
  h.onUpdate?.(withPrimary('cache-0'), withPrimary('cache-0'));
  h.onUpdate?.(withPrimary('cache-0'), withPrimary(undefined));
  h.onUpdate?.(withPrimary(undefined), withPrimary('cache-1'));
  h.onUpdate?.(withPrimary('cache-1'), withPrimary('cache-2'));
  h.onDelete?.(withPrimary('cache-2'));
  h.onAdd?.(withPrimary('cache-0'));
  assert.deepEqual(seen, ['failover cache', 'failover cache', 'deleted cache']);
});

test('registered: the series on /metrics, and a deleted Redis\'s counter and backup series removed', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  const store = new Map<string, RedisObject>([['ns/cache', running]]);
  let handler: EventHandler<RedisObject> | undefined;
  const load = new InstanceLoad();
  registerRedisMetrics(metrics, { store: { list: () => [...store.values()], get: (k) => store.get(k) }, addHandler: (h) => (handler = h) }, load);
  load.record({ namespace: 'ns', redis: 'cache', instances: new Map([['cache-0', stats(1000)]]) }, Date.now());
  const backup = (phase: 'Succeeded' | 'Failed', completedAt: string, redisName = 'cache'): RedisBackupObject => ({ metadata: { name: `${redisName}-${completedAt}`, namespace: 'ns' }, spec: { redisName }, status: { phase, completedAt } }) as RedisBackupObject;
  registerBackupMetrics(metrics, { store: { list: () => [backup('Succeeded', '2026-01-01T00:00:00Z'), backup('Failed', '2026-01-02T00:00:00Z'), backup('Succeeded', '2026-01-01T00:00:00Z', 'gone')] } }, { store: { get: (k) => store.get(k) } });
  const moved = { ...running, status: { ...running.status, sentinel: { ...running.status!.sentinel!, primary: 'cache-1' } } };
  handler?.onAdd?.(running);
  handler?.onUpdate?.(running, moved);
  const text = await metrics.registry.metrics();
  assert.match(text, /quorum_redis_instance_role\{namespace="ns",redis="cache",instance="cache-0",role="primary"\} 1/);
  assert.match(text, /quorum_redis_memory_used_bytes\{namespace="ns",redis="cache",instance="cache-0"\} 1000/);
  assert.match(text, /quorum_redis_sentinel_failovers_total\{namespace="ns",redis="cache"\} 1/);
  assert.match(text, /quorum_redis_backup_last_success_timestamp_seconds\{namespace="ns",redis="cache"\} 1767225600/);
  assert.match(text, /quorum_redis_backup_last_failure_timestamp_seconds\{namespace="ns",redis="cache"\} 1767312000/);
  assert.doesNotMatch(text, /redis="gone"/, 'the backups of a deleted Redis give no series');
  store.delete('ns/cache');
  handler?.onDelete?.(moved);
  assert.doesNotMatch(await metrics.registry.metrics(), /redis="cache"/);
});

test('backup times: the newest of each phase per Redis', () => {
  const b = (name: string, phase: string, completedAt: string): RedisBackupObject => ({ metadata: { name, namespace: 'ns' }, spec: { redisName: 'cache' }, status: { phase, completedAt } }) as RedisBackupObject;
  const all = [b('a', 'Succeeded', '2026-01-01T00:00:00Z'), b('b', 'Succeeded', '2026-01-03T00:00:00Z'), b('c', 'Failed', '2026-01-02T00:00:00Z'), b('d', 'Running', '2026-01-04T00:00:00Z')];
  assert.deepEqual(lastBackupSamples(all).map((s) => s.value), [Date.parse('2026-01-03T00:00:00Z') / 1000]);
  assert.deepEqual(lastBackupSamples(all, 'Failed').map((s) => s.value), [Date.parse('2026-01-02T00:00:00Z') / 1000]);
});
