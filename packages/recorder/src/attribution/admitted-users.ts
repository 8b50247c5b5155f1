// Who made a change, as the API server says it: the only place it does (besides audit logs) is admission,
// where every request carries the authenticated user. The recorder's validating webhook (webhook.ts) hands
// each UPDATE and DELETE it is sent to AdmittedUsers, which remembers the user under the object's uid and the
// resourceVersion of the version the request started from (request.oldObject). That version is exactly what
// a record holds: the version before a modification, or the last state before a deletion. So when the
// watch later delivers the change, the session asks for (uid, resourceVersion of the recorded version).
//
// What is remembered is only the identity, in memory, for a bounded time and number of entries: the watch
// event follows the admission by milliseconds to seconds, and a user the recorder cannot find is recorded as
// unknown, never guessed. Two different users admitted from the same version (two writers racing, one of which
// lost; or a write another admission step refused after ours allowed it) cannot be told apart: ambiguous.
import type { AdmissionRequest, ValidationResult } from '@quorum/runtime';

/** The operations whose user a record can name: a modification, or a deletion. */
export type AdmittedOperation = 'UPDATE' | 'DELETE';

/** The user the API server authenticated for a request (admission's userInfo, without uid and extra). */
export interface AdmittedUser {
  username: string;
  groups?: string[];
}

/**
 * What is known about who changed a version: the user, or why it is not known. NotSeen: no request from that
 * version reached the webhook (it is not installed or was not called, the recorder was down or restarted since,
 * or the entry expired). Ambiguous: requests by different users were admitted from that version.
 */
export type UserLookup = { user: AdmittedUser } | { unknown: 'NotSeen' | 'Ambiguous' };

/** Where a session looks users up: AdmittedUsers, or a fake in tests. */
export interface UserSource {
  lookup(uid: string, resourceVersion: string, operation: AdmittedOperation): UserLookup;
}

export interface AdmittedUsersOptions {
  /** How long an admitted request is remembered. Default DEFAULT_USER_TTL_MS. */
  ttlMs?: number;
  /** At most this many versions are remembered; the oldest go first. Default DEFAULT_MAX_USER_ENTRIES. */
  maxEntries?: number;
  now?: () => number;
}

/**
 * Long enough for a watch that lags or restarts to deliver the change (it is looked up when the event arrives,
 * not when the record is written, so a slow store does not count), short enough to stay small.
 */
export const DEFAULT_USER_TTL_MS = 10 * 60_000;
/** About 300 bytes each: some 15 MiB at the bound, reached only at over 80 changes per second for the TTL. */
export const DEFAULT_MAX_USER_ENTRIES = 50_000;
/** Distinct users kept per version: one is the rule, two already make it ambiguous. */
const MAX_USERS_PER_VERSION = 4;

interface Admitted extends AdmittedUser {
  operation: AdmittedOperation;
}

interface Entry {
  at: number;
  admitted: Admitted[];
}

export class AdmittedUsers implements UserSource {
  readonly #ttlMs: number;
  readonly #maxEntries: number;
  readonly #now: () => number;
  /** By `uid/resourceVersion`, in the order of their last admission (re-inserted on each), so the oldest is first. */
  readonly #entries = new Map<string, Entry>();

  constructor(options: AdmittedUsersOptions = {}) {
    this.#ttlMs = options.ttlMs ?? DEFAULT_USER_TTL_MS;
    this.#maxEntries = options.maxEntries ?? DEFAULT_MAX_USER_ENTRIES;
    this.#now = options.now ?? Date.now;
  }

  /** Versions remembered now (expired ones may still be counted until the next admission). */
  get size(): number {
    return this.#entries.size;
  }

  /**
   * The validating webhook's handler: remembers the request's user and always allows it. It never throws: an
   * exception would be answered as a denial, and the recorder must never refuse anyone's write.
   */
  readonly review = (request: AdmissionRequest<unknown>): ValidationResult => {
    try {
      this.admit(request);
    } catch {
      // A request the recorder cannot read is one whose user it will not know: the record says so.
    }
    return { allowed: true };
  };

  /** Remembers the user of an UPDATE or DELETE of a whole object; dry runs and anything else are ignored. */
  admit(request: AdmissionRequest<unknown>): void {
    // Dry runs change nothing, so there is no change to attribute (the webhook is sideEffects NoneOnDryRun).
    if (request.dryRun === true) return;
    if (request.operation !== 'UPDATE' && request.operation !== 'DELETE') return;
    // A subresource write (status, scale) is not what a record of the object's own change came from.
    if (request.subResource) return;
    const { uid, resourceVersion } = versionOf(request.oldObject);
    const username = request.userInfo?.username;
    if (!uid || !resourceVersion || typeof username !== 'string' || username === '') return;
    const groups = Array.isArray(request.userInfo.groups) ? request.userInfo.groups.filter((g): g is string => typeof g === 'string') : undefined;
    const admitted: Admitted = { operation: request.operation, username, ...(groups && groups.length > 0 ? { groups } : {}) };

    const now = this.#now();
    this.#expire(now);
    const key = keyOf(uid, resourceVersion);
    const entry = this.#entries.get(key) ?? { at: now, admitted: [] };
    this.#entries.delete(key);
    if (!entry.admitted.some((a) => sameAdmission(a, admitted)) && entry.admitted.length < MAX_USERS_PER_VERSION) entry.admitted.push(admitted);
    entry.at = now;
    this.#entries.set(key, entry);
    while (this.#entries.size > this.#maxEntries) this.#entries.delete(this.#entries.keys().next().value!);
  }

  lookup(uid: string, resourceVersion: string, operation: AdmittedOperation): UserLookup {
    const entry = this.#entries.get(keyOf(uid, resourceVersion));
    if (!entry || this.#now() - entry.at > this.#ttlMs) return { unknown: 'NotSeen' };
    // An UPDATE and a DELETE from the same version race too; the record's own kind says which one won.
    const candidates = entry.admitted.filter((a) => a.operation === operation);
    if (candidates.length === 0) return { unknown: 'NotSeen' };
    if (candidates.length > 1) return { unknown: 'Ambiguous' };
    const { operation: _operation, ...user } = candidates[0]!;
    return { user };
  }

  #expire(now: number): void {
    for (const [key, entry] of this.#entries) {
      if (now - entry.at <= this.#ttlMs) return;
      this.#entries.delete(key);
    }
  }
}

function keyOf(uid: string, resourceVersion: string): string {
  return `${uid}/${resourceVersion}`;
}

function versionOf(object: unknown): { uid?: string; resourceVersion?: string } {
  if (typeof object !== 'object' || object === null) return {};
  const metadata = (object as { metadata?: unknown }).metadata;
  if (typeof metadata !== 'object' || metadata === null) return {};
  const { uid, resourceVersion } = metadata as { uid?: unknown; resourceVersion?: unknown };
  return { ...(typeof uid === 'string' ? { uid } : {}), ...(typeof resourceVersion === 'string' ? { resourceVersion } : {}) };
}

function sameAdmission(a: Admitted, b: Admitted): boolean {
  return a.operation === b.operation && a.username === b.username && JSON.stringify([...(a.groups ?? [])].sort()) === JSON.stringify([...(b.groups ?? [])].sort());
}
