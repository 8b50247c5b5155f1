// Retention: which of an object's records go. Records are named by the time they were written, so their
// names, sorted, are oldest first, and their ages need no file to be read.
import { recordTime } from './record-file.ts';

export interface RetentionPolicy {
  /** Records kept per object: the newest ones. */
  maxVersionsPerObject: number;
  /** Records older than this go, whatever their number; no limit when undefined. */
  maxAgeMs?: number;
}

/** The record names (sorted oldest first) that the policy removes at `now`. */
export function recordsToRemove(names: readonly string[], policy: RetentionPolicy, now: number): string[] {
  const excess = Math.max(0, names.length - policy.maxVersionsPerObject);
  return names.filter((name, i) => i < excess || (policy.maxAgeMs !== undefined && now - recordTime(name) > policy.maxAgeMs));
}

/** When the oldest of these records passes maxAge (ms since the epoch), or undefined when none will. */
export function nextExpiry(oldest: string | undefined, policy: RetentionPolicy): number | undefined {
  if (oldest === undefined || policy.maxAgeMs === undefined) return undefined;
  return recordTime(oldest) + policy.maxAgeMs;
}
