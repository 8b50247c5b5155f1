// Which record a command means: the one named by --record (an ID or a unique prefix of one), or the default,
// which for restore depends on whether the object exists now. Pure functions of what the endpoint listed and
// what the API server says, so they are tested on their own.
import { describeObject } from '../history/handlers.ts';
import type { LastSeenSummary, ObjectId, RecordSummary } from '../history/protocol.ts';
import { CliError } from './errors.ts';

/** A record named by its ID, `<ID>.yaml`, or a prefix that only one record's ID starts with. */
export function findRecord(records: readonly RecordSummary[], wanted: string, object: ObjectId): RecordSummary {
  const id = wanted.endsWith('.yaml') ? wanted.slice(0, -'.yaml'.length) : wanted;
  const exact = records.filter((r) => r.id === id);
  const matches = exact.length > 0 ? exact : records.filter((r) => r.id.startsWith(id));
  const ids = [...new Set(matches.map((r) => r.id))];
  if (ids.length === 1) {
    if (matches.length > 1) {
      throw new CliError(`record ${ids[0]!} of ${describeObject(object)} is in several stores (${matches.map((r) => r.store).join(', ')}); choose one with --recorder`);
    }
    return matches[0]!;
  }
  if (ids.length > 1) throw new CliError(`${JSON.stringify(wanted)} names several records of ${describeObject(object)}: ${ids.join(', ')}`);
  const known = records.map((r) => r.id);
  throw new CliError(`${describeObject(object)} has no record ${id}${known.length ? ` (its records: ${known.join(', ')})` : ' (it has no records)'}`);
}

/** show and diff: --record, else the newest record. */
export function chooseRecord(records: readonly RecordSummary[], wanted: string | undefined, object: ObjectId): RecordSummary {
  if (wanted !== undefined) return findRecord(records, wanted, object);
  const newest = records.at(-1);
  if (!newest) throw new CliError(`${describeObject(object)} has no records yet`);
  return newest;
}

export interface RestoreChoice {
  record: RecordSummary;
  /** Said before restoring, when the choice deserves a word. */
  note?: string;
}

/**
 * restore: --record, else the last record before a deletion (the object is gone), or the previous version of
 * a live object. Both are the newest record: a deletion's record is the last state, and a change's record is
 * the version before it. An object that is gone while the recorder still holds it as alive has a deletion
 * that is not recorded yet: its newest record is then an older version, so no default is taken.
 */
export function chooseRestore(records: readonly RecordSummary[], lastSeen: readonly LastSeenSummary[], exists: boolean, wanted: string | undefined, object: ObjectId): RestoreChoice {
  if (wanted !== undefined) return { record: findRecord(records, wanted, object) };
  const newest = records.at(-1);
  if (exists) {
    if (!newest) throw new CliError(`${describeObject(object)} has no records: the recorder has seen no change of it, so there is no previous version to restore`);
    const deletion = newest.reason === 'Deleted' || newest.reason === 'DeletedWhileNotWatching';
    return deletion ? { record: newest, note: `${describeObject(object)} was deleted and created again since its newest record; restoring the state it had before that deletion` } : { record: newest };
  }
  if (lastSeen.length > 0) {
    const seen = lastSeen.map((s) => `store ${s.store} last saw resourceVersion ${s.resourceVersion} at ${s.seenAt}`).join('; ');
    throw new CliError(`${describeObject(object)} is gone, but the recorder has not recorded its deletion yet (${seen}); run restore again in a moment, or choose a record with --record`);
  }
  if (!newest) throw new CliError(`${describeObject(object)} does not exist and has no records`);
  return { record: newest };
}
