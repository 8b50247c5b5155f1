// Which waiting file starts next: a pure choice from what is waiting, what runs and how many slots there are.
// Files that run alone (faults, quiet) go after all others, one at a time. Among the others the waiting
// queue is in priority order; a file that cannot start yet because a running file holds a lock reserves its
// locks, so files behind it cannot keep taking them (a file waiting for `operator` alone is not starved by a stream of files
// that share it).

export interface Job {
  file: string;
  exclusive: readonly string[];
  shared: readonly string[];
  alone: boolean;
  /** The file's duration in an earlier run, if known: longer first, so the run ends sooner. */
  expectedMs: number;
}

function overlaps(a: readonly string[], b: readonly string[]): boolean {
  return a.some((name) => b.includes(name));
}

/** Two files cannot run at the same time when one holds alone what the other holds or uses. */
export function conflict(a: Pick<Job, 'exclusive' | 'shared'>, b: Pick<Job, 'exclusive' | 'shared'>): boolean {
  return overlaps(a.exclusive, [...b.exclusive, ...b.shared]) || overlaps(b.exclusive, a.shared);
}

/**
 * Priority order for `jobs`: the heaviest chains first. A file's weight is its expected duration plus that of
 * every file (of those that run together) it cannot run beside: the files holding `operator` alone weigh the
 * whole chain of the operator's users and go first; a user of the operator weighs itself and the holders it waits
 * for; three files holding `redis-operator` alone weigh their chain, and start early enough not to run one after
 * another at the end, when the other slots are empty. Ties (no durations known yet): the files that conflict with
 * the most others first, then the longest, then by name.
 */
export function inPriorityOrder<T extends Job>(jobs: readonly T[]): T[] {
  const together = jobs.filter((j) => !j.alone);
  const conflicting = new Map(jobs.map((j) => [j, jobs.filter((other) => other !== j && conflict(j, other))]));
  const weight = new Map(jobs.map((j) => [j, j.expectedMs + conflicting.get(j)!.filter((o) => together.includes(o)).reduce((sum, o) => sum + o.expectedMs, 0)]));
  const conflicts = (j: T): number => conflicting.get(j)!.length;
  return [...jobs].sort((a, b) => weight.get(b)! - weight.get(a)! || conflicts(b) - conflicts(a) || b.expectedMs - a.expectedMs || a.file.localeCompare(b.file));
}

/** A running file: how long it is still expected to run (from its duration in an earlier run; 0 when unknown or overdue). */
export interface RunningJob extends Job {
  remainingMs?: number;
}

/**
 * A file may run ahead of a reservation when it is expected to end before the reserving file could start:
 * half again its known duration (files run slower beside others than in the baseline) within the time the
 * running files the reserving one waits for still need (a lower bound of its wait). This is backfilling: a
 * short file fills the slot instead of leaving it empty, and the reserving file is not delayed.
 */
const BACKFILL_MARGIN = 1.5;

/** The next file to start, or undefined when none may start now. `waiting` is in priority order. */
export function nextJob<T extends Job>(waiting: readonly T[], running: readonly RunningJob[], slots: number): T | undefined {
  if (running.length >= slots || running.some((j) => j.alone)) return undefined;
  const together = waiting.filter((j) => !j.alone);
  if (together.length === 0) return running.length === 0 ? waiting[0] : undefined;
  const reserved: { job: Job; startsInMs: number }[] = [];
  for (const job of together) {
    const waitsFor = running.filter((r) => conflict(job, r));
    const blockedBy = reserved.filter((r) => conflict(job, r.job));
    const endsBeforeReserved = job.expectedMs > 0 && blockedBy.every((r) => job.expectedMs * BACKFILL_MARGIN <= r.startsInMs);
    if (waitsFor.length === 0 && (blockedBy.length === 0 || endsBeforeReserved)) return job;
    // Only a file that waits for a running one reserves its locks: one held back by a reservation alone would
    // otherwise pass its hold on (a file sharing `addons/s3` behind a reserved `addons/s3` kept its own
    // `redis-operator` from the other Redis files, which then ran one after another at the end).
    if (waitsFor.length > 0) reserved.push({ job, startsInMs: Math.max(...waitsFor.map((r) => r.remainingMs ?? 0)) });
  }
  return undefined;
}
