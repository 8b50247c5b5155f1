// The RedisBackupSchedules' series: the times their status reports (none for a time that does not exist), their
// creation, their interval now (none while suspended or invalid, so nothing is expected of them: RedisBackupTooOld),
// and the backups each keeps by phase, only those it controls.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { RuntimeMetrics } from '@quorum/runtime';
import { registerScheduleMetrics, scheduleSamples } from '../../src/operator/metrics.ts';
import type { RedisBackupObject, RedisBackupScheduleObject } from '../../src/resources.ts';
import { SCHEDULE_LABEL } from '../../src/schedule/prune-job.ts';

const NOW = Date.parse('2026-11-25T10:30:00Z');
const seconds = (iso: string): number => Date.parse(iso) / 1000;

function schedule(name: string, spec: Partial<RedisBackupScheduleObject['spec']>, status?: RedisBackupScheduleObject['status']): RedisBackupScheduleObject {
  return {
    apiVersion: 'redis.quorum.dev/v1alpha1',
    kind: 'RedisBackupSchedule',
    metadata: { name, namespace: 'ns', uid: `${name}-uid`, creationTimestamp: '2026-11-01T00:00:00Z' },
    spec: { redisName: 'cache', schedule: '0 * * * *', destination: { s3: { bucket: 'b', prefix: '', credentialsSecret: 's3' } }, ...spec },
    ...(status ? { status } : {}),
  };
}

function backup(name: string, schedule: string, phase: 'Running' | 'Succeeded' | 'Failed' | undefined, controller = true): RedisBackupObject {
  return {
    apiVersion: 'redis.quorum.dev/v1alpha1',
    kind: 'RedisBackup',
    metadata: { name, namespace: 'ns', labels: { [SCHEDULE_LABEL]: schedule }, ownerReferences: [{ apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'RedisBackupSchedule', name: schedule, uid: `${schedule}-uid`, controller }] },
    spec: { redisName: 'cache', destination: { s3: { bucket: 'b', prefix: '', credentialsSecret: 's3' } } },
    ...(phase ? { status: { phase } } : {}),
  };
}

const hourly = schedule('hourly', {}, { lastScheduleTime: '2026-11-25T10:00:00Z', lastSuccessfulTime: '2026-11-25T10:01:30Z', lastFailure: { time: '2026-11-25T09:02:00Z', backup: 'hourly-1', reason: 'SourceRefused', message: 'x' }, nextScheduleTime: '2026-11-25T11:00:00Z' });
const suspended = schedule('paused', { suspend: true }, { lastSuccessfulTime: '2026-11-20T00:01:00Z' });
const invalid = schedule('broken', { schedule: 'not cron' });

test("each schedule's times as its status reports them, its creation and its interval; none while suspended or invalid", () => {
  const s = scheduleSamples([hourly, suspended, invalid], [], NOW);
  const of = (samples: { labels: { schedule: string }; value: number }[]): [string, number][] => samples.map((x) => [x.labels.schedule, x.value]);
  assert.deepEqual(s.lastSuccess[0]?.labels, { namespace: 'ns', schedule: 'hourly', redis: 'cache' });
  assert.deepEqual(of(s.lastSchedule), [['hourly', seconds('2026-11-25T10:00:00Z')]]);
  assert.deepEqual(of(s.lastSuccess), [['hourly', seconds('2026-11-25T10:01:30Z')], ['paused', seconds('2026-11-20T00:01:00Z')]]);
  assert.deepEqual(of(s.lastFailure), [['hourly', seconds('2026-11-25T09:02:00Z')]]);
  assert.deepEqual(of(s.nextSchedule), [['hourly', seconds('2026-11-25T11:00:00Z')]]);
  assert.deepEqual(of(s.created), ['hourly', 'paused', 'broken'].map((n) => [n, seconds('2026-11-01T00:00:00Z')]));
  assert.deepEqual(of(s.interval), [['hourly', 3600]]);
});

test('the backups each schedule keeps, by phase: only those it controls (a backup of its name it does not control is not its)', () => {
  const backups = [backup('hourly-1', 'hourly', 'Failed'), backup('hourly-2', 'hourly', 'Succeeded'), backup('hourly-3', 'hourly', 'Succeeded'), backup('hourly-4', 'hourly', undefined), backup('hourly-x', 'hourly', 'Succeeded', false), backup('paused-1', 'paused', 'Running')];
  const s = scheduleSamples([hourly, suspended], backups, NOW);
  const kept = Object.fromEntries(s.backups.map((x) => [`${x.labels.schedule} ${x.labels.phase}`, x.value]));
  assert.deepEqual(kept, { 'hourly Pending': 1, 'hourly Running': 0, 'hourly Succeeded': 2, 'hourly Failed': 1, 'paused Pending': 0, 'paused Running': 1, 'paused Succeeded': 0, 'paused Failed': 0 });
});

test('registered, the series are read from the caches at each scrape, and go with their schedule', async () => {
  const metrics = new RuntimeMetrics({ processMetrics: false });
  let schedules = [hourly];
  registerScheduleMetrics(metrics, { store: { list: () => schedules } }, { store: { list: () => [backup('hourly-2', 'hourly', 'Succeeded')] } });
  const text = await metrics.registry.metrics();
  assert.match(text, /quorum_redis_backup_schedule_interval_seconds\{namespace="ns",schedule="hourly",redis="cache"\} 3600/);
  assert.match(text, /quorum_redis_backup_schedule_backups\{namespace="ns",schedule="hourly",redis="cache",phase="Succeeded"\} 1/);
  schedules = [];
  assert.doesNotMatch(await metrics.registry.metrics(), /schedule="hourly"/);
});
