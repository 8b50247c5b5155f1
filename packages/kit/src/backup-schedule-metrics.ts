// What a backup schedule's metrics say, as pure functions of what its reconciler observed, whatever it backs up:
// the times its status reports, and the scheduled times that passed without a backup. The reconciler
// (backupScheduleReconciler, `metrics`) sets them; each operator backs them with its registry.
import { CronExpressionParser } from 'cron-parser';
import { parseSchedule } from './backup-schedule-cron.ts';
import { skippedByForbid, type BackupScheduleStatus, type ScheduleObserved } from './backup-schedule.ts';

/**
 * Why a scheduled time passed without a backup of its own:
 * - `Forbid`: a backup of the schedule was still running at that time (concurrencyPolicy Forbid);
 * - `Suspended`: the schedule was suspended (as its status said when the time was collapsed);
 * - `Missed`: nothing took it at its time (the operator was down, or had no leader), so a later time was
 *   taken instead.
 */
export type SkipReason = 'Forbid' | 'Suspended' | 'Missed';

/** Unix times in seconds; an undefined one has no series (a time that does not exist is not 0). */
export interface ScheduleTimes {
  lastScheduleTime?: number;
  lastSuccessfulTime?: number;
  nextScheduleTime?: number;
}

/** A schedule's series, under the labels the operator gives each schedule (its namespace, name and target). */
export interface BackupScheduleMetrics<L extends Record<string, string>> {
  /** The times of the status just computed, set on every reconcile. */
  times(labels: L, times: ScheduleTimes): void;
  /** Scheduled times that passed without a backup, counted once: when the time that collapses them is taken. */
  skipped(labels: L, reason: SkipReason, count: number): void;
  /** The schedule is gone, or its labels changed: its time series go (a counter keeps its count). */
  forget(labels: L): void;
}

const seconds = (time: string | undefined): number | undefined => {
  const t = time === undefined ? NaN : Date.parse(time);
  return Number.isFinite(t) ? t / 1000 : undefined;
};

/** The times a status reports, in seconds, for the gauges. */
export function scheduleTimes(status: BackupScheduleStatus): ScheduleTimes {
  const last = seconds(status.lastScheduleTime);
  const success = seconds(status.lastSuccessfulTime);
  const next = seconds(status.nextScheduleTime);
  return { ...(last !== undefined ? { lastScheduleTime: last } : {}), ...(success !== undefined ? { lastSuccessfulTime: success } : {}), ...(next !== undefined ? { nextScheduleTime: next } : {}) };
}

/**
 * At most this many times are walked between two backups: a minutely schedule suspended for 69 days. A longer
 * gap is counted as this many; walking it all would hold up the reconcile for seconds.
 */
export const MAX_COUNTED_TIMES = 100_000;

/**
 * The scheduled times a new backup at `scheduledAt` leaves behind for good, by reason: those after the newest
 * time already taken (or from the schedule's creation) and before `scheduledAt`. Counting them at that moment,
 * and only when the backup was created (not on AlreadyExists), counts each time once, from the backups' own
 * times, with nothing to remember across restarts. `wasSuspended`: the status before this reconcile said
 * Suspended, so the times that were not Forbid skips passed while it was suspended.
 */
export function skippedTimes(o: ScheduleObserved, scheduledAt: number, wasSuspended: boolean): Partial<Record<SkipReason, number>> {
  const parsed = parseSchedule(o.schedule, o.hashSeed);
  if (!parsed.ok) return {};
  const taken = [...(o.lastScheduleTime !== undefined ? [o.lastScheduleTime] : []), ...o.backups.map((b) => b.scheduledAt)];
  // The first time that counts: after the newest one taken, or the schedule's creation (no time before it is ever taken).
  const from = taken.length > 0 ? Math.max(...taken) : o.createdAt - 1;
  const counts: Partial<Record<SkipReason, number>> = {};
  if (!(from < scheduledAt)) return counts;
  let times: ReturnType<typeof CronExpressionParser.parse>;
  try {
    times = CronExpressionParser.parse(parsed.expression.stringify(true), { tz: 'UTC', currentDate: new Date(from) });
  } catch {
    return counts;
  }
  for (let walked = 0; walked < MAX_COUNTED_TIMES && times.hasNext(); walked++) {
    const t = times.next().getTime();
    if (t >= scheduledAt) break;
    if (t < o.createdAt) continue;
    const reason: SkipReason = skippedByForbid(t, o.backups) ? 'Forbid' : wasSuspended ? 'Suspended' : 'Missed';
    counts[reason] = (counts[reason] ?? 0) + 1;
  }
  return counts;
}
