// What a record store knows without reading anything: each object's record names and sizes and the size of
// its last-seen copy, and the totals that status reports (records kept, bytes used, the newest record's
// time). Built once when a store opens, from a listing (file names and sizes, never contents), and kept
// current by the store's own writes and removals. Shared by the store on a volume and the one on an object
// store, which differ only in how they read and write.
import { isRecordFileName, recordFileName, recordTime } from '../record/record-file.ts';
import { nextExpiry, recordsToRemove, type RetentionPolicy } from '../record/retention.ts';
import { CLUSTER_FOLDER, kindFolder, LAST_SEEN_FILE, objectFolders, parseKindFolder, type ObjectRef } from './layout.ts';

interface Entry {
  /** Record file names, oldest first. */
  records: string[];
  /** Size of each record in bytes. */
  sizes: Map<string, number>;
  /** Size of the last-seen copy; undefined when there is none. */
  lastSeenBytes: number | undefined;
}

export interface StoreStats {
  records: number;
  bytes: number;
  /** When the newest record was written (ms since the epoch), if any. */
  lastRecordMs: number | undefined;
}

export class StoreIndex {
  /** kind folder → namespace folder → name → entry */
  readonly #index = new Map<string, Map<string, Map<string, Entry>>>();
  #records = 0;
  #bytes = 0;
  #lastRecordMs: number | undefined;

  stats(): StoreStats {
    return { records: this.#records, bytes: this.#bytes, lastRecordMs: this.#lastRecordMs };
  }

  /** Whether the store holds anything of the object (its folder exists, on a volume). */
  has(ref: ObjectRef): boolean {
    return this.#entry(ref) !== undefined;
  }

  /** Record file names of an object, oldest first. */
  records(ref: ObjectRef): readonly string[] {
    return this.#entry(ref)?.records ?? [];
  }

  hasLastSeen(ref: ObjectRef): boolean {
    return this.#entry(ref)?.lastSeenBytes !== undefined;
  }

  /** Objects of a kind that have a last-seen copy, in one namespace or all ('' for cluster-scoped objects). */
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

  /** The file name a new record gets: two records of one version in the same millisecond go a millisecond apart, never over each other. */
  newRecordName(ref: ObjectRef, recordedAt: string, resourceVersion: string): string {
    const taken = this.#entry(ref)?.sizes;
    let name = recordFileName(recordedAt, resourceVersion);
    for (let at = Date.parse(recordedAt) + 1; taken?.has(name); at++) name = recordFileName(new Date(at).toISOString(), resourceVersion);
    return name;
  }

  addRecord(ref: ObjectRef, name: string, bytes: number): void {
    const entry = this.#entryFor(ref);
    const previous = entry.sizes.get(name);
    if (previous === undefined) {
      entry.records.push(name);
      entry.records.sort();
      this.#records++;
    }
    entry.sizes.set(name, bytes);
    this.#bytes += bytes - (previous ?? 0);
    const time = recordTime(name);
    if (this.#lastRecordMs === undefined || time > this.#lastRecordMs) this.#lastRecordMs = time;
  }

  removeRecord(ref: ObjectRef, name: string): void {
    const entry = this.#entry(ref);
    const bytes = entry?.sizes.get(name);
    if (!entry || bytes === undefined) return;
    entry.sizes.delete(name);
    entry.records.splice(entry.records.indexOf(name), 1);
    this.#records--;
    this.#bytes -= bytes;
  }

  setLastSeen(ref: ObjectRef, bytes: number): void {
    const entry = this.#entryFor(ref);
    this.#bytes += bytes - (entry.lastSeenBytes ?? 0);
    entry.lastSeenBytes = bytes;
  }

  clearLastSeen(ref: ObjectRef): void {
    const entry = this.#entry(ref);
    if (entry?.lastSeenBytes === undefined) return;
    this.#bytes -= entry.lastSeenBytes;
    entry.lastSeenBytes = undefined;
  }

  /** Forgets an object with neither records nor a last-seen copy; true when it did. */
  dropIfEmpty(ref: ObjectRef): boolean {
    const entry = this.#entry(ref);
    if (!entry || entry.records.length > 0 || entry.lastSeenBytes !== undefined) return false;
    const [ns, kind, name] = objectFolders(ref);
    const byName = this.#index.get(kind)?.get(ns);
    byName?.delete(name);
    if (byName?.size === 0) this.#index.get(kind)?.delete(ns);
    if (this.#index.get(kind)?.size === 0) this.#index.delete(kind);
    return true;
  }

  /** The records of an object that the policy removes at `now`, oldest first. */
  toRemove(ref: ObjectRef, policy: RetentionPolicy, now: number): string[] {
    return recordsToRemove(this.records(ref), policy, now);
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

  /**
   * Takes in one listed file of an object's folder. Returns false for a name that is neither a record nor a
   * last-seen copy (the caller decides what that is), or a folder that is not `<group>.<kind>`.
   */
  addListed(folders: readonly [string, string, string], file: string, bytes: number): boolean {
    const [ns, kind, name] = folders;
    const gk = parseKindFolder(kind);
    if (!gk) return false;
    const ref: ObjectRef = { ...gk, namespace: ns === CLUSTER_FOLDER ? '' : ns, name };
    if (file === LAST_SEEN_FILE) this.setLastSeen(ref, bytes);
    else if (isRecordFileName(file)) this.addRecord(ref, file, bytes);
    else return false;
    return true;
  }

  #forEach(visit: (ref: ObjectRef, entry: Entry) => void): void {
    for (const [folder, byNamespace] of this.#index) {
      const gk = parseKindFolder(folder)!;
      for (const [nsFolder, byName] of byNamespace) {
        for (const [name, entry] of byName) visit({ ...gk, namespace: nsFolder === CLUSTER_FOLDER ? '' : nsFolder, name }, entry);
      }
    }
  }

  #entry(ref: ObjectRef): Entry | undefined {
    const [ns, kind, name] = objectFolders(ref);
    return this.#index.get(kind)?.get(ns)?.get(name);
  }

  #entryFor(ref: ObjectRef): Entry {
    const [ns, kind, name] = objectFolders(ref);
    let byNamespace = this.#index.get(kind);
    if (!byNamespace) this.#index.set(kind, (byNamespace = new Map<string, Map<string, Entry>>()));
    let byName = byNamespace.get(ns);
    if (!byName) byNamespace.set(ns, (byName = new Map<string, Entry>()));
    let entry = byName.get(name);
    if (!entry) byName.set(name, (entry = { records: [], sizes: new Map(), lastSeenBytes: undefined }));
    return entry;
  }
}
