// Which waiting file starts next: a pure choice from what is waiting, what runs and how many slots there are.
// Files that run alone (faults, quiet) go after all others, one at a time. Among the others the waiting
// queue is in priority order; a file that cannot start yet because of a lock reserves that lock, so files
// behind it cannot keep taking it (a file waiting for `operator` alone is not starved by a stream of files
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
 * Priority order for `jobs`: the files that conflict with the most others first (those holding `operator`
 * alone run one after another and keep every user of the operator waiting: they are the chain that sets the
 * run's length, best run while the files that need no operator fill the other slots), then by expected
 * duration, longest first; the file name breaks ties.
 */
export function inPriorityOrder<T extends Job>(jobs: readonly T[]): T[] {
  const conflicts = new Map(jobs.map((j) => [j, jobs.filter((other) => other !== j && conflict(j, other)).length]));
  return [...jobs].sort((a, b) => conflicts.get(b)! - conflicts.get(a)! || b.expectedMs - a.expectedMs || a.file.localeCompare(b.file));
}

/** The next file to start, or undefined when none may start now. `waiting` is in priority order. */
export function nextJob<T extends Job>(waiting: readonly T[], running: readonly Job[], slots: number): T | undefined {
  if (running.length >= slots || running.some((j) => j.alone)) return undefined;
  const together = waiting.filter((j) => !j.alone);
  if (together.length === 0) return running.length === 0 ? waiting[0] : undefined;
  const reserved: Job[] = [];
  for (const job of together) {
    const blocked = running.some((r) => conflict(job, r)) || reserved.some((r) => conflict(job, r));
    if (!blocked) return job;
    reserved.push(job);
  }
  return undefined;
}
