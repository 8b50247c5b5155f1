// A backup schedule's decision as pure functions, whatever it backs up (EtcdBackupSchedule, RedisBackupSchedule):
// given the schedule's spec, the clock, its backup objects and the Jobs that delete expired stored backups, the
// one next step (planSchedule) and the status to report (backupScheduleStatus). A scheduled time is identified by
// its own instant: a backup is named after it, so a repeated decision (a crash, a stale cache) meets
// AlreadyExists instead of a second backup.
import { setCondition, type Condition } from '@quorum/runtime';
import type { CronExpression } from 'cron-parser';
import { latestTime, nextTime, parseSchedule } from './backup-schedule-cron.ts';
import { JOB_NAME_TAKEN_BOUND_MS, JOB_NAME_TAKEN_RECHECK_MS, jobNameTaken, type ForeignJob, type JobNameTaken } from './foreign-job.ts';

/** A backup object's phase: finished when Succeeded or Failed. */
export type ScheduledBackupPhase = 'Pending' | 'Running' | 'Succeeded' | 'Failed';

/** The most recent failed backup of a schedule, kept in its status after retention removed the record. */
export interface BackupScheduleFailure {
  time: string;
  backup: string;
  reason: string;
  message: string;
}

/** A backup schedule's status, as every operator's schedule kind reports it. */
export interface BackupScheduleStatus {
  observedGeneration?: number;
  lastScheduleTime?: string;
  lastSuccessfulTime?: string;
  lastFailure?: BackupScheduleFailure;
  nextScheduleTime?: string;
  active?: string;
  conditions?: Condition[];
}

/** What the status names besides the observation: the object's generation, what is backed up, the backup kind. */
export interface BackupScheduleContext {
  generation: number;
  /** What the schedule backs up, as the Ready message names it (e.g. the cluster's name). */
  target: string;
  /** The backup objects' kind (e.g. `EtcdBackup`), as JobNameTaken messages name it. */
  backupKind: string;
  /** The backup this reconcile created. */
  createdBackup?: string;
}

/** A backup object of this schedule, as far as scheduling and retention care. */
export interface ScheduledBackup {
  name: string;
  uid: string;
  /** The scheduled time it was made for (ms). */
  scheduledAt: number;
  phase: ScheduledBackupPhase | undefined;
  /** When it succeeded or failed (ms). */
  completedAt?: number;
  /** The stored object's key (Succeeded backups). */
  key?: string;
  failure?: { reason: string; message: string };
  /** Its record is being deleted already. */
  deleting: boolean;
}

/** The Job deleting one backup's stored object. */
export interface PruneJob {
  succeeded: boolean;
  failed: boolean;
  /** When it failed (ms), and why (the agent's reason and message, or the Job's). */
  failedAt?: number;
  message?: string;
}

export interface ScheduleObserved {
  schedule: string;
  /** Seeds cron-parser's `H` (hashed) fields, so a schedule's times stay the same from one reconcile to the next. */
  hashSeed: string;
  suspend: boolean;
  retention: { maxCount?: number; maxAgeMs?: number };
  /** The schedule's creationTimestamp (ms): no time before it is taken. */
  createdAt: number;
  /** status.lastScheduleTime (ms). */
  lastScheduleTime?: number;
  backups: ScheduledBackup[];
  /** By backup UID: the prune Jobs the backups control. */
  pruneJobs: ReadonlyMap<string, PruneJob>;
  /** By backup UID: a Job at a backup's prune Job name that the backup does not control (never read nor deleted). */
  foreignPruneJobs?: ReadonlyMap<string, ForeignJob>;
  now: number;
  /** How long after a failed prune Job it is run again. */
  pruneRetryMs: number;
}

export type ScheduleAction =
  | { type: 'invalid'; message: string }
  | { type: 'createBackup'; scheduledAt: number }
  /** Run the agent's `delete` for this backup's stored object. */
  | { type: 'startPrune'; backup: ScheduledBackup }
  /** Delete the failed prune Job, so that the next reconcile runs it again. */
  | { type: 'retryPrune'; backup: ScheduledBackup }
  /** Delete the backup's record: its stored object is gone (or it never had one). */
  | { type: 'deleteRecord'; backup: ScheduledBackup; storedObjectDeleted: boolean }
  | { type: 'idle'; requeueAfterMs: number | undefined };

export const DEFAULT_PRUNE_RETRY_MS = 10 * 60_000;

/** A foreign Job at a backup's prune Job name: wait for it to go, saying whose it is; past the bound, say retention is stuck. */
export function pruneJobNameTaken(job: ForeignJob, now: number, backupKind: string): JobNameTaken {
  return jobNameTaken(job, now, backupKind, {
    ownJob: "this expired backup's prune Job",
    remedy: 'Delete that Job (the operator will not) for retention to go on; until then this backup and its stored object are kept',
  });
}

const finished = (b: ScheduledBackup): boolean => b.phase === 'Succeeded' || b.phase === 'Failed';

/** The newest scheduled time already taken: the status says so, or a backup made for it exists (the status write may not have happened). */
function lastTaken(o: ScheduleObserved): number | undefined {
  const times = [...(o.lastScheduleTime !== undefined ? [o.lastScheduleTime] : []), ...o.backups.map((b) => b.scheduledAt)];
  return times.length > 0 ? Math.max(...times) : undefined;
}

/**
 * The scheduled time to take now, if any: only the latest that has passed (after a downtime or a suspension,
 * the missed ones before it are not caught up), and not one already taken, nor one before the schedule existed.
 */
export function dueTime(o: ScheduleObserved, expression: CronExpression): number | undefined {
  const latest = latestTime(expression, o.now);
  if (latest === undefined || latest < o.createdAt) return undefined;
  const taken = lastTaken(o);
  return taken === undefined || latest > taken ? latest : undefined;
}

/** Forbid: a time at which an older backup of this schedule was still running is skipped, not taken late. */
export function skippedByForbid(time: number, backups: readonly ScheduledBackup[]): ScheduledBackup | undefined {
  return backups.find((b) => b.scheduledAt < time && (!finished(b) || (b.completedAt ?? Infinity) > time));
}

/**
 * The backups retention removes, oldest first: Succeeded ones beyond maxCount or older than maxAge, never
 * the newest successful one; Failed records by the same rules (counted among the failed ones).
 */
export function expiredBackups(backups: readonly ScheduledBackup[], retention: ScheduleObserved['retention'], now: number): ScheduledBackup[] {
  const newestFirst = (phase: ScheduledBackupPhase): ScheduledBackup[] => backups.filter((b) => b.phase === phase).sort((a, b) => b.scheduledAt - a.scheduledAt);
  const expired = (list: ScheduledBackup[], keepNewest: boolean): ScheduledBackup[] =>
    list.filter((b, i) => {
      if (keepNewest && i === 0) return false;
      const overCount = retention.maxCount !== undefined && i >= retention.maxCount;
      const overAge = retention.maxAgeMs !== undefined && now - b.scheduledAt > retention.maxAgeMs;
      return overCount || overAge;
    });
  return [...expired(newestFirst('Succeeded'), true), ...expired(newestFirst('Failed'), false)].sort((a, b) => a.scheduledAt - b.scheduledAt);
}

/** When the next backup ages out under maxAge (ms), if any does. */
function nextExpiry(o: ScheduleObserved): number | undefined {
  if (o.retention.maxAgeMs === undefined) return undefined;
  const times = o.backups.filter(finished).map((b) => b.scheduledAt + o.retention.maxAgeMs! + 1).filter((t) => t > o.now);
  return times.length > 0 ? Math.min(...times) : undefined;
}

export function planSchedule(o: ScheduleObserved): ScheduleAction {
  const parsed = parseSchedule(o.schedule, o.hashSeed);
  if (!parsed.ok) return { type: 'invalid', message: parsed.message };

  const due = dueTime(o, parsed.expression);
  if (due !== undefined && !o.suspend && !skippedByForbid(due, o.backups)) return { type: 'createBackup', scheduledAt: due };

  const wakeUps: number[] = [];
  for (const backup of expiredBackups(o.backups, o.retention, o.now)) {
    if (backup.deleting) continue;
    // Only a Succeeded backup has a stored object; a Failed one left nothing that looks complete.
    if (backup.phase !== 'Succeeded' || !backup.key) return { type: 'deleteRecord', backup, storedObjectDeleted: false };
    const foreign = o.foreignPruneJobs?.get(backup.uid);
    if (foreign) {
      // Never read nor deleted: looked at again soon while it may still go, then at the retry cadence.
      const waited = o.now - foreign.since;
      wakeUps.push(o.now + (waited < JOB_NAME_TAKEN_BOUND_MS ? JOB_NAME_TAKEN_RECHECK_MS : o.pruneRetryMs));
      continue;
    }
    const job = o.pruneJobs.get(backup.uid);
    if (!job) return { type: 'startPrune', backup };
    if (job.succeeded) return { type: 'deleteRecord', backup, storedObjectDeleted: true };
    if (job.failed) {
      const retryAt = (job.failedAt ?? o.now) + o.pruneRetryMs;
      if (o.now >= retryAt) return { type: 'retryPrune', backup };
      wakeUps.push(retryAt);
    }
    // A running prune Job wakes the controller when it finishes (its events are watched).
  }

  if (!o.suspend) {
    const next = nextTime(parsed.expression, o.now);
    if (next !== undefined) wakeUps.push(next);
  }
  const expiry = nextExpiry(o);
  if (expiry !== undefined) wakeUps.push(expiry);
  return { type: 'idle', requeueAfterMs: wakeUps.length > 0 ? Math.max(0, Math.min(...wakeUps) - o.now) : undefined };
}

const iso = (ms: number): string => new Date(ms).toISOString().replace(/\.\d{3}Z$/, 'Z');
const ms = (time: string | undefined): number | undefined => {
  const t = time === undefined ? NaN : Date.parse(time);
  return Number.isFinite(t) ? t : undefined;
};

/**
 * The status to report, from what was observed and the action just taken. Times kept in status outlive the
 * records retention deletes: lastSuccessfulTime and lastFailure only move forward.
 */
export function backupScheduleStatus(o: ScheduleObserved, action: ScheduleAction, previous: BackupScheduleStatus, context: BackupScheduleContext): BackupScheduleStatus {
  const now = new Date(o.now);
  const condition = (list: Condition[], input: Omit<Condition, 'lastTransitionTime' | 'observedGeneration'>): Condition[] =>
    setCondition(list, { ...input, observedGeneration: context.generation }, now);
  let conditions = previous.conditions ?? [];
  const live = o.backups.filter((b) => !(action.type === 'deleteRecord' && action.backup.uid === b.uid));

  const lastScheduled = Math.max(...[lastTaken(o), action.type === 'createBackup' ? action.scheduledAt : undefined].filter((t): t is number => t !== undefined));
  const active = action.type === 'createBackup' ? context.createdBackup : live.filter((b) => !finished(b)).sort((a, b) => b.scheduledAt - a.scheduledAt)[0]?.name;

  const successes = live.filter((b) => b.phase === 'Succeeded' && b.completedAt !== undefined).map((b) => b.completedAt!);
  const lastSuccess = Math.max(...successes, ms(previous.lastSuccessfulTime) ?? -Infinity);

  const newestFailure = live.filter((b) => b.phase === 'Failed').sort((a, b) => (b.completedAt ?? b.scheduledAt) - (a.completedAt ?? a.scheduledAt))[0];
  let lastFailure = previous.lastFailure;
  if (newestFailure && (newestFailure.completedAt ?? newestFailure.scheduledAt) > (ms(lastFailure?.time) ?? -Infinity)) {
    lastFailure = {
      time: iso(newestFailure.completedAt ?? newestFailure.scheduledAt),
      backup: newestFailure.name,
      reason: newestFailure.failure?.reason ?? 'BackupFailed',
      message: newestFailure.failure?.message ?? 'the backup failed',
    };
  }

  const parsed = parseSchedule(o.schedule, o.hashSeed);
  const next = parsed.ok && !o.suspend ? nextTime(parsed.expression, o.now) : undefined;
  if (action.type === 'invalid') conditions = condition(conditions, { type: 'Ready', status: 'False', reason: 'InvalidSchedule', message: action.message });
  else if (o.suspend) conditions = condition(conditions, { type: 'Ready', status: 'True', reason: 'Suspended', message: 'spec.suspend is true: no new backups are taken; retention still applies' });
  else conditions = condition(conditions, { type: 'Ready', status: 'True', reason: 'Scheduled', message: `backups of ${context.target} at ${o.schedule} (UTC)` });

  // The newest finished backup says whether backups are failing now.
  const newestFinished = live.filter(finished).sort((a, b) => b.scheduledAt - a.scheduledAt)[0];
  if (newestFinished?.phase === 'Failed') {
    conditions = condition(conditions, { type: 'BackupsFailing', status: 'True', reason: newestFinished.failure?.reason ?? 'BackupFailed', message: `backup ${newestFinished.name} failed: ${newestFinished.failure?.message ?? 'see its conditions'}` });
  } else if (newestFinished?.phase === 'Succeeded') {
    conditions = condition(conditions, { type: 'BackupsFailing', status: 'False', reason: 'LastBackupSucceeded', message: `backup ${newestFinished.name} succeeded` });
  }

  const expired = expiredBackups(o.backups, o.retention, o.now);
  const failedPrunes = expired.flatMap((b) => {
    const job = o.pruneJobs.get(b.uid);
    return job?.failed ? [`${b.name}: ${job.message ?? 'the delete Job failed'}`] : [];
  });
  const takenNames = expired.flatMap((b) => {
    const foreign = b.deleting ? undefined : o.foreignPruneJobs?.get(b.uid);
    return foreign ? [`${b.name}: ${pruneJobNameTaken(foreign, o.now, context.backupKind).message}`] : [];
  });
  const deleteFailed = failedPrunes.length > 0 ? `expired backups could not be deleted from the store (retried every ${Math.round(o.pruneRetryMs / 60_000)} min): ${failedPrunes.join('; ')}` : undefined;
  if (takenNames.length > 0) {
    conditions = condition(conditions, { type: 'RetentionFailing', status: 'True', reason: 'JobNameTaken', message: [`expired backups wait for Jobs in the way of their prune Jobs: ${takenNames.join('; ')}`, deleteFailed].filter(Boolean).join('. ') });
  } else if (deleteFailed) {
    conditions = condition(conditions, { type: 'RetentionFailing', status: 'True', reason: 'DeleteFailed', message: deleteFailed });
  } else if (conditions.some((c) => c.type === 'RetentionFailing')) {
    conditions = condition(conditions, { type: 'RetentionFailing', status: 'False', reason: 'Deleted', message: 'expired backups are deleted' });
  }

  return {
    observedGeneration: context.generation,
    ...(Number.isFinite(lastScheduled) ? { lastScheduleTime: iso(lastScheduled) } : {}),
    ...(Number.isFinite(lastSuccess) ? { lastSuccessfulTime: iso(lastSuccess) } : {}),
    ...(lastFailure ? { lastFailure } : {}),
    ...(next !== undefined ? { nextScheduleTime: iso(next) } : {}),
    ...(active ? { active } : {}),
    conditions,
  };
}

/** A Go-style duration of hours, minutes and seconds (`168h`, `1h30m`, `90s`) in ms; undefined when it is not one. */
export function durationMs(text: string): number | undefined {
  if (!/^([0-9]+(\.[0-9]+)?(h|m|s))+$/.test(text)) return undefined;
  const unit = { h: 3_600_000, m: 60_000, s: 1000 } as const;
  let total = 0;
  for (const [, amount, , u] of text.matchAll(/([0-9]+(\.[0-9]+)?)(h|m|s)/g)) total += Number(amount) * unit[u as keyof typeof unit];
  return total;
}

/** A backup of a schedule is named after the scheduled time (Unix seconds), so one time never gets two. */
export function scheduledBackupName(schedule: string, scheduledAt: number): string {
  return `${schedule}-${Math.floor(scheduledAt / 1000)}`;
}

/** A backup object as a schedule reads it: its metadata, and the status fields every backup kind has. */
export interface ScheduledBackupRecord {
  metadata: { name?: string; uid?: string; annotations?: Record<string, string>; creationTimestamp?: string; deletionTimestamp?: string };
  status?: { phase?: ScheduledBackupPhase; completedAt?: string; key?: string; conditions?: Condition[] };
}

/** The scheduled time a backup was made for: its annotation, else its name's suffix, else its creation. */
function scheduledAt(backup: ScheduledBackupRecord, annotation: string): number {
  const annotated = Date.parse(backup.metadata.annotations?.[annotation] ?? '');
  if (Number.isFinite(annotated)) return annotated;
  const fromName = /-(\d+)$/.exec(backup.metadata.name ?? '')?.[1];
  return fromName ? Number(fromName) * 1000 : Date.parse(backup.metadata.creationTimestamp ?? '') || 0;
}

/** A backup object of the schedule as the planner sees it; `annotation` holds the scheduled time it was made for. */
export function observeScheduledBackup(backup: ScheduledBackupRecord, annotation: string): ScheduledBackup {
  const s = backup.status ?? {};
  const completedAt = s.completedAt ? Date.parse(s.completedAt) : NaN;
  const failed = s.conditions?.find((c) => c.type === 'Failed' && c.status === 'True');
  return {
    name: backup.metadata.name!,
    uid: backup.metadata.uid ?? '',
    scheduledAt: scheduledAt(backup, annotation),
    phase: s.phase,
    ...(Number.isFinite(completedAt) ? { completedAt } : {}),
    ...(s.key ? { key: s.key } : {}),
    ...(failed ? { failure: { reason: failed.reason, message: failed.message } } : {}),
    deleting: !!backup.metadata.deletionTimestamp,
  };
}
