// A Job at the name an operator's own Job must have (names are predictable) that the operator's object does not
// control: its pods' results are not the object's, and it is not the operator's to delete. The object waits,
// saying whose it is, until it is gone or the bound passes, then fails; created again, the object gets another
// Job name (the names carry its UID).

/** A Job in the way of an object's own: its name, who controls it, and since when it is in the way (ms). */
export interface ForeignJob {
  name: string;
  /** `kind name` of its controller, or undefined when it has none. */
  controller?: string;
  since: number;
}

/** How long an object waits for a Job in the way of its own to go before it fails. */
export const JOB_NAME_TAKEN_BOUND_MS = 5 * 60_000;

export type JobNameTaken =
  | { type: 'wait'; reason: 'JobNameTaken'; message: string; requeueAfterMs: number }
  | { type: 'fail'; reason: 'JobNameTaken'; message: string };

/** What `kind` (e.g. `EtcdBackup`) does about `job` at `now`: wait and say whose it is, or fail past the bound. */
export function jobNameTaken(job: ForeignJob, now: number, kind: string): JobNameTaken {
  const whose = job.controller ? `it is controlled by ${job.controller}, not by this ${kind}` : `it has no controller (it was not made for this ${kind})`;
  const waited = now - job.since;
  const message = `Job ${job.name} is in the way of this backup's Job: ${whose}; the operator never reads, adopts or deletes it`;
  if (waited >= JOB_NAME_TAKEN_BOUND_MS) return { type: 'fail', reason: 'JobNameTaken', message: `${message} (waited ${Math.round(waited / 1000)} s). Create the ${kind} again: a new one gets another Job name` };
  return { type: 'wait', reason: 'JobNameTaken', message: `${message}; waiting up to ${JOB_NAME_TAKEN_BOUND_MS / 60_000} min for it to be deleted`, requeueAfterMs: 15_000 };
}
