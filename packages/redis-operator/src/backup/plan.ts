// The RedisBackup planner: pure, from what the reconciler observed to the one next step. A backup streams from a
// replica, never the primary unless the Redis has no replicas (then status says so); each attempt is a Job of one
// try, and a failed attempt is retried up to MAX_BACKUP_ATTEMPTS with the failure recorded and announced.
import { MAX_BACKUP_ATTEMPTS, type BackupPhase } from '../api/backup.ts';
import { jobNameTaken, type CredentialsRefusal, type ForeignJob } from '@quorum/kit';

export type { ForeignJob } from '@quorum/kit';

/** How long a backup waits for a replica that is ready and linked before it fails. */
export const SOURCE_WAIT_BOUND_MS = 5 * 60_000;

export type AttemptOutcome =
  | { type: 'running' }
  | { type: 'stored'; key: string; location: string; sizeBytes: number; sha256: string; serverVersion: string }
  | { type: 'failed'; reason: string; message: string };

export interface SourceInstance {
  name: string;
  role: 'primary' | 'replica' | 'unknown';
  ready: boolean;
  linkUp: boolean;
  lagBytes?: number;
}

export interface ObservedBackup {
  phase?: BackupPhase;
  /** Attempts started so far (status.attempts), and the instance the last one streams from. */
  attempts: number;
  source?: string;
  startedAt?: number;
  now: number;
  /** undefined: the Redis does not exist. */
  redis?: { replicas: number; instances: readonly SourceInstance[] };
  credentials?: CredentialsRefusal;
  /** The current attempt's Job, when it exists and this backup controls it. */
  job?: AttemptOutcome;
  /** A Job at the current attempt's Job name that this backup does not control: never read, used or deleted. */
  foreignJob?: ForeignJob;
}

export type BackupAction =
  | { type: 'done' }
  | { type: 'wait'; reason: string; message: string; requeueAfterMs: number }
  | { type: 'start'; attempt: number; instance: string; role: 'primary' | 'replica'; failure?: { reason: string; message: string } }
  | { type: 'succeed'; result: Extract<AttemptOutcome, { type: 'stored' }> }
  | { type: 'fail'; reason: string; message: string };

/** The replica to stream from (ready, linked, least behind), or the primary when the Redis has no replicas. */
export function pickSource(redis: NonNullable<ObservedBackup['redis']>): { instance: string; role: 'primary' | 'replica' } | undefined {
  if (redis.replicas === 0) {
    const primary = redis.instances.find((i) => i.role === 'primary' && i.ready);
    return primary ? { instance: primary.name, role: 'primary' } : undefined;
  }
  const linked = redis.instances.filter((i) => i.role === 'replica' && i.ready && i.linkUp);
  linked.sort((a, b) => (a.lagBytes ?? 0) - (b.lagBytes ?? 0) || a.name.localeCompare(b.name));
  const best = linked[0];
  return best ? { instance: best.name, role: 'replica' } : undefined;
}

function startNext(o: ObservedBackup, failure?: { reason: string; message: string }): BackupAction {
  const source = pickSource(o.redis!);
  if (source !== undefined) return { type: 'start', attempt: o.attempts + 1, ...source, ...(failure ? { failure } : {}) };
  const waited = o.now - (o.startedAt ?? o.now);
  const what = o.redis!.replicas === 0 ? 'the primary is not ready' : 'no replica is ready with its link to the primary up (a backup never forks the primary of a Redis with replicas)';
  if (waited >= SOURCE_WAIT_BOUND_MS) return { type: 'fail', reason: 'NoSource', message: `${what}, for ${Math.round(waited / 1000)} s` };
  return { type: 'wait', reason: 'NoSource', message: `waiting: ${what}`, requeueAfterMs: 5000 };
}

export function planBackup(o: ObservedBackup): BackupAction {
  if (o.phase === 'Succeeded' || o.phase === 'Failed') return { type: 'done' };
  if (o.redis === undefined) return { type: 'fail', reason: 'RedisNotFound', message: 'the Redis named by spec.redisName does not exist in this namespace' };
  if (o.foreignJob) return jobNameTaken(o.foreignJob, o.now, 'RedisBackup');
  const job = o.job;
  if (job?.type === 'running') return { type: 'wait', reason: 'Streaming', message: `streaming the RDB from ${o.source ?? 'the source'} (attempt ${o.attempts} of ${MAX_BACKUP_ATTEMPTS})`, requeueAfterMs: 5000 };
  if (job?.type === 'stored') return { type: 'succeed', result: job };
  if (job?.type === 'failed') {
    const failure = { reason: job.reason, message: `attempt ${o.attempts} of ${MAX_BACKUP_ATTEMPTS}: ${job.message}` };
    if (o.attempts >= MAX_BACKUP_ATTEMPTS) return { type: 'fail', ...failure };
    return startNext(o, failure);
  }
  // The credentials Secret is checked before any Job would mount it (the label: docs/security.md).
  if (o.credentials) return { type: 'fail', reason: o.credentials.reason, message: o.credentials.message };
  // Running without the current attempt's Job: the operator stopped between recording the attempt and creating
  // the Job. Creating it now is safe: only the Job stores an RDB, once.
  if (o.phase === 'Running' && o.attempts > 0 && o.source !== undefined) {
    const recorded = o.redis.instances.find((i) => i.name === o.source);
    return { type: 'start', attempt: o.attempts, instance: o.source, role: recorded?.role === 'primary' ? 'primary' : 'replica' };
  }
  return startNext(o);
}
