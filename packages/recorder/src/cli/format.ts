// What `quorum history` prints: kubectl-like tables, and the lines that say what a record is.
import { describeObject } from '../history/handlers.ts';
import type { DeniedScope, ObjectId, ObjectsResponse, RecordDetail, RecordsResponse, RecordSummary } from '../history/protocol.ts';
import { groupKindName } from '../recorder/discovery.ts';

/** Columns padded to their widest cell, two spaces apart, as kubectl prints. */
export function table(rows: readonly (readonly string[])[]): string {
  const widths: number[] = [];
  for (const row of rows) row.forEach((cell, i) => (widths[i] = Math.max(widths[i] ?? 0, cell.length)));
  return rows.map((row) => row.map((cell, i) => (i === row.length - 1 ? cell : cell.padEnd(widths[i]!))).join('  ').trimEnd()).join('\n') + '\n';
}

/** `2026-03-01T12:00:05.123Z` → `2026-03-01T12:00:05Z`. */
function time(iso: string | undefined): string {
  return iso ? iso.replace(/\.\d+Z$/, 'Z') : '';
}

const isDeletion = (r: RecordSummary): boolean => r.reason === 'Deleted' || r.reason === 'DeletedWhileNotWatching';

/** The field manager and its operation, e.g. `kubectl-edit (Update)`. */
function author(r: RecordSummary): string {
  const by = r.changedBy;
  if (!by?.manager) return isDeletion(r) && by?.user === undefined ? '(deletion: see the audit log)' : '';
  return `${by.manager}${by.operation ? ` (${by.operation}${by.subresource ? ` ${by.subresource}` : ''})` : ''}`;
}

/** Whether the record says anything about the user: only records of ChangeRecorders that ask for users do. */
const tellsUser = (r: RecordSummary): boolean => r.changedBy?.user !== undefined || r.changedBy?.userUnknown !== undefined;

/** The user the API server named, or why it is not known, e.g. `unknown (NotSeen)`. */
function user(r: RecordSummary): string {
  if (r.changedBy?.user !== undefined) return r.changedBy.user;
  return r.changedBy?.userUnknown ? `unknown (${r.changedBy.userUnknown})` : '';
}

export function objectsTable(response: ObjectsResponse): string {
  const stores = new Set(response.objects.map((o) => o.store));
  const withStore = stores.size > 1;
  const rows: string[][] = [['NAMESPACE', 'KIND', 'NAME', 'RECORDS', 'NEWEST', 'REASON', 'STATE', ...(withStore ? ['RECORDER'] : [])]];
  for (const o of response.objects) {
    rows.push([o.namespace || '(cluster)', groupKindName(o), o.name, String(o.records), time(o.newest?.recordedAt), o.newest?.reason ?? '', o.live ? 'live' : 'deleted', ...(withStore ? [o.store] : [])]);
  }
  return table(rows);
}

export function recordsTable(response: RecordsResponse): string {
  const withStore = new Set(response.records.map((r) => r.store)).size > 1;
  const withUser = response.records.some(tellsUser);
  const rows: string[][] = [['RECORD', 'RECORDED', 'REASON', 'CHANGED BY', ...(withUser ? ['USER'] : []), 'CHANGED AT', ...(withStore ? ['RECORDER'] : [])]];
  for (const r of response.records) rows.push([r.id, time(r.recordedAt), r.reason, author(r), ...(withUser ? [user(r)] : []), time(r.changedAt), ...(withStore ? [r.store] : [])]);
  return table(rows);
}

/** `ConfigMap default/app: live, last seen at resourceVersion 4712 (…)`, or deleted. */
export function objectState(response: RecordsResponse): string {
  const name = describeObject(response.object);
  if (response.lastSeen.length === 0) return `${name}: deleted (as the recorder last saw it); ${response.records.length} record(s)`;
  const seen = response.lastSeen.map((s) => `resourceVersion ${s.resourceVersion} at ${time(s.seenAt)}${response.lastSeen.length > 1 ? ` (${s.store})` : ''}`).join(', ');
  return `${name}: live, last seen at ${seen}; ${response.records.length} record(s)`;
}

export function deniedLines(denied: readonly DeniedScope[]): string {
  return denied.map((d) => `not shown: records of ${groupKindName(d)}${d.namespace ? ` in namespace ${d.namespace}` : ''}: ${d.reason}\n`).join('');
}

/** What a record is, in one line: why it was taken, when, and who made the change it precedes. */
export function recordLine(object: ObjectId, r: RecordDetail | RecordSummary): string {
  const manager = r.changedBy?.manager ? author(r) : '';
  const what =
    r.reason === 'Updated'
      ? `the version before a change${manager ? ` by ${manager}` : ''}${r.changedAt ? ` at ${time(r.changedAt)}` : ''}`
      : r.reason === 'ChangedWhileNotWatching'
        ? `the last version seen before changes made while the recorder was not watching${manager ? ` (last by ${manager})` : ''}`
        : r.reason === 'Deleted'
          ? 'the last state before its deletion'
          : 'the last state seen before a deletion made while the recorder was not watching';
  return `${describeObject(object)}, record ${r.id} (${r.reason}, recorded ${time(r.recordedAt)}, resourceVersion ${r.resourceVersion}): ${what}${tellsUser(r) ? `; user ${user(r)}` : ''}`;
}
