// A Job at the name an operator's own Job must have (names are predictable) that the operator's object does not
// control: its pods' results are not the object's, and it is not the operator's to delete. The object waits,
// saying whose it is, until it is gone or the bound passes, then fails; created again, the object gets another
// Job name (the names carry its UID).
import { getControllerOf, type Job } from '@quorum/runtime';

/** A Job in the way of an object's own: its name, who controls it, and since when it is in the way (ms). */
export interface ForeignJob {
  name: string;
  /** `kind name` of its controller, or undefined when it has none. */
  controller?: string;
  since: number;
}

/** How long an object waits for a Job in the way of its own to go before it fails. */
export const JOB_NAME_TAKEN_BOUND_MS = 5 * 60_000;
/** How often an object waiting for a Job in the way looks again: its deletion wakes nothing (the object does not own it). */
export const JOB_NAME_TAKEN_RECHECK_MS = 15_000;

export type JobNameTaken =
  | { type: 'wait'; reason: 'JobNameTaken'; message: string; requeueAfterMs: number }
  | { type: 'fail'; reason: 'JobNameTaken'; message: string };

export interface JobNameTakenWording {
  /** Whose Job the found one is in the way of; default `this backup's Job`. */
  ownJob?: string;
  /** What to do once the wait failed; default: create the object again. */
  remedy?: string;
}

/** What `kind` (e.g. `EtcdBackup`) does about `job` at `now`: wait and say whose it is, or fail past the bound. */
export function jobNameTaken(job: ForeignJob, now: number, kind: string, wording: JobNameTakenWording = {}): JobNameTaken {
  const whose = job.controller ? `it is controlled by ${job.controller}, not by this ${kind}` : `it has no controller (it was not made for this ${kind})`;
  const waited = now - job.since;
  const message = `Job ${job.name} is in the way of ${wording.ownJob ?? "this backup's Job"}: ${whose}; the operator never reads, adopts or deletes it`;
  const remedy = wording.remedy ?? `Create the ${kind} again: a new one gets another Job name`;
  if (waited >= JOB_NAME_TAKEN_BOUND_MS) return { type: 'fail', reason: 'JobNameTaken', message: `${message} (waited ${Math.round(waited / 1000)} s). ${remedy}` };
  return { type: 'wait', reason: 'JobNameTaken', message: `${message}; waiting up to ${JOB_NAME_TAKEN_BOUND_MS / 60_000} min for it to be deleted`, requeueAfterMs: JOB_NAME_TAKEN_RECHECK_MS };
}

/**
 * A Job in the way, as a planner sees it: in the way since it was created (kept across operator restarts), or since
 * `notBefore` when that is later (e.g. the start of the attempt it blocks), never after `now`.
 */
export function foreignJobOf(job: Job, now: number, notBefore = -Infinity): ForeignJob {
  const controller = getControllerOf(job);
  const created = Date.parse(job.metadata.creationTimestamp ?? '');
  const since = Math.min(now, Math.max(notBefore, Number.isFinite(created) ? created : now));
  return { name: job.metadata.name ?? '', ...(controller ? { controller: `${controller.kind} ${controller.name}` } : {}), since };
}
