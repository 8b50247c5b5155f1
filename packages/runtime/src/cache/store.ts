// An in-memory store of objects by key, with indexes: by namespace, by owner UID, and any custom ones.
// Values are the objects as received (minus what a transform drops); callers must not mutate them.
//
// Laid out for memory, since an operator's cache is most of its heap (issue 24): objects are kept by namespace,
// then name (the name strings the objects already hold are the keys: no `namespace/name` string per object), the
// namespace index is that layout itself, and other indexes file the objects themselves (no key strings). On
// upsert the store takes the object over and replaces the strings that repeat across objects (namespace,
// apiVersion, kind, creationTimestamp, label values, owner references' apiVersion, kind and name) by one shared
// copy of each: equal strings, so nothing a reader sees changes. The shared copies are counted and dropped with
// the last object holding them.
import { keyString, parseKey, type KubeObject } from '../object.ts';

/** Returns the index values an object is filed under (none: not indexed). */
export type Indexer<T extends KubeObject> = (obj: T) => string[];

export const NAMESPACE_INDEX = 'namespace';
export const OWNER_UID_INDEX = 'ownerUid';

/** The namespace ('' when cluster-scoped). The store answers this indexer from its layout, without an index. */
export const byNamespace: Indexer<KubeObject> = (obj) => [obj.metadata.namespace ?? ''];

/** The UIDs of the object's owners. */
export const byOwnerUid: Indexer<KubeObject> = (obj) => (obj.metadata.ownerReferences ?? []).map((o) => o.uid);

export function defaultIndexers<T extends KubeObject>(): Record<string, Indexer<T>> {
  return { [NAMESPACE_INDEX]: byNamespace, [OWNER_UID_INDEX]: byOwnerUid };
}

export class Store<T extends KubeObject> {
  /** namespace ('' for cluster-scoped) → name → object */
  readonly #byNamespace = new Map<string, Map<string, T>>();
  #size = 0;
  /** index name → index value → objects; the byNamespace indexer has none (see byIndex). */
  readonly #indexes = new Map<string, { indexer: Indexer<T>; values: Map<string, Set<T>> }>();
  readonly #namespaceIndexes = new Set<string>();
  readonly #strings = new StringPool();

  constructor(indexers: Record<string, Indexer<T>> = defaultIndexers<T>()) {
    for (const [name, indexer] of Object.entries(indexers)) {
      if (indexer === byNamespace) this.#namespaceIndexes.add(name);
      else this.#indexes.set(name, { indexer, values: new Map() });
    }
  }

  get size(): number {
    return this.#size;
  }

  /** How many distinct strings the stored objects share (see the top of this file). */
  get sharedStrings(): number {
    return this.#strings.size;
  }

  get(key: string): T | undefined {
    const { namespace, name } = parseKey(key);
    return this.#byNamespace.get(namespace)?.get(name);
  }

  list(): T[] {
    const out: T[] = [];
    for (const objects of this.#byNamespace.values()) for (const obj of objects.values()) out.push(obj);
    return out;
  }

  keys(): string[] {
    const out: string[] = [];
    for (const [namespace, objects] of this.#byNamespace) for (const name of objects.keys()) out.push(keyString({ namespace, name }));
    return out;
  }

  /** Objects filed under `value` in index `name` (e.g. byIndex('ownerUid', parent.metadata.uid)). */
  byIndex(name: string, value: string): T[] {
    if (this.#namespaceIndexes.has(name)) return [...(this.#byNamespace.get(value)?.values() ?? [])];
    const index = this.#indexes.get(name);
    if (!index) throw new Error(`store: no index ${name} (have: ${[...this.#namespaceIndexes, ...this.#indexes.keys()].join(', ')})`);
    return [...(index.values.get(value) ?? [])];
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const namespace = obj.metadata.namespace ?? '';
    const name = obj.metadata.name ?? '';
    let objects = this.#byNamespace.get(namespace);
    if (!objects) this.#byNamespace.set(namespace, (objects = new Map<string, T>()));
    const previous = objects.get(name);
    // Shared before the previous object releases its strings, so the copies they have in common stay the same.
    shareStrings(obj, this.#strings);
    if (previous) this.#unfile(previous);
    else this.#size++;
    objects.set(name, obj);
    this.#file(obj);
    return previous;
  }

  /** Removes by key; returns what was there. */
  remove(key: string): T | undefined {
    const { namespace, name } = parseKey(key);
    const objects = this.#byNamespace.get(namespace);
    const previous = objects?.get(name);
    if (!objects || !previous) return undefined;
    this.#unfile(previous);
    objects.delete(name);
    if (objects.size === 0) this.#byNamespace.delete(namespace);
    this.#size--;
    return previous;
  }

  #file(obj: T): void {
    for (const { indexer, values } of this.#indexes.values()) {
      for (const value of indexer(obj)) {
        let objects = values.get(value);
        if (!objects) values.set(value, (objects = new Set()));
        objects.add(obj);
      }
    }
  }

  #unfile(obj: T): void {
    for (const { indexer, values } of this.#indexes.values()) {
      for (const value of indexer(obj)) {
        const objects = values.get(value);
        objects?.delete(obj);
        if (objects?.size === 0) values.delete(value);
      }
    }
    releaseStrings(obj, this.#strings);
  }
}

/** One copy of each string in use, counted by the objects holding it. */
class StringPool {
  readonly #copies = new Map<string, { value: string; holders: number }>();

  share(value: string): string {
    const copy = this.#copies.get(value);
    if (copy) {
      copy.holders++;
      return copy.value;
    }
    this.#copies.set(value, { value, holders: 1 });
    return value;
  }

  release(value: string): void {
    const copy = this.#copies.get(value);
    if (copy && --copy.holders === 0) this.#copies.delete(value);
  }

  get size(): number {
    return this.#copies.size;
  }
}

/** A record's string values (labels, the object itself) whose repeats are shared; frozen records are left as they are. */
type StringFields = Record<string, unknown>;

const TOP_FIELDS = ['apiVersion', 'kind'] as const;
const METADATA_FIELDS = ['namespace', 'creationTimestamp'] as const;
const OWNER_FIELDS = ['apiVersion', 'kind', 'name'] as const;

/** Visits every shared field of `obj`: its record and the field's name. */
function sharedFields(obj: KubeObject, visit: (record: StringFields, field: string) => void): void {
  const metadata = obj.metadata as unknown as StringFields;
  for (const field of TOP_FIELDS) visit(obj as unknown as StringFields, field);
  for (const field of METADATA_FIELDS) visit(metadata, field);
  const labels = obj.metadata.labels as StringFields | undefined;
  if (labels) for (const field in labels) visit(labels, field);
  for (const owner of obj.metadata.ownerReferences ?? []) for (const field of OWNER_FIELDS) visit(owner as unknown as StringFields, field);
}

function shareStrings(obj: KubeObject, pool: StringPool): void {
  sharedFields(obj, (record, field) => {
    const value = record[field];
    if (typeof value !== 'string') return;
    // Equal either way: the assignment swaps this object's copy for the shared one.
    const shared = pool.share(value);
    if (!Object.isFrozen(record)) record[field] = shared;
  });
}

function releaseStrings(obj: KubeObject, pool: StringPool): void {
  sharedFields(obj, (record, field) => {
    const value = record[field];
    if (typeof value === 'string') pool.release(value);
  });
}
