// The operator's metrics about each Redis, read at scrape time from its informer cache (what status says), so
// that nothing is lost when the operator restarts: the step under way (its age, refusals, whether it passed its
// bound) and the rolling update (pods on the target, a halt with the pod and the reason).
import type { CollectedSample, RuntimeMetrics } from '@quorum/runtime';
import type { RedisBackupObject, RedisObject } from '../resources.ts';

type RedisLabels = 'namespace' | 'redis';
type Samples<L extends string> = CollectedSample<L>[];

export interface RedisSamples {
  stepAge: Samples<RedisLabels | 'step'>;
  stepFailures: Samples<RedisLabels | 'step'>;
  stepStalled: Samples<RedisLabels | 'step'>;
  rolloutUpdated: Samples<RedisLabels>;
  rolloutTotal: Samples<RedisLabels>;
  rolloutHalted: Samples<RedisLabels | 'instance' | 'reason'>;
}

/** The kind of a step, as a label with few values: "delete-pod cache-2" is delete-pod. */
export const stepKind = (name: string): string => name.split(' ')[0] ?? name;

export function redisSamples(redises: readonly RedisObject[], now: number): RedisSamples {
  const out: RedisSamples = { stepAge: [], stepFailures: [], stepStalled: [], rolloutUpdated: [], rolloutTotal: [], rolloutHalted: [] };
  for (const r of redises) {
    const labels = { namespace: r.metadata.namespace ?? '', redis: r.metadata.name ?? '' };
    const step = r.status?.step;
    if (step !== undefined) {
      const stepLabels = { ...labels, step: stepKind(step.name) };
      out.stepAge.push({ labels: stepLabels, value: Math.max(0, (now - Date.parse(step.startedAt)) / 1000) });
      out.stepFailures.push({ labels: stepLabels, value: step.failures ?? 0 });
      out.stepStalled.push({ labels: stepLabels, value: step.stalled ? 1 : 0 });
    }
    const rollout = r.status?.rollout;
    if (rollout !== undefined) {
      out.rolloutUpdated.push({ labels, value: rollout.updated });
      out.rolloutTotal.push({ labels, value: rollout.total });
      if (rollout.halted) out.rolloutHalted.push({ labels: { ...labels, instance: rollout.halted.instance, reason: rollout.halted.reason }, value: 1 });
    }
  }
  return out;
}

export function registerRedisMetrics(metrics: RuntimeMetrics, redises: { store: { list(): RedisObject[] } }): void {
  const samples = (): RedisSamples => redisSamples(redises.store.list(), Date.now());
  const REDIS = ['namespace', 'redis'] as const;
  const STEP = [...REDIS, 'step'] as const;
  const p = 'quorum_redis_';
  metrics.collectedGauge(`${p}step_age_seconds`, 'How long the step under way (status.step) has lasted so far', STEP, () => samples().stepAge);
  metrics.collectedGauge(`${p}step_failures`, 'Refused attempts of the step under way (status.step.failures)', STEP, () => samples().stepFailures);
  metrics.collectedGauge(`${p}step_stalled`, '1 once the step under way passed its bound (status.step.stalled: Degraded, StepStalled)', STEP, () => samples().stepStalled);
  metrics.collectedGauge(`${p}rollout_updated_pods`, 'Pods on the rolling update\'s target (status.rollout.updated), while one is under way', REDIS, () => samples().rolloutUpdated);
  metrics.collectedGauge(`${p}rollout_pods`, 'Pods the spec asks for (status.rollout.total), while a rolling update is under way', REDIS, () => samples().rolloutTotal);
  metrics.collectedGauge(`${p}rollout_halted`, '1 while a rolling update is halted, with the pod it stopped at and why (status.rollout.halted)', [...REDIS, 'instance', 'reason'], () => samples().rolloutHalted);
}

/** Per Redis, when its newest Succeeded RedisBackup completed (seconds since the epoch): what a backup-age alert reads. */
export function lastBackupSamples(backups: readonly RedisBackupObject[]): Samples<RedisLabels> {
  const newest = new Map<string, { labels: Record<RedisLabels, string>; value: number }>();
  for (const b of backups) {
    const completed = Date.parse(b.status?.completedAt ?? '');
    if (b.status?.phase !== 'Succeeded' || !Number.isFinite(completed)) continue;
    const labels = { namespace: b.metadata.namespace ?? '', redis: b.spec.redisName };
    const key = `${labels.namespace}/${labels.redis}`;
    if ((newest.get(key)?.value ?? 0) < completed / 1000) newest.set(key, { labels, value: completed / 1000 });
  }
  return [...newest.values()];
}

export function registerBackupMetrics(metrics: RuntimeMetrics, backups: { store: { list(): RedisBackupObject[] } }): void {
  metrics.collectedGauge('quorum_redis_backup_last_success_timestamp_seconds', 'When the newest Succeeded RedisBackup of each Redis completed (status.completedAt)', ['namespace', 'redis'] as const, () => lastBackupSamples(backups.store.list()));
}
