// Cron schedules as the operators read them (backup schedules, etcd's defragmentation schedule): cron-parser in
// UTC, five fields, `H` seeded by the object's namespace and name. A leaf: the APIs' defaulting, the webhooks,
// the schedule and cluster reconcilers and the metrics all parse with it.
import { CronExpressionParser, type CronExpression } from 'cron-parser';

export type ParsedSchedule = { ok: true; expression: CronExpression } | { ok: false; message: string };

/**
 * The seed of a schedule's `H` fields: its namespace and name. Whether a schedule parses can depend on it
 * (`0 0 H 2 *` never fires when H lands on the 30th), so the admission webhook parses with the same one.
 */
export function scheduleHashSeed(namespace: string, name: string): string {
  return `${namespace}/${name}`;
}

/** Parses a schedule with cron-parser, in UTC; the parser's own message when it does not parse. */
export function parseSchedule(schedule: string, hashSeed: string): ParsedSchedule {
  let expression: CronExpression;
  try {
    expression = CronExpressionParser.parse(schedule, { tz: 'UTC', hashSeed });
    // A schedule that never fires (e.g. `0 0 30 2 *`) parses, but has no next time.
    expression.next();
  } catch (err) {
    return { ok: false, message: `spec.schedule ${JSON.stringify(schedule)} is not a valid cron expression: ${err instanceof Error ? err.message : String(err)}` };
  }
  const seconds = expression.fields.second.values;
  if (seconds.length !== 1) {
    return { ok: false, message: `spec.schedule ${JSON.stringify(schedule)} fires more than once a minute: use five fields (minute hour day-of-month month day-of-week)` };
  }
  return { ok: true, expression };
}

/** The latest scheduled time at or before `now` (ms), if any. */
export function latestTime(expression: CronExpression, now: number): number | undefined {
  try {
    return CronExpressionParser.parse(expression.stringify(true), { tz: 'UTC', currentDate: new Date(now + 1) }).prev().getTime();
  } catch {
    return undefined;
  }
}

/** The first scheduled time after `now` (ms), if any. */
export function nextTime(expression: CronExpression, now: number): number | undefined {
  try {
    return CronExpressionParser.parse(expression.stringify(true), { tz: 'UTC', currentDate: new Date(now) }).next().getTime();
  } catch {
    return undefined;
  }
}

/**
 * A schedule's interval now (ms): from its latest scheduled time at or before `now` to the next one (a weekday
 * schedule's is three days over a weekend); from the next time to the one after it before the first time.
 */
export function scheduleInterval(expression: CronExpression, now: number): number | undefined {
  const next = nextTime(expression, now);
  if (next === undefined) return undefined;
  const start = latestTime(expression, now) ?? next;
  const end = start === next ? nextTime(expression, next) : next;
  return end !== undefined && end > start ? end - start : undefined;
}
