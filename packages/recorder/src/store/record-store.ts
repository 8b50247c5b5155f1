// The record store on a filesystem path (a PVC mounted into the recorder):
//
//   <root>/<namespace>/<group>.<kind>/<name>/<timestamp>-<resourceVersion>.yaml   one record each
//   <root>/<namespace>/<group>.<kind>/<name>/.last-seen.yaml                       newest version seen
//   <root>/_cluster/…                                                              cluster-scoped objects
//   <root>/.redaction-key                                                          key of Secret hashes
//
// The core group is written `core` (core.ConfigMap, apps.Deployment). Every write is atomic and durable
// (durable-fs.ts). Opening the store removes temporary files a crash left behind and builds an index of each
// object's records and last-seen copy from the file names alone; file contents are read only when needed.
//
// Callers serialise the operations on one object (the recorder queues them per object); operations on
// different objects may run at once.
import { randomBytes } from 'node:crypto';
import { readdir, readFile, stat } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import type { NewLastSeen, NewRecord } from '../record/changes.ts';
import { formatLastSeen, formatRecord, isRecordFileName, parseLastSeen, parseRecord, recordFileName, recordTime, type LastSeenMeta, type ParsedFile, type RecordMeta } from '../record/record-file.ts';
import { nextExpiry, recordsToRemove, type RetentionPolicy } from '../record/retention.ts';
import { isTempName, makeDirs, removeEmptyDir, removeFile, writeFileAtomic } from './durable-fs.ts';

/** An object's place in the store. `namespace` is empty for cluster-scoped objects; `group` for the core group. */
export interface ObjectRef {
  group: string;
  kind: string;
  namespace: string;
  name: string;
}

export const CLUSTER_FOLDER = '_cluster';
export const LAST_SEEN_FILE = '.last-seen.yaml';
export const REDACTION_KEY_FILE = '.redaction-key';

/** `apps.Deployment`, `core.ConfigMap`: a kind's folder. Kinds have no dots, so the last one splits it. */
export function kindFolder(group: string, kind: string): string {
  return `${group || 'core'}.${kind}`;
}

/** `apps.Deployment` → apps/Deployment, `core.ConfigMap` → ''/ConfigMap; undefined for anything else. */
export function parseKindFolder(folder: string): { group: string; kind: string } | undefined {
  const dot = folder.lastIndexOf('.');
  if (dot <= 0 || dot === folder.length - 1) return undefined;
  const group = folder.slice(0, dot);
  return { group: group === 'core' ? '' : group, kind: folder.slice(dot + 1) };
}

interface Entry {
  /** Record file names, oldest first. */
  records: string[];
  /** Size of the last-seen copy; undefined when there is none. */
  lastSeenBytes: number | undefined;
}

export interface StoreLog {
  warn(fields: Record<string, unknown>, msg: string): void;
}

export interface StoreStats {
  records: number;
  bytes: number;
  /** When the newest record was written (ms since the epoch), if any. */
  lastRecordMs: number | undefined;
}

export class RecordStore {
  readonly root: string;
  readonly redactionKey: Uint8Array;
  /** kind folder → namespace folder → name → entry */
  readonly #index = new Map<string, Map<string, Map<string, Entry>>>();
  #records = 0;
  #bytes = 0;
  #lastRecordMs: number | undefined;

  private constructor(root: string, redactionKey: Uint8Array) {
    this.root = root;
    this.redactionKey = redactionKey;
  }

  /** Opens (creating it if needed) the store at `root`: removes leftover temporary files and indexes the rest. */
  static async open(root: string, log?: StoreLog): Promise<RecordStore> {
    const absolute = resolve(root);
    await makeDirs('/', absolute.split('/').filter(Boolean));
    const store = new RecordStore(absolute, await loadRedactionKey(absolute));
    await store.#load(log);
    return store;
  }

  stats(): StoreStats {
    return { records: this.#records, bytes: this.#bytes, lastRecordMs: this.#lastRecordMs };
  }

  /** Record file names of an object, oldest first. */
  records(ref: ObjectRef): readonly string[] {
    return this.#entry(ref)?.records ?? [];
  }

  hasLastSeen(ref: ObjectRef): boolean {
    return this.#entry(ref)?.lastSeenBytes !== undefined;
  }

  /**
   * Objects of a kind that have a last-seen copy: in one namespace, or in all when `namespace` is undefined
   * (cluster-scoped objects are in namespace '').
   */
  lastSeenRefs(group: string, kind: string, namespace?: string): ObjectRef[] {
    const byNamespace = this.#index.get(kindFolder(group, kind));
    if (!byNamespace) return [];
    const refs: ObjectRef[] = [];
    for (const [folder, byName] of byNamespace) {
      const ns = folder === CLUSTER_FOLDER ? '' : folder;
      if (namespace !== undefined && ns !== namespace) continue;
      for (const [name, entry] of byName) if (entry.lastSeenBytes !== undefined) refs.push({ group, kind, namespace: ns, name });
    }
    return refs;
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
    const bytes = await writeFileAtomic(dir, LAST_SEEN_FILE, formatLastSeen(copy.meta, copy.object));
    const entry = this.#entryFor(ref);
    this.#bytes += bytes - (entry.lastSeenBytes ?? 0);
    entry.lastSeenBytes = bytes;
  }

  /** Removes an object's last-seen copy (it was deleted), and its folder when no record is left either. */
  async removeLastSeen(ref: ObjectRef): Promise<void> {
    const entry = this.#entry(ref);
    if (entry?.lastSeenBytes === undefined) return;
    await removeFile(this.#dir(ref), LAST_SEEN_FILE);
    this.#bytes -= entry.lastSeenBytes;
    entry.lastSeenBytes = undefined;
    await this.#dropIfEmpty(ref, entry);
  }

  /** Writes a record; returns its file name. */
  async writeRecord(ref: ObjectRef, record: NewRecord): Promise<string> {
    const dir = await this.#makeDir(ref);
    const entry = this.#entryFor(ref);
    let name = recordFileName(record.meta.recordedAt, record.meta.resourceVersion);
    // Two records of one version in the same millisecond: the second goes a millisecond later, not over it.
    for (let at = Date.parse(record.meta.recordedAt) + 1; entry.records.includes(name); at++) name = recordFileName(new Date(at).toISOString(), record.meta.resourceVersion);
    this.#bytes += await writeFileAtomic(dir, name, formatRecord(record.meta, record.object));
    entry.records.push(name);
    entry.records.sort();
    this.#records++;
    const time = recordTime(name);
    if (this.#lastRecordMs === undefined || time > this.#lastRecordMs) this.#lastRecordMs = time;
    return name;
  }

  /** Applies the retention policy to one object's records; returns how many were removed. */
  async retain(ref: ObjectRef, policy: RetentionPolicy, now: number): Promise<number> {
    const entry = this.#entry(ref);
    if (!entry) return 0;
    const remove = recordsToRemove(entry.records, policy, now);
    const dir = this.#dir(ref);
    for (const name of remove) {
      const { size } = await stat(join(dir, name));
      await removeFile(dir, name);
      entry.records.splice(entry.records.indexOf(name), 1);
      this.#records--;
      this.#bytes -= size;
    }
    await this.#dropIfEmpty(ref, entry);
    return remove.length;
  }

  /** Objects with at least one record that the policy would remove at `now` (for the periodic sweep). */
  expired(policy: RetentionPolicy, now: number): ObjectRef[] {
    const refs: ObjectRef[] = [];
    this.#forEach((ref, entry) => {
      if (recordsToRemove(entry.records, policy, now).length > 0) refs.push(ref);
    });
    return refs;
  }

  /** When the next record passes maxAge (ms since the epoch), or undefined when none will. */
  nextExpiry(policy: RetentionPolicy): number | undefined {
    let next: number | undefined;
    this.#forEach((_ref, entry) => {
      const at = nextExpiry(entry.records[0], policy);
      if (at !== undefined && (next === undefined || at < next)) next = at;
    });
    return next;
  }

  #forEach(visit: (ref: ObjectRef, entry: Entry) => void): void {
    for (const [folder, byNamespace] of this.#index) {
      const gk = parseKindFolder(folder)!;
      for (const [nsFolder, byName] of byNamespace) {
        for (const [name, entry] of byName) visit({ ...gk, namespace: nsFolder === CLUSTER_FOLDER ? '' : nsFolder, name }, entry);
      }
    }
  }

  #parts(ref: ObjectRef): [string, string, string] {
    return [ref.namespace || CLUSTER_FOLDER, kindFolder(ref.group, ref.kind), ref.name];
  }

  #dir(ref: ObjectRef): string {
    return join(this.root, ...this.#parts(ref));
  }

  #makeDir(ref: ObjectRef): Promise<string> {
    // An object the index knows has its folder already (entries and folders come and go together): no
    // mkdir calls on the hot path of every write.
    if (this.#entry(ref)) return Promise.resolve(this.#dir(ref));
    return makeDirs(this.root, this.#parts(ref));
  }

  #entry(ref: ObjectRef): Entry | undefined {
    const [ns, kind, name] = this.#parts(ref);
    return this.#index.get(kind)?.get(ns)?.get(name);
  }

  #entryFor(ref: ObjectRef): Entry {
    const [ns, kind, name] = this.#parts(ref);
    return entryIn(this.#index, kind, ns, name);
  }

  async #dropIfEmpty(ref: ObjectRef, entry: Entry): Promise<void> {
    if (entry.records.length > 0 || entry.lastSeenBytes !== undefined) return;
    const [ns, kind, name] = this.#parts(ref);
    const byName = this.#index.get(kind)?.get(ns);
    byName?.delete(name);
    if (byName?.size === 0) this.#index.get(kind)?.delete(ns);
    await removeEmptyDir(this.#dir(ref));
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
          const files = await readdir(dir, { withFileTypes: true });
          const records: string[] = [];
          let lastSeenBytes: number | undefined;
          for (const file of files) {
            if (!file.isFile()) continue;
            if (isTempName(file.name)) {
              // A write that a crash interrupted before its rename: never a record, so it goes.
              await removeFile(dir, file.name);
            } else if (file.name === LAST_SEEN_FILE) {
              lastSeenBytes = (await stat(join(dir, file.name))).size;
              this.#bytes += lastSeenBytes;
            } else if (isRecordFileName(file.name)) {
              records.push(file.name);
              this.#bytes += (await stat(join(dir, file.name))).size;
            }
          }
          if (records.length === 0 && lastSeenBytes === undefined) continue;
          const entry = entryIn(this.#index, kind, ns, name);
          entry.records = records.sort();
          entry.lastSeenBytes = lastSeenBytes;
          this.#records += records.length;
          const newest = records.at(-1);
          if (newest !== undefined) {
            const time = recordTime(newest);
            if (this.#lastRecordMs === undefined || time > this.#lastRecordMs) this.#lastRecordMs = time;
          }
        }
      }
    }
  }
}

function entryIn(index: Map<string, Map<string, Map<string, Entry>>>, kind: string, ns: string, name: string): Entry {
  let byNamespace = index.get(kind);
  if (!byNamespace) index.set(kind, (byNamespace = new Map<string, Map<string, Entry>>()));
  let byName = byNamespace.get(ns);
  if (!byName) byNamespace.set(ns, (byName = new Map<string, Entry>()));
  let entry = byName.get(name);
  if (!entry) byName.set(name, (entry = { records: [], lastSeenBytes: undefined }));
  return entry;
}

/** Subdirectories, skipping hidden entries (the redaction key, temporary files). */
async function subdirectories(dir: string): Promise<string[]> {
  const entries = await readdir(dir, { withFileTypes: true });
  return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name);
}

async function loadRedactionKey(root: string): Promise<Uint8Array> {
  const file = join(root, REDACTION_KEY_FILE);
  try {
    const key = Buffer.from((await readFile(file, 'utf8')).trim(), 'hex');
    if (key.length >= 32) return key;
    throw new Error(`${file} holds ${key.length} bytes, not the 32 written when the store was created`);
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  const key = randomBytes(32);
  // Written once, atomically: a changed key would make every redacted Secret look changed.
  await writeFileAtomic(root, REDACTION_KEY_FILE, `${key.toString('hex')}\n`);
  return key;
}
