// The record store under a key prefix of an object store bucket (S3, GCS or Azure Blob, through
// @quorum/storage), in the layout of layout.ts with the prefix in place of the directory.
//
// Atomic writes come from the stores themselves: an object appears whole or not at all (S3 completes a
// multipart upload only once every part is stored, GCS finalises a resumable upload with its last chunk,
// Azure commits a blob's block list at the end), and the drivers complete an upload only once its body ended
// without error. A crash, a failed request or a dropped connection therefore leaves the previous version of
// a file, or none, never a torn one; and replacing `.last-seen.yaml` is one upload over the old object. An
// unfinished upload is invisible to listings, so there is nothing to clean when the store opens (S3 keeps
// the parts of an aborted one until an abort or a lifecycle rule removes them; GCS and Azure expire them).
//
// Opening lists the prefix once (names and sizes) into the index; contents are read only when needed.
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';
import type { ObjectStore } from '@quorum/storage';
import type { NewLastSeen, NewRecord } from '../record/changes.ts';
import { formatLastSeen, formatRecord, isRecordFileName, parseLastSeen, parseRecord, type LastSeenMeta, type ParsedFile, type RecordMeta } from '../record/record-file.ts';
import type { RetentionPolicy } from '../record/retention.ts';
import { LAST_SEEN_FILE, objectPath, parseKindFolder, parseRedactionKey, parseStoreMarker, REDACTION_KEY_FILE, STORE_MARKER_FILE, storeRedactionKey, type ObjectRef } from './layout.ts';
import type { RedactionKeySource } from './redaction-keys.ts';
import type { RecordStore, StoreLog } from './record-store.ts';
import { StoreIndex, type StoreStats } from './store-index.ts';

/** `team-a` → `team-a/`; '' (the top of the bucket) stays ''. */
export function keyBase(prefix: string): string {
  return prefix === '' || prefix.endsWith('/') ? prefix : `${prefix}/`;
}

export class ObjectRecordStore implements RecordStore {
  readonly description: string;
  readonly redactionKey: Uint8Array;
  /** Every key of this store starts with it: the prefix with a trailing slash, or '' for the top of the bucket. */
  readonly base: string;
  readonly #store: ObjectStore;
  readonly #index = new StoreIndex();

  private constructor(store: ObjectStore, base: string, redactionKey: Uint8Array) {
    this.#store = store;
    this.base = base;
    this.redactionKey = redactionKey;
    this.description = `${store.description}, under ${base === '' ? 'the top of the bucket' : base}`;
  }

  /**
   * Opens the store below `prefix` of `store` (its marker written, and its redaction key kept by `keys`, when
   * new) and indexes what is there. The record store owns `store` from then on: close() closes it.
   */
  static async open(store: ObjectStore, prefix: string, keys: RedactionKeySource, log?: StoreLog): Promise<ObjectRecordStore> {
    const base = keyBase(prefix);
    try {
      const listed = await store.list(base);
      const has = (file: string): boolean => listed.some((o) => o.key === `${base}${file}`);
      const redactionKey = await storeRedactionKey(
        {
          id: has(STORE_MARKER_FILE) ? parseStoreMarker(await text(await store.download(`${base}${STORE_MARKER_FILE}`)), `${base}${STORE_MARKER_FILE}`) : undefined,
          legacyKey: has(REDACTION_KEY_FILE) ? parseRedactionKey(await text(await store.download(`${base}${REDACTION_KEY_FILE}`)), `${base}${REDACTION_KEY_FILE}`) : undefined,
          // One upload each: it appears whole or not at all.
          writeMarker: async (content) => void (await putText(store, `${base}${STORE_MARKER_FILE}`, content)),
          removeLegacyKey: () => store.delete(`${base}${REDACTION_KEY_FILE}`),
        },
        keys,
        `${store.description}, under ${base === '' ? 'the top of the bucket' : base}`,
      );
      const recordStore = new ObjectRecordStore(store, base, redactionKey);
      recordStore.#load(listed, log);
      return recordStore;
    } catch (err) {
      store.close();
      throw err;
    }
  }

  stats(): StoreStats {
    return this.#index.stats();
  }

  records(ref: ObjectRef): readonly string[] {
    return this.#index.records(ref);
  }

  hasLastSeen(ref: ObjectRef): boolean {
    return this.#index.hasLastSeen(ref);
  }

  lastSeenRefs(group: string, kind: string, namespace?: string): ObjectRef[] {
    return this.#index.lastSeenRefs(group, kind, namespace);
  }

  async readLastSeen(ref: ObjectRef): Promise<ParsedFile<LastSeenMeta> | undefined> {
    if (!this.hasLastSeen(ref)) return undefined;
    const key = this.#key(ref, LAST_SEEN_FILE);
    return parseLastSeen(await this.#get(key), key);
  }

  async readRecord(ref: ObjectRef, name: string): Promise<ParsedFile<RecordMeta>> {
    const key = this.#key(ref, name);
    return parseRecord(await this.#get(key), key);
  }

  async writeLastSeen(ref: ObjectRef, copy: NewLastSeen): Promise<void> {
    this.#index.setLastSeen(ref, await putText(this.#store, this.#key(ref, LAST_SEEN_FILE), formatLastSeen(copy.meta, copy.object)));
  }

  async removeLastSeen(ref: ObjectRef): Promise<void> {
    if (!this.#index.hasLastSeen(ref)) return;
    await this.#store.delete(this.#key(ref, LAST_SEEN_FILE));
    this.#index.clearLastSeen(ref);
    this.#index.dropIfEmpty(ref);
  }

  async writeRecord(ref: ObjectRef, record: NewRecord): Promise<string> {
    const name = this.#index.newRecordName(ref, record.meta.recordedAt, record.meta.resourceVersion);
    // Indexed only once stored: a failed upload leaves neither an object nor an entry, and is retried whole.
    this.#index.addRecord(ref, name, await putText(this.#store, this.#key(ref, name), formatRecord(record.meta, record.object)));
    return name;
  }

  async retain(ref: ObjectRef, policy: RetentionPolicy, now: number): Promise<number> {
    const remove = this.#index.toRemove(ref, policy, now);
    for (const name of remove) {
      await this.#store.delete(this.#key(ref, name));
      this.#index.removeRecord(ref, name);
    }
    this.#index.dropIfEmpty(ref);
    return remove.length;
  }

  expired(policy: RetentionPolicy, now: number): ObjectRef[] {
    return this.#index.expired(policy, now);
  }

  nextExpiry(policy: RetentionPolicy): number | undefined {
    return this.#index.nextExpiry(policy);
  }

  close(): void {
    this.#store.close();
  }

  #key(ref: ObjectRef, file: string): string {
    return `${this.base}${objectPath(ref)}/${file}`;
  }

  async #get(key: string): Promise<string> {
    return text(await this.#store.download(key));
  }

  #load(listed: readonly { key: string; sizeBytes: number }[], log: StoreLog | undefined): void {
    const ignored: string[] = [];
    for (const { key, sizeBytes } of listed) {
      const relative = key.slice(this.base.length);
      if (relative === REDACTION_KEY_FILE || relative === STORE_MARKER_FILE) continue;
      const parts = relative.split('/');
      const [ns, kind, name, file] = parts;
      if (parts.length === 4 && ns && kind && name && file && parseKindFolder(kind) && (file === LAST_SEEN_FILE || isRecordFileName(file))) this.#index.addListed([ns, kind, name], file, sizeBytes);
      else ignored.push(key);
    }
    // What another writer left under the prefix (or a store nested inside it): never read, never removed.
    if (ignored.length > 0) log?.warn({ store: this.description, ignored: ignored.length, example: ignored[0] }, 'record store: ignoring objects under the prefix that are not records');
  }
}

/** Uploads `content` to `key`; returns the bytes stored. */
async function putText(store: ObjectStore, key: string, content: string): Promise<number> {
  const data = Buffer.from(content, 'utf8');
  const { sizeBytes } = await store.upload(key, Readable.from([data], { objectMode: false }), { sizeHint: data.length });
  return sizeBytes;
}
