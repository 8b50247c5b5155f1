// An in-memory store of objects by key, with indexes: by namespace, by owner UID, and any custom ones.
// Values are the objects as received (minus what a transform drops); callers must not mutate them.
import { objectKeyString, type KubeObject } from '../object.ts';

/** Returns the index values an object is filed under (none: not indexed). */
export type Indexer<T extends KubeObject> = (obj: T) => string[];

export const NAMESPACE_INDEX = 'namespace';
export const OWNER_UID_INDEX = 'ownerUid';

export function defaultIndexers<T extends KubeObject>(): Record<string, Indexer<T>> {
  return {
    [NAMESPACE_INDEX]: (obj) => [obj.metadata.namespace ?? ''],
    [OWNER_UID_INDEX]: (obj) => (obj.metadata.ownerReferences ?? []).map((o) => o.uid),
  };
}

export class Store<T extends KubeObject> {
  readonly #items = new Map<string, T>();
  readonly #indexers: Record<string, Indexer<T>>;
  /** index name → index value → keys */
  readonly #indexes = new Map<string, Map<string, Set<string>>>();

  constructor(indexers: Record<string, Indexer<T>> = defaultIndexers<T>()) {
    this.#indexers = indexers;
    for (const name of Object.keys(indexers)) this.#indexes.set(name, new Map());
  }

  get size(): number {
    return this.#items.size;
  }

  get(key: string): T | undefined {
    return this.#items.get(key);
  }

  list(): T[] {
    return [...this.#items.values()];
  }

  keys(): string[] {
    return [...this.#items.keys()];
  }

  /** Objects filed under `value` in index `name` (e.g. byIndex('ownerUid', parent.metadata.uid)). */
  byIndex(name: string, value: string): T[] {
    const index = this.#indexes.get(name);
    if (!index) throw new Error(`store: no index ${name} (have: ${[...this.#indexes.keys()].join(', ')})`);
    const keys = index.get(value);
    if (!keys) return [];
    const out: T[] = [];
    for (const key of keys) {
      const obj = this.#items.get(key);
      if (obj) out.push(obj);
    }
    return out;
  }

  /** Inserts or replaces; returns the previous object. */
  upsert(obj: T): T | undefined {
    const key = objectKeyString(obj);
    const previous = this.#items.get(key);
    if (previous) this.#unindex(key, previous);
    this.#items.set(key, obj);
    this.#index(key, obj);
    return previous;
  }

  /** Removes by key; returns what was there. */
  remove(key: string): T | undefined {
    const previous = this.#items.get(key);
    if (!previous) return undefined;
    this.#unindex(key, previous);
    this.#items.delete(key);
    return previous;
  }

  #index(key: string, obj: T): void {
    for (const [name, indexer] of Object.entries(this.#indexers)) {
      const index = this.#indexes.get(name)!;
      for (const value of indexer(obj)) {
        let keys = index.get(value);
        if (!keys) index.set(value, (keys = new Set()));
        keys.add(key);
      }
    }
  }

  #unindex(key: string, obj: T): void {
    for (const [name, indexer] of Object.entries(this.#indexers)) {
      const index = this.#indexes.get(name)!;
      for (const value of indexer(obj)) {
        const keys = index.get(value);
        keys?.delete(key);
        if (keys?.size === 0) index.delete(value);
      }
    }
  }
}
