// The history endpoint's handlers: list objects and their records, return one record, return diffs. They
// read the record stores (store-reader.ts) and ask `Access` before showing anything about an object: the
// recorder's HTTP server passes the caller's access as the API server decides it, `quorum history --path`
// passes allowAll(). Nothing here writes.
import { StorageError } from '@quorum/storage';
import type { GroupKind } from '../api/changerecorder.ts';
import { unifiedDiff } from '../record/diff.ts';
import { objectYAML, type RecordMeta } from '../record/record-file.ts';
import { groupKindName } from '../recorder/discovery.ts';
import type { Access, Decision } from './access.ts';
import {
  API_PREFIX,
  DIFF_TO_CURRENT,
  type DeniedScope,
  type DiffResponse,
  type ErrorResponse,
  type KindsResponse,
  type LastSeenSummary,
  type ObjectId,
  type ObjectsResponse,
  type ObjectSummary,
  type RecordResponse,
  type RecordsResponse,
  type RecordSummary,
} from './protocol.ts';
import { InvalidNameError, isRecordId, type ObjectFilter, type StoreInfo, type StoredObject, StoreReader } from './store-reader.ts';

/** A refusal with its HTTP status: the message is what the caller sees. */
export class HttpError extends Error {
  readonly status: number;
  constructor(status: number, message: string) {
    super(message);
    this.name = 'HttpError';
    this.status = status;
  }
}

export type HistoryBody = KindsResponse | ObjectsResponse | RecordsResponse | RecordResponse | DiffResponse | ErrorResponse;

export interface HistoryResponse {
  status: number;
  body: HistoryBody;
}

/** `ConfigMap default/app`, `ClusterRole system:reader`, `Deployment.apps web`: an object as messages name it. */
export function describeObject(id: ObjectId): string {
  return `${groupKindName(id)} ${id.namespace ? `${id.namespace}/` : ''}${id.name}`;
}

function summary(store: string, id: string, meta: RecordMeta): RecordSummary {
  const s: RecordSummary = { store, id, reason: meta.reason, seenLate: meta.seenLate, recordedAt: meta.recordedAt, resourceVersion: String(meta.resourceVersion) };
  if (meta.replacedBy !== undefined) s.replacedBy = String(meta.replacedBy);
  if (meta.changedBy) s.changedBy = meta.changedBy;
  if (meta.changedAt) s.changedAt = meta.changedAt;
  return s;
}

const byTime = (a: RecordSummary, b: RecordSummary): number => a.id.localeCompare(b.id) || a.store.localeCompare(b.store);

export class HistoryHandlers {
  readonly reader: StoreReader;

  constructor(reader: StoreReader) {
    this.reader = reader;
  }

  /** The kinds that have records. Only their names: which objects exist is behind `list`. */
  async kinds(): Promise<KindsResponse> {
    return { kinds: await this.reader.kinds() };
  }

  /** Objects with records, in every scope the caller may `list`; the others are named in `denied`. */
  async objects(filter: ObjectFilter, access: Access, store?: string): Promise<ObjectsResponse> {
    const stores = store === undefined ? undefined : [await this.reader.store(store)];
    const found = await this.reader.objects(filter, stores);
    const decisions = new Map<string, Promise<Decision>>();
    const decide = (gk: GroupKind, namespace: string): Promise<Decision> => {
      const key = JSON.stringify([gk.group, gk.kind, namespace]);
      let decision = decisions.get(key);
      if (!decision) {
        decision = (async () => {
          // Asked for every namespace: one review answers for all of them when the caller may list cluster-wide.
          if (namespace === '' || filter.namespace === undefined) {
            const clusterWide = await access.check({ verb: 'list', group: gk.group, kind: gk.kind, namespace: '' });
            if (clusterWide.allowed || namespace === '') return clusterWide;
          }
          return access.check({ verb: 'list', group: gk.group, kind: gk.kind, namespace });
        })();
        decisions.set(key, decision);
      }
      return decision;
    };
    const objects: ObjectSummary[] = [];
    const denied = new Map<string, DeniedScope>();
    for (const object of found) {
      const decision = await decide(object, object.namespace);
      if (!decision.allowed) {
        denied.set(JSON.stringify([object.group, object.kind, object.namespace]), { group: object.group, kind: object.kind, namespace: object.namespace, reason: decision.reason });
        continue;
      }
      objects.push(await this.#summarize(object));
    }
    objects.sort((a, b) => a.namespace.localeCompare(b.namespace) || a.kind.localeCompare(b.kind) || a.group.localeCompare(b.group) || a.name.localeCompare(b.name) || a.store.localeCompare(b.store));
    return { objects, denied: [...denied.values()] };
  }

  /** One object's records, oldest first, and whether (and at which version) the recorder last saw it alive. */
  async records(id: ObjectId, access: Access, store?: string): Promise<RecordsResponse> {
    const objects = await this.#object(id, access, store);
    const records: RecordSummary[] = [];
    const lastSeen: LastSeenSummary[] = [];
    for (const object of objects) {
      const info = await this.reader.store(object.store);
      for (const recordId of object.records) {
        const meta = await this.reader.recordMeta(info, id, recordId);
        if (meta) records.push(summary(object.store, recordId, meta));
      }
      if (object.live) {
        const copy = await this.reader.lastSeen(info, id);
        if (copy) lastSeen.push({ store: object.store, resourceVersion: String(copy.meta.resourceVersion), seenAt: copy.meta.seenAt });
      }
    }
    return { object: objectId(id), records: records.sort(byTime), lastSeen };
  }

  /** One record: what it says about itself, and the recorded object as YAML. */
  async record(id: ObjectId, recordId: string, access: Access, store?: string): Promise<RecordResponse> {
    const { info, meta, yaml } = await this.#record(id, recordId, access, store);
    return { object: objectId(id), record: { ...summary(info.name, recordId, meta), cleaning: meta.cleaning, ...(meta.diff !== undefined ? { diff: meta.diff } : {}), ...(meta.diffOmitted ? { diffOmitted: meta.diffOmitted } : {}) }, yaml };
  }

  /**
   * A diff from a record. Without `to`: the change the record was taken for, as recorded (to the version that
   * replaced it), or, for a deletion, the object going away. `to` = `current`: to the newest version the
   * recorder saw of the live object. `to` = another record's ID: to that record.
   */
  async diff(id: ObjectId, recordId: string, access: Access, to?: string, store?: string): Promise<DiffResponse> {
    const from = await this.#record(id, recordId, access, store);
    const fromLabel = `record ${recordId}`;
    const result = (toLabel: string, diff: string, note?: string): DiffResponse => ({ object: objectId(id), from: fromLabel, to: toLabel, diff, ...(note ? { note } : {}) });
    if (to === undefined) {
      const { meta } = from;
      if (meta.reason === 'Deleted' || meta.reason === 'DeletedWhileNotWatching') return result('(deleted)', unifiedDiff(from.yaml, '', fromLabel, '(deleted)') ?? '');
      const replacedBy = `resourceVersion ${String(meta.replacedBy ?? '?')}`;
      if (meta.diff !== undefined) return result(replacedBy, meta.diff);
      return result(replacedBy, '', `the diff was not recorded: ${meta.diffOmitted ?? 'unknown reason'}`);
    }
    if (to === DIFF_TO_CURRENT) {
      const copy = await this.reader.lastSeen(from.info, id);
      if (!copy) throw new HttpError(404, `${describeObject(id)} has no current version in store ${from.info.name}: the recorder last saw it deleted`);
      const label = `current (resourceVersion ${String(copy.meta.resourceVersion)})`;
      return result(label, unifiedDiff(from.yaml, objectYAML(copy.object), fromLabel, label) ?? '', undefined);
    }
    const other = await this.#record(id, to, access, from.info.name);
    const label = `record ${to}`;
    return result(label, unifiedDiff(from.yaml, other.yaml, fromLabel, label) ?? '');
  }

  /** Routes a GET request; errors become their status and message. */
  async handle(url: URL, access: Access): Promise<HistoryResponse> {
    try {
      return { status: 200, body: await this.#route(url, access) };
    } catch (err) {
      if (err instanceof HttpError) return { status: err.status, body: { error: err.message } };
      if (err instanceof InvalidNameError) return { status: 400, body: { error: err.message } };
      // An object store that refuses or does not answer: the store's own words (they name the server and bucket, never a credential).
      if (err instanceof StorageError) return { status: 503, body: { error: `the recorder cannot read the records in an object store: ${err.message}` } };
      throw err;
    }
  }

  async #route(url: URL, access: Access): Promise<HistoryBody> {
    const q = url.searchParams;
    const opt = (name: string): string | undefined => q.get(name) ?? undefined;
    const objectOf = (): ObjectId => {
      const kind = opt('kind');
      const name = opt('name');
      if (!kind || !name) throw new HttpError(400, `${url.pathname} needs the query parameters kind and name (and group, namespace for namespaced kinds)`);
      return { group: opt('group') ?? '', kind, namespace: opt('namespace') ?? '', name };
    };
    const recordId = (): string => {
      const id = opt('id');
      if (!id) throw new HttpError(400, `${url.pathname} needs the query parameter id (a record ID)`);
      return id;
    };
    switch (url.pathname) {
      case `${API_PREFIX}/kinds`:
        return this.kinds();
      case `${API_PREFIX}/objects`:
        return this.objects({ namespace: opt('namespace'), group: opt('group'), kind: opt('kind'), name: opt('name') }, access, opt('store'));
      case `${API_PREFIX}/records`:
        return this.records(objectOf(), access, opt('store'));
      case `${API_PREFIX}/record`:
        return this.record(objectOf(), recordId(), access, opt('store'));
      case `${API_PREFIX}/diff`:
        return this.diff(objectOf(), recordId(), access, opt('to'), opt('store'));
      default:
        throw new HttpError(404, `no such endpoint: ${url.pathname} (there are ${['kinds', 'objects', 'records', 'record', 'diff'].map((p) => `${API_PREFIX}/${p}`).join(', ')})`);
    }
  }

  /** The object in every store (or `store`) that has it, once the caller may `get` it. */
  async #object(id: ObjectId, access: Access, store?: string): Promise<StoredObject[]> {
    // Access first: whether an object has records is not shown to whoever may not read the object.
    const decision = await access.check({ verb: 'get', group: id.group, kind: id.kind, namespace: id.namespace, name: id.name });
    if (!decision.allowed) throw new HttpError(403, `the records of ${describeObject(id)} are not shown: ${decision.reason}`);
    const objects = await this.reader.object(id, store);
    if (objects.length === 0) throw new HttpError(404, `no records of ${describeObject(id)}${store === undefined ? '' : ` in store ${store}`}`);
    return objects;
  }

  async #record(id: ObjectId, recordId: string, access: Access, store?: string): Promise<{ info: StoreInfo; meta: RecordMeta; yaml: string }> {
    if (!isRecordId(recordId)) throw new HttpError(400, `invalid record ID ${JSON.stringify(recordId)}: IDs look like 20260301T120005.123Z-4711`);
    const objects = await this.#object(id, access, store);
    for (const object of objects) {
      if (!object.records.includes(recordId)) continue;
      const info = await this.reader.store(object.store);
      const parsed = await this.reader.record(info, id, recordId);
      if (parsed) return { info, meta: parsed.meta, yaml: objectYAML(parsed.object) };
    }
    const known = objects.flatMap((o) => o.records);
    throw new HttpError(404, `${describeObject(id)} has no record ${recordId}${known.length ? ` (its records: ${known.join(', ')})` : ' (it has no records)'}`);
  }

  async #summarize(object: StoredObject): Promise<ObjectSummary> {
    const { records, ...rest } = object;
    const s: ObjectSummary = { ...rest, records: records.length };
    const newest = records.at(-1);
    if (newest !== undefined) {
      const meta = await this.reader.recordMeta(await this.reader.store(object.store), object, newest);
      if (meta) s.newest = summary(object.store, newest, meta);
    }
    return s;
  }
}

function objectId(id: ObjectId): ObjectId {
  return { group: id.group, kind: id.kind, namespace: id.namespace, name: id.name };
}
