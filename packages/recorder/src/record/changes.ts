// From what the recorder observes to what it writes. Each function is pure: it is given the versions and the
// time, and returns the record to write (or none, when nothing worth recording changed).
//
// A record holds the version before a change (or the last state before a deletion), with the diff to the
// version that replaced it, who made that change and when. An object's last-seen copy holds the newest
// version the recorder knows: what it compares the live object with after a time of not watching.
import type { KubeObject } from '@quorum/runtime';
import { lastChange } from './author.ts';
import { cleanObject, sameVersion, type CleanSettings, type Json } from './clean.ts';
import { MAX_DIFF_EDIT_LENGTH, unifiedDiff } from './diff.ts';
import { objectYAML, type LastSeenMeta, type ParsedFile, type RecordMeta, type UserAttribution } from './record-file.ts';

/** How the recorder cleans what it writes now, and the key of its Secret hashes. */
export interface CleaningContext {
  settings: CleanSettings;
  redactionKey: Uint8Array;
}

export interface NewRecord {
  meta: RecordMeta;
  object: Json;
}

export interface NewLastSeen {
  meta: LastSeenMeta;
  object: Json;
}

const rv = (obj: KubeObject): string => obj.metadata.resourceVersion ?? '';

/** The last-seen copy of `obj`. */
export function lastSeenOf(obj: KubeObject, context: CleaningContext, now: Date): NewLastSeen {
  return { meta: { seenAt: now.toISOString(), resourceVersion: rv(obj), cleaning: context.settings }, object: cleanObject(obj, context.settings, context.redactionKey) };
}

/**
 * The record of a change seen as it happened; none when the cleaned versions are equal (churn). `user` is who
 * the admission webhook says made it, when the ChangeRecorder asks for users (absent otherwise).
 */
export function recordOfUpdate(before: KubeObject, after: KubeObject, context: CleaningContext, now: Date, user?: UserAttribution): NewRecord | undefined {
  const old = cleanObject(before, context.settings, context.redactionKey);
  const current = cleanObject(after, context.settings, context.redactionKey);
  if (sameVersion(old, current)) return undefined;
  return changeRecord('Updated', false, old, rv(before), current, after, context.settings, now, before, user);
}

/** The record of a deletion seen as it happened: the last state, and who deleted it when asked for. */
export function recordOfDeletion(last: KubeObject, context: CleaningContext, now: Date, user?: UserAttribution): NewRecord {
  const meta: RecordMeta = { reason: 'Deleted', seenLate: false, recordedAt: now.toISOString(), resourceVersion: rv(last), cleaning: context.settings };
  if (user) meta.changedBy = { ...user };
  return { meta, object: cleanObject(last, context.settings, context.redactionKey) };
}

/**
 * The record of a change made while no recorder watched, found by comparing the live object with its
 * last-seen copy. The live object is cleaned as that copy was (the settings may have changed since), so a
 * new setting alone is not taken for a change. None when they are the same version.
 */
export function recordOfMissedChange(lastSeen: ParsedFile<LastSeenMeta>, live: KubeObject, context: CleaningContext, now: Date, user?: UserAttribution): NewRecord | undefined {
  const current = cleanObject(live, lastSeen.meta.cleaning, context.redactionKey);
  if (sameVersion(lastSeen.object, current)) return undefined;
  return changeRecord('ChangedWhileNotWatching', true, lastSeen.object, lastSeen.meta.resourceVersion, current, live, lastSeen.meta.cleaning, now, undefined, user);
}

/** The record of a deletion made while no recorder watched: the last-seen copy, which is the last state known. */
export function recordOfMissedDeletion(lastSeen: ParsedFile<LastSeenMeta>, now: Date, user?: UserAttribution): NewRecord {
  const meta: RecordMeta = {
    reason: 'DeletedWhileNotWatching',
    seenLate: true,
    recordedAt: now.toISOString(),
    resourceVersion: lastSeen.meta.resourceVersion,
    cleaning: lastSeen.meta.cleaning,
  };
  if (user) meta.changedBy = { ...user };
  return { meta, object: lastSeen.object };
}

/** Whether a last-seen copy must be rewritten for `live` even though no record is due (settings changed). */
export function lastSeenOutdated(lastSeen: ParsedFile<LastSeenMeta>, context: CleaningContext): boolean {
  const { status, secrets } = lastSeen.meta.cleaning;
  return status !== context.settings.status || secrets !== context.settings.secrets;
}

function changeRecord(
  reason: 'Updated' | 'ChangedWhileNotWatching',
  seenLate: boolean,
  old: Json,
  oldVersion: string,
  current: Json,
  after: KubeObject,
  cleaning: CleanSettings,
  now: Date,
  before?: KubeObject,
  user?: UserAttribution,
): NewRecord {
  const meta: RecordMeta = { reason, seenLate, recordedAt: now.toISOString(), resourceVersion: oldVersion, replacedBy: rv(after), cleaning };
  const author = lastChange(after, before);
  if (author) {
    const { time, ...who } = author;
    meta.changedBy = who;
    meta.changedAt = time;
  }
  // The field manager and the user come from different sources and are kept side by side, never merged.
  if (user) meta.changedBy = { ...meta.changedBy, ...user };
  const diff = unifiedDiff(objectYAML(old), objectYAML(current), `resourceVersion ${oldVersion}`, `resourceVersion ${rv(after)}`);
  if (diff === undefined) meta.diffOmitted = `more than ${MAX_DIFF_EDIT_LENGTH} changed lines`;
  else meta.diff = diff;
  return { meta, object: old };
}
