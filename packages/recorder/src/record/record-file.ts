// The record file: the recorded version as plain YAML, so `kubectl apply -f <record>` re-applies it as it is,
// under a block of YAML comments that says what the record is (why it was taken, when, by whom the version
// was replaced, and the diff). The block is itself YAML, commented out line by line; it is read back by
// stripping the comment marks.
//
// The same format holds an object's last-seen copy, with a shorter header: it is what the recorder compares
// the live object with at start, to find changes it did not see.
import { parse, stringify } from 'yaml';
import type { CleanSettings, Json } from './clean.ts';

export const RECORD_REASONS = ['Updated', 'Deleted', 'ChangedWhileNotWatching', 'DeletedWhileNotWatching'] as const;
export type RecordReason = (typeof RECORD_REASONS)[number];

/**
 * Why a record does not name the user although its ChangeRecorder asks for users (spec.attribution.users).
 * NotSeen: the recorder's admission webhook saw no request from the recorded version (it is not installed or
 * was not called, the recorder was down or restarted since, or the change was seen after the entry expired).
 * Ambiguous: different users' requests were admitted from that version, and only one was written.
 * SeenLate: the change was found at start; which requests made it is unknown. NoWebhook: the recorder runs
 * without its admission webhook.
 */
export const USER_UNKNOWN_REASONS = ['NotSeen', 'Ambiguous', 'SeenLate', 'NoWebhook'] as const;
export type UserUnknownReason = (typeof USER_UNKNOWN_REASONS)[number];

/** Who a record names for the change: the user the API server authenticated, or why it is not known. */
export type UserAttribution = { user: string; groups?: string[] } | { userUnknown: UserUnknownReason };

/**
 * Who made the change: the field manager and its operation from the replacing version's managedFields (absent
 * on deletions, which leave no entry), and, when the ChangeRecorder asks for users, the user or why not.
 */
export interface ChangedBy {
  manager?: string;
  operation?: string;
  subresource?: string;
  user?: string;
  groups?: string[];
  userUnknown?: UserUnknownReason;
}

/** What a record says about itself. */
export interface RecordMeta {
  /**
   * Updated: this version was replaced by a change the recorder saw. Deleted: this was the last state before
   * a deletion it saw. ChangedWhileNotWatching, DeletedWhileNotWatching: the same, found at start by comparing
   * the live objects with the last-seen copies (the change happened while no recorder watched).
   */
  reason: RecordReason;
  /** True for changes found at start: when exactly they happened, and through how many steps, is unknown. */
  seenLate: boolean;
  /** When the recorder wrote the record (RFC 3339, milliseconds). */
  recordedAt: string;
  /** resourceVersion of the recorded version (also in the file name; cleaning removed it from the object). */
  resourceVersion: string;
  /** resourceVersion of the version that replaced it (for changes). */
  replacedBy?: string;
  /** Who made the change: the field manager when the replacing version's managedFields name one, and the user when asked for. */
  changedBy?: ChangedBy;
  /** When the change was made, from the same managedFields entry. */
  changedAt?: string;
  /** How the recorded version was cleaned. */
  cleaning: CleanSettings;
  /** Unified diff from the recorded version to the version that replaced it; absent for deletions. */
  diff?: string;
  /** Why `diff` is absent although the version was replaced (too large to compute). */
  diffOmitted?: string;
}

/** What a last-seen copy says about itself. */
export interface LastSeenMeta {
  /** When the recorder saw this version. */
  seenAt: string;
  resourceVersion: string;
  cleaning: CleanSettings;
}

const RECORD_MARK = '# history.quorum.dev record: the version below, cleaned to be re-applied; what follows describes it.';
const LAST_SEEN_MARK = '# history.quorum.dev last-seen copy: the version the recorder saw last.';

export function formatRecord(meta: RecordMeta, object: Json): string {
  return format(RECORD_MARK, meta, object);
}

export function formatLastSeen(meta: LastSeenMeta, object: Json): string {
  return format(LAST_SEEN_MARK, meta, object);
}

/** The object alone, as a record holds it: what diffs are computed between. */
export function objectYAML(object: Json): string {
  return stringify(object, { lineWidth: 0 });
}

function format(mark: string, meta: object, object: Json): string {
  const header = stringify(meta, { lineWidth: 0 })
    .replace(/\n$/, '')
    .split('\n')
    .map((line) => (line === '' ? '#' : `# ${line}`));
  return `${[mark, ...header].join('\n')}\n${objectYAML(object)}`;
}

export interface ParsedFile<M> {
  meta: M;
  object: Json;
}

export function parseRecord(text: string, file: string): ParsedFile<RecordMeta> {
  return parseFile<RecordMeta>(text, RECORD_MARK, file);
}

export function parseLastSeen(text: string, file: string): ParsedFile<LastSeenMeta> {
  return parseFile<LastSeenMeta>(text, LAST_SEEN_MARK, file);
}

/** What a record says about itself, without parsing the recorded object (listings read many records). */
export function parseRecordMeta(text: string, file: string): RecordMeta {
  return parseHeader<RecordMeta>(text.split('\n'), RECORD_MARK, file).meta;
}

function parseHeader<M>(lines: string[], mark: string, file: string): { meta: M; end: number } {
  if (lines[0] !== mark) throw new Error(`${file}: not a ${mark === RECORD_MARK ? 'record' : 'last-seen copy'} (its first line is not the header mark)`);
  let end = 1;
  while (end < lines.length && lines[end]!.startsWith('#')) end++;
  const header = lines.slice(1, end).map((line) => (line.startsWith('# ') ? line.slice(2) : line.slice(1)));
  return { meta: parse(header.join('\n')) as M, end };
}

function parseFile<M>(text: string, mark: string, file: string): ParsedFile<M> {
  const lines = text.split('\n');
  const { meta, end } = parseHeader<M>(lines, mark, file);
  const object = parse(lines.slice(end).join('\n')) as unknown;
  if (typeof object !== 'object' || object === null || Array.isArray(object)) throw new Error(`${file}: the recorded object is not a YAML mapping`);
  return { meta, object: object as Json };
}

// ---- file names: <timestamp>-<resourceVersion>.yaml, oldest first in name order ----

const RECORD_FILE = /^(\d{8}T\d{6}\.\d{3}Z)-([A-Za-z0-9]+)\.yaml$/;

/** `2026-03-01T12:00:05.123Z` and resourceVersion 4711 → `20260301T120005.123Z-4711.yaml`. */
export function recordFileName(recordedAt: string, resourceVersion: string): string {
  const stamp = new Date(recordedAt).toISOString().replaceAll('-', '').replaceAll(':', '');
  // resourceVersions are opaque strings to clients; in practice digits. Anything else is kept file-name safe.
  const version = resourceVersion.replace(/[^A-Za-z0-9]/g, '') || '0';
  return `${stamp}-${version}.yaml`;
}

export function isRecordFileName(name: string): boolean {
  return RECORD_FILE.test(name);
}

/** When a record was written, from its file name (ms since the epoch). */
export function recordTime(name: string): number {
  const match = RECORD_FILE.exec(name);
  if (!match) throw new Error(`${name} is not a record file name`);
  const s = match[1]!;
  return Date.parse(`${s.slice(0, 4)}-${s.slice(4, 6)}-${s.slice(6, 8)}T${s.slice(9, 11)}:${s.slice(11, 13)}:${s.slice(13)}`);
}
