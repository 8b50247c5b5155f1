// A record store: where one ChangeRecorder's records and last-seen copies live, in the layout of layout.ts.
// Two implementations: FileRecordStore, below, on a directory of the recorder's volume (a PVC), and
// ObjectRecordStore (object-record-store.ts) under a key prefix of an object store bucket. Both write each
// file atomically (a reader, or a recorder started after a crash, finds the old version or the new one, never
// a torn one), and both open by listing the store once into an index (store-index.ts) of names and sizes;
// contents are read only when needed.
//
// Callers serialise the operations on one object (the recorder queues them per object); operations on
// different objects may run at once.
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { NewLastSeen, NewRecord } from '../record/changes.ts';
import { formatLastSeen, formatRecord, isRecordFileName, parseLastSeen, parseRecord, type LastSeenMeta, type ParsedFile, type RecordMeta } from '../record/record-file.ts';
import type { RetentionPolicy } from '../record/retention.ts';
import { isTempName, makeDirs, removeEmptyDir, removeFile, writeFileAtomic } from './durable-fs.ts';
import { LAST_SEEN_FILE, objectFolders, parseKindFolder, parseRedactionKey, parseStoreMarker, REDACTION_KEY_FILE, STORE_MARKER_FILE, storeRedactionKey, type ObjectRef } from './layout.ts';
import type { RedactionKeySource } from './redaction-keys.ts';
import { StoreIndex, type StoreStats } from './store-index.ts';

export type { StoreStats } from './store-index.ts';

export interface StoreLog {
  warn(fields: Record<string, unknown>, msg: string): void;
}

/** One ChangeRecorder's records, as the recorder's session reads and writes them. */
export interface RecordStore {
  /** Where the store is, for messages and logs: a directory, or `s3://bucket/prefix at <endpoint>`. */
  readonly description: string;
  /** The key of Secret hashes (`secrets: redact`), created with the store, kept apart from it, never changed. */
  readonly redactionKey: Uint8Array;
  /** Records kept, bytes used and the newest record's time, as status reports them. */
  stats(): StoreStats;
  /** Record file names of an object, oldest first. */
  records(ref: ObjectRef): readonly string[];
  hasLastSeen(ref: ObjectRef): boolean;
  /**
   * Objects of a kind that have a last-seen copy: in one namespace, or in all when `namespace` is undefined
   * (cluster-scoped objects are in namespace '').
   */
  lastSeenRefs(group: string, kind: string, namespace?: string): ObjectRef[];
  readLastSeen(ref: ObjectRef): Promise<ParsedFile<LastSeenMeta> | undefined>;
  readRecord(ref: ObjectRef, name: string): Promise<ParsedFile<RecordMeta>>;
  /** Replaces the object's last-seen copy, atomically. */
  writeLastSeen(ref: ObjectRef, copy: NewLastSeen): Promise<void>;
  /** Removes an object's last-seen copy (it was deleted). */
  removeLastSeen(ref: ObjectRef): Promise<void>;
  /** Writes a record, atomically; returns its file name. */
  writeRecord(ref: ObjectRef, record: NewRecord): Promise<string>;
  /** Applies the retention policy to one object's records; returns how many were removed. */
  retain(ref: ObjectRef, policy: RetentionPolicy, now: number): Promise<number>;
  /** Objects with at least one record that the policy would remove at `now` (for the periodic sweep). */
  expired(policy: RetentionPolicy, now: number): ObjectRef[];
  /** When the next record passes maxAge (ms since the epoch), or undefined when none will. */
  nextExpiry(policy: RetentionPolicy): number | undefined;
  /** Releases what the store holds open (an object store's connections). */
  close(): void;
}

/**
 * The record store on a filesystem path (a PVC mounted into the recorder). Every write is atomic and durable
 * (durable-fs.ts). Opening the store removes temporary files a crash left behind.
 */
export class FileRecordStore implements RecordStore {
  readonly root: string;
  readonly description: string;
  readonly redactionKey: Uint8Array;
  readonly #index = new StoreIndex();

  private constructor(root: string, redactionKey: Uint8Array) {
    this.root = root;
    this.description = root;
    this.redactionKey = redactionKey;
  }

  /**
   * Opens (creating it if needed) the store at `root`, its redaction key kept by `keys`: removes leftover
   * temporary files and indexes the rest.
   */
  static async open(root: string, keys: RedactionKeySource, log?: StoreLog): Promise<FileRecordStore> {
    const absolute = resolve(root);
    await makeDirs('/', absolute.split('/').filter(Boolean));
    const store = new FileRecordStore(absolute, await loadRedactionKey(absolute, keys));
    await store.#load(log);
    return store;
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
    const file = join(this.#dir(ref), LAST_SEEN_FILE);
    return parseLastSeen(await readFile(file, 'utf8'), file);
  }

  async readRecord(ref: ObjectRef, name: string): Promise<ParsedFile<RecordMeta>> {
    const file = join(this.#dir(ref), name);
    return parseRecord(await readFile(file, 'utf8'), file);
  }

  async writeLastSeen(ref: ObjectRef, copy: NewLastSeen): Promise<void> {
    const dir = await this.#makeDir(ref);
    this.#index.setLastSeen(ref, await writeFileAtomic(dir, LAST_SEEN_FILE, formatLastSeen(copy.meta, copy.object)));
  }

  /** Removes an object's last-seen copy, and its folder when no record is left either. */
  async removeLastSeen(ref: ObjectRef): Promise<void> {
    if (!this.#index.hasLastSeen(ref)) return;
    await removeFile(this.#dir(ref), LAST_SEEN_FILE);
    this.#index.clearLastSeen(ref);
    await this.#dropIfEmpty(ref);
  }

  async writeRecord(ref: ObjectRef, record: NewRecord): Promise<string> {
    const dir = await this.#makeDir(ref);
    const name = this.#index.newRecordName(ref, record.meta.recordedAt, record.meta.resourceVersion);
    this.#index.addRecord(ref, name, await writeFileAtomic(dir, name, formatRecord(record.meta, record.object)));
    return name;
  }

  async retain(ref: ObjectRef, policy: RetentionPolicy, now: number): Promise<number> {
    const remove = this.#index.toRemove(ref, policy, now);
    const dir = this.#dir(ref);
    for (const name of remove) {
      await removeFile(dir, name);
      this.#index.removeRecord(ref, name);
    }
    await this.#dropIfEmpty(ref);
    return remove.length;
  }

  expired(policy: RetentionPolicy, now: number): ObjectRef[] {
    return this.#index.expired(policy, now);
  }

  nextExpiry(policy: RetentionPolicy): number | undefined {
    return this.#index.nextExpiry(policy);
  }

  close(): void {}

  #dir(ref: ObjectRef): string {
    return join(this.root, ...objectFolders(ref));
  }

  #makeDir(ref: ObjectRef): Promise<string> {
    // An object the index knows has its folder already (entries and folders come and go together): no
    // mkdir calls on the hot path of every write.
    if (this.#index.has(ref)) return Promise.resolve(this.#dir(ref));
    return makeDirs(this.root, objectFolders(ref));
  }

  async #dropIfEmpty(ref: ObjectRef): Promise<void> {
    if (this.#index.dropIfEmpty(ref)) await removeEmptyDir(this.#dir(ref));
  }

  async #load(log: StoreLog | undefined): Promise<void> {
    for (const ns of await subdirectories(this.root)) {
      for (const kind of await subdirectories(join(this.root, ns))) {
        if (!parseKindFolder(kind)) {
          log?.warn({ folder: join(ns, kind) }, 'record store: ignoring a folder that is not <group>.<kind>');
          continue;
        }
        for (const name of await subdirectories(join(this.root, ns, kind))) {
          const dir = join(this.root, ns, kind, name);
          for (const file of await readdir(dir, { withFileTypes: true })) {
            if (!file.isFile()) continue;
            if (isTempName(file.name)) {
              // A write that a crash interrupted before its rename: never a record, so it goes.
              await removeFile(dir, file.name);
            } else if (file.name === LAST_SEEN_FILE || isRecordFileName(file.name)) {
              this.#index.addListed([ns, kind, name], file.name, (await stat(join(dir, file.name))).size);
            }
          }
        }
      }
    }
  }
}

/** Subdirectories, skipping hidden entries (the marker, temporary files). */
async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
}

/** A file's text, or undefined when it does not exist. */
async function readIfPresent(file: string): Promise<string | undefined> {
  try {
    return await readFile(file, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT') return undefined;
    throw err;
  }
}

async function loadRedactionKey(root: string, keys: RedactionKeySource): Promise<Uint8Array> {
  const marker = await readIfPresent(join(root, STORE_MARKER_FILE));
  const legacy = await readIfPresent(join(root, REDACTION_KEY_FILE));
  return storeRedactionKey(
    {
      id: marker === undefined ? undefined : parseStoreMarker(marker, join(root, STORE_MARKER_FILE)),
      legacyKey: legacy === undefined ? undefined : parseRedactionKey(legacy, join(root, REDACTION_KEY_FILE)),
      writeMarker: async (content) => void (await writeFileAtomic(root, STORE_MARKER_FILE, content)),
      removeLegacyKey: () => removeFile(root, REDACTION_KEY_FILE),
    },
    keys,
    root,
  );
}
