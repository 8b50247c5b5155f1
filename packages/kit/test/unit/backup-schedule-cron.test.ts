// A schedule's interval now, as the alerts on a schedule's backups compare its age with: from the latest scheduled
// time to the next, so a weekday schedule's is three days over a weekend and one day in the week.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { parseSchedule, scheduleInterval } from '../../src/backup-schedule-cron.ts';

const HOUR = 3_600_000;
const expression = (schedule: string) => {
  const parsed = parseSchedule(schedule, 'ns/s');
  assert.ok(parsed.ok);
  return parsed.expression;
};

test('the interval is from the latest scheduled time to the next: an hour for an hourly schedule, 3 days over a weekend for a weekday one', () => {
  assert.equal(scheduleInterval(expression('0 * * * *'), Date.parse('2026-11-25T10:30:00Z')), HOUR);
  const weekdays = expression('0 2 * * 1-5');
  // Saturday 2026-11-28: from Friday 02:00 to Monday 02:00.
  assert.equal(scheduleInterval(weekdays, Date.parse('2026-11-28T12:00:00Z')), 72 * HOUR);
  // Wednesday: from Wednesday 02:00 to Thursday 02:00.
  assert.equal(scheduleInterval(weekdays, Date.parse('2026-11-25T12:00:00Z')), 24 * HOUR);
  // At a scheduled time itself: that time is the latest.
  assert.equal(scheduleInterval(expression('*/15 * * * *'), Date.parse('2026-11-25T10:30:00Z')), HOUR / 4);
});
