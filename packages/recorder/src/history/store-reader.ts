// Reading record stores, and nothing else: the history endpoint and `quorum history --path` read the files
// that the recorder's record stores write, through store-files.ts, without opening a RecordStore (which creates
// folders, removes a crash's temporary files and may write a store's marker). Writes are atomic (renames on a
// volume, whole uploads in an object store), so whatever is read is a whole file; a record that retention
// removes between a listing and a read is reported as missing.
//
// A storage root holds one store per ChangeRecorder that writes to the volume (its spec.storage.path, possibly
// nested): a store is a folder with a `.quorum-store` marker (or, written before the keys moved, a
// `.redaction-key`). A root that is itself a store (a copy of one) is read as
// that one store. The stores in object stores are the ones the ChangeRecorders name (objectStores), each named
// by its URI (`s3://bucket/prefix`).
import { stat } from 'node:fs/promises';
import { basename, join, relative, sep } from 'node:path';
import { locationPrefix } from '@quorum/storage';
import { isRecordFileName, parseLastSeen, parseRecord, parseRecordMeta, type LastSeenMeta, type ParsedFile, type RecordMeta } from '../record/record-file.ts';
import { CLUSTER_FOLDER, kindFolder, LAST_SEEN_FILE, objectFolders, parseKindFolder, REDACTION_KEY_FILE, STORE_MARKER_FILE } from '../store/layout.ts';
import { openObjectStore, storeLocationKey, type ObjectStoreSource } from '../store/open-store.ts';

export type { ObjectStoreSource } from '../store/open-store.ts';
import { DirectoryFiles, ObjectStoreFiles, type StoreFiles } from './store-files.ts';
import type { KindInfo, ObjectId } from './protocol.ts';

export interface StoreInfo {
  /** The store's path below the storage root (a ChangeRecorder's spec.storage.path), or its URI (`s3://bucket/prefix`). */
  name: string;
  files: StoreFiles;
}

export interface StoreReaderOptions {
  /** The stores in object stores, as the ChangeRecorders name them now (asked again after STORES_TTL_MS). */
  objectStores?: () => Promise<ObjectStoreSource[]>;
}

/** An object as one store holds it. */
export interface StoredObject extends ObjectId {
  store: string;
  /** Record IDs (file names without `.yaml`), oldest first. */
  records: string[];
  /** A last-seen copy is there: the object existed when the recorder last looked. */
  live: boolean;
}

export interface ObjectFilter {
  /** One namespace ('' for cluster-scoped objects); every one when undefined. */
  namespace?: string;
  group?: string;
  kind?: string;
  name?: string;
}

/** A request that names something no store could hold (a path outside it, a malformed ID). */
export class InvalidNameError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'InvalidNameError';
  }
}

/** How deep below the root stores are looked for (storage paths are short in practice). */
const MAX_STORE_DEPTH = 8;
const RECORD_ID = /^\d{8}T\d{6}\.\d{3}Z-[A-Za-z0-9]+$/;
const GROUP = /^([a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*)?$/;
const KIND = /^[A-Za-z][A-Za-z0-9]*$/;
const NAMESPACE = /^[a-z0-9]([-a-z0-9]*[a-z0-9])?$/;

export function isRecordId(id: string): boolean {
  return RECORD_ID.test(id);
}

/** Throws InvalidNameError unless every part of `id` is a name Kubernetes allows and a safe folder name. */
export function checkObjectId(id: ObjectId): void {
  if (!GROUP.test(id.group)) throw new InvalidNameError(`invalid API group ${JSON.stringify(id.group)}`);
  if (!KIND.test(id.kind)) throw new InvalidNameError(`invalid kind ${JSON.stringify(id.kind)}`);
  if (id.namespace !== '' && !NAMESPACE.test(id.namespace)) throw new InvalidNameError(`invalid namespace ${JSON.stringify(id.namespace)}`);
  // Object names may hold dots and colons (system:node, sh.helm.release.v1.x), never a slash; `.` and `..` are refused by the API server too.
  if (id.name === '' || id.name === '.' || id.name === '..' || id.name.length > 253 || /[/\\\0]/.test(id.name)) {
    throw new InvalidNameError(`invalid object name ${JSON.stringify(id.name)}`);
  }
}

function checkFilter(filter: ObjectFilter): void {
  const { group, kind, namespace, name } = filter;
  if (group !== undefined && !GROUP.test(group)) throw new InvalidNameError(`invalid API group ${JSON.stringify(group)}`);
  if (kind !== undefined && !KIND.test(kind)) throw new InvalidNameError(`invalid kind ${JSON.stringify(kind)}`);
  if (namespace !== undefined && namespace !== '' && !NAMESPACE.test(namespace)) throw new InvalidNameError(`invalid namespace ${JSON.stringify(namespace)}`);
  if (name !== undefined) checkObjectId({ group: group ?? '', kind: kind ?? 'Any', namespace: namespace ?? '', name });
}

/** How long a scan for stores is reused: stores come and go with ChangeRecorders, rarely. */
const STORES_TTL_MS = 2_000;

export class StoreReader {
  readonly root: string;
  readonly #objectStores: (() => Promise<ObjectStoreSource[]>) | undefined;
  /** The object stores opened so far, by location: kept across scans, so their clients and listings are reused. */
  readonly #opened = new Map<string, StoreInfo>();
  #stores: { at: number; stores: Promise<StoreInfo[]> } | undefined;

  constructor(root: string, options: StoreReaderOptions = {}) {
    this.root = root;
    this.#objectStores = options.objectStores;
  }

  /** The stores below the root and in object stores, by name. */
  stores(): Promise<StoreInfo[]> {
    const now = Date.now();
    if (!this.#stores || now - this.#stores.at > STORES_TTL_MS) {
      const stores = this.#scan();
      this.#stores = { at: now, stores };
      stores.catch(() => {
        if (this.#stores?.stores === stores) this.#stores = undefined;
      });
    }
    return this.#stores.stores;
  }

  async #scan(): Promise<StoreInfo[]> {
    const found = [...(await this.#directories()), ...(await this.#objectStoreInfos())];
    return found.sort((a, b) => a.name.localeCompare(b.name));
  }

  async #directories(): Promise<StoreInfo[]> {
    const store = (dir: string, name: string): StoreInfo => ({ name, files: new DirectoryFiles(dir) });
    if (await isStore(this.root)) return [store(this.root, basename(this.root))];
    const found: StoreInfo[] = [];
    const walk = async (dir: string, depth: number): Promise<void> => {
      if (depth > MAX_STORE_DEPTH) return;
      for (const sub of await new DirectoryFiles(dir).folders([])) {
        const path = join(dir, sub);
        if (await isStore(path)) found.push(store(path, relative(this.root, path).split(sep).join('/')));
        else await walk(path, depth + 1);
      }
    };
    await walk(this.root, 1);
    return found;
  }

  async #objectStoreInfos(): Promise<StoreInfo[]> {
    const sources = (await this.#objectStores?.()) ?? [];
    const wanted = new Map(sources.map((source) => [storeLocationKey(source), source]));
    for (const [key, info] of this.#opened) {
      if (wanted.has(key)) continue;
      this.#opened.delete(key);
      info.files.close();
    }
    const found = new Map<string, StoreInfo>();
    for (const [key, source] of wanted) {
      let info = this.#opened.get(key);
      if (!info) {
        const files = new ObjectStoreFiles(source.name, source.description, locationPrefix(source.objectStore), () => openObjectStore(source));
        this.#opened.set(key, (info = { name: source.name, files }));
      }
      found.set(info.name, info);
    }
    return [...found.values()];
  }

  /** Closes the object stores' clients. */
  close(): void {
    for (const info of this.#opened.values()) info.files.close();
    this.#opened.clear();
  }

  async store(name: string): Promise<StoreInfo> {
    const store = (await this.stores()).find((s) => s.name === name);
    if (!store) throw new InvalidNameError(`no record store named ${JSON.stringify(name)}`);
    return store;
  }

  /** Every kind with objects in some store. */
  async kinds(): Promise<KindInfo[]> {
    const kinds = new Map<string, KindInfo>();
    for (const store of await this.stores()) {
      for (const nsFolder of await store.files.folders([])) {
        for (const folder of await store.files.folders([nsFolder])) {
          const gk = parseKindFolder(folder);
          if (!gk) continue;
          const known = kinds.get(folder);
          const namespaced = nsFolder !== CLUSTER_FOLDER;
          if (known) known.namespaced ||= namespaced;
          else kinds.set(folder, { ...gk, namespaced });
        }
      }
    }
    return [...kinds.values()].sort((a, b) => a.kind.localeCompare(b.kind) || a.group.localeCompare(b.group));
  }

  /** Objects that have records or a last-seen copy, in every store (or `stores`), matching the filter. */
  async objects(filter: ObjectFilter, stores?: readonly StoreInfo[]): Promise<StoredObject[]> {
    checkFilter(filter);
    const found: StoredObject[] = [];
    for (const store of stores ?? (await this.stores())) {
      const nsFolders = filter.namespace === undefined ? await store.files.folders([]) : [filter.namespace || CLUSTER_FOLDER];
      for (const nsFolder of nsFolders) {
        const namespace = nsFolder === CLUSTER_FOLDER ? '' : nsFolder;
        const kindFolders = filter.kind !== undefined && filter.group !== undefined ? [kindFolder(filter.group, filter.kind)] : await store.files.folders([nsFolder]);
        for (const folder of kindFolders) {
          const gk = parseKindFolder(folder);
          if (!gk || (filter.kind !== undefined && gk.kind !== filter.kind) || (filter.group !== undefined && gk.group !== filter.group)) continue;
          const names = filter.name !== undefined ? [filter.name] : await store.files.folders([nsFolder, folder]);
          for (const name of names) {
            const object = await this.#read(store, { ...gk, namespace, name }, false);
            if (object) found.push(object);
          }
        }
      }
    }
    return found;
  }

  /** One object in each store that has it (or only in `store`). */
  async object(id: ObjectId, store?: string): Promise<StoredObject[]> {
    checkObjectId(id);
    const stores = store === undefined ? await this.stores() : [await this.store(store)];
    const found: StoredObject[] = [];
    for (const s of stores) {
      const object = await this.#read(s, id, true);
      if (object) found.push(object);
    }
    return found;
  }

  /** A record's header; undefined when the file is gone (retention removed it). */
  async recordMeta(store: StoreInfo, id: ObjectId, recordId: string): Promise<RecordMeta | undefined> {
    const file = this.#recordFile(id, recordId);
    const text = await store.files.read(file);
    return text === undefined ? undefined : parseRecordMeta(text, fileName(store, file));
  }

  /** A whole record; undefined when the file is gone. */
  async record(store: StoreInfo, id: ObjectId, recordId: string): Promise<ParsedFile<RecordMeta> | undefined> {
    const file = this.#recordFile(id, recordId);
    const text = await store.files.read(file);
    return text === undefined ? undefined : parseRecord(text, fileName(store, file));
  }

  async lastSeen(store: StoreInfo, id: ObjectId): Promise<ParsedFile<LastSeenMeta> | undefined> {
    checkObjectId(id);
    const file = [...objectFolders(id), LAST_SEEN_FILE];
    const text = await store.files.read(file);
    return text === undefined ? undefined : parseLastSeen(text, fileName(store, file));
  }

  #recordFile(id: ObjectId, recordId: string): string[] {
    checkObjectId(id);
    if (!isRecordId(recordId)) throw new InvalidNameError(`invalid record ID ${JSON.stringify(recordId)}`);
    return [...objectFolders(id), `${recordId}.yaml`];
  }

  /** One object's records and last-seen copy; `fresh` as StoreFiles.files() takes it. */
  async #read(store: StoreInfo, id: ObjectId, fresh: boolean): Promise<StoredObject | undefined> {
    try {
      checkObjectId(id);
    } catch (err) {
      // A folder that is not a name Kubernetes allows was not written by a recorder: not an object.
      if (err instanceof InvalidNameError) return undefined;
      throw err;
    }
    const files = await store.files.files(objectFolders(id), fresh);
    if (files === undefined) return undefined;
    const records = files.filter(isRecordFileName).map((f) => f.slice(0, -'.yaml'.length)).sort();
    const live = files.includes(LAST_SEEN_FILE);
    if (records.length === 0 && !live) return undefined;
    return { ...id, store: store.name, records, live };
  }
}

/** A file of a store as messages name it: its path, or its URI. */
function fileName(store: StoreInfo, file: readonly string[]): string {
  return store.files.where(file);
}

/** A folder the recorder made a store of: its marker, or the key file of a store written before markers. */
async function isStore(dir: string): Promise<boolean> {
  return (await exists(join(dir, STORE_MARKER_FILE))) || (await exists(join(dir, REDACTION_KEY_FILE)));
}

async function exists(path: string): Promise<boolean> {
  try {
    await stat(path);
    return true;
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code === 'ENOENT' || (err as NodeJS.ErrnoException).code === 'ENOTDIR') return false;
    throw err;
  }
}
