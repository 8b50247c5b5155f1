// A record store's files, read-only, wherever the store is: a directory (the recorder's volume, or a copy of
// it), or a key prefix of an object store bucket. The history endpoint and `quorum history --path` read stores
// through this, never through a RecordStore (which creates folders, removes a crash's temporary files and may
// write a store's marker). Paths are the store's folders and file name, as in layout.ts.
import { readdir, readFile } from 'node:fs/promises';
import { join } from 'node:path';
import { text } from 'node:stream/consumers';
import { StorageError, type ObjectStore } from '@quorum/storage';

export interface StoreFiles {
  /** Where the store is, for messages. */
  readonly description: string;
  /** The sub-folders of `folder` (a path below the store; [] for its top), sorted, hidden ones left out; none when it is missing. */
  folders(folder: readonly string[]): Promise<string[]>;
  /**
   * The names of the files in `folder`; undefined when it is missing. `fresh` asks for them as they are now
   * (one object's records, when they are what is asked for) rather than from a listing a walk just made.
   */
  files(folder: readonly string[], fresh?: boolean): Promise<string[] | undefined>;
  /** A file's text; undefined when it is not there (retention may remove a record between a listing and a read). */
  read(file: readonly string[]): Promise<string | undefined>;
  /** A file as messages name it: its path, or its URI. */
  where(file: readonly string[]): string;
  /** Releases what it holds open. */
  close(): void;
}

const missing = (err: unknown): boolean => ['ENOENT', 'ENOTDIR'].includes((err as NodeJS.ErrnoException).code ?? '');

export class DirectoryFiles implements StoreFiles {
  readonly dir: string;
  readonly description: string;

  constructor(dir: string) {
    this.dir = dir;
    this.description = dir;
  }

  async folders(folder: readonly string[]): Promise<string[]> {
    try {
      const entries = await readdir(join(this.dir, ...folder), { withFileTypes: true });
      return entries.filter((e) => e.isDirectory() && !e.name.startsWith('.')).map((e) => e.name).sort();
    } catch (err) {
      if (missing(err)) return [];
      throw err;
    }
  }

  async files(folder: readonly string[], _fresh?: boolean): Promise<string[] | undefined> {
    try {
      return await readdir(join(this.dir, ...folder));
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  }

  async read(file: readonly string[]): Promise<string | undefined> {
    try {
      return await readFile(join(this.dir, ...file), 'utf8');
    } catch (err) {
      if (missing(err)) return undefined;
      throw err;
    }
  }

  where(file: readonly string[]): string {
    return join(this.dir, ...file);
  }

  close(): void {}
}

/** How long a listing of a whole store is reused: one request walks it folder by folder. */
const LISTING_TTL_MS = 2_000;

/**
 * The store below `base` (a prefix with its trailing slash) of an object store, opened on first use (so that
 * one store that cannot be opened fails only the requests that read it). Folders are key prefixes: the store
 * is listed whole once (names only) and the listing reused for LISTING_TTL_MS, so walking it costs one listing,
 * not one per folder; one object's folder asked for fresh is listed on its own.
 */
export class ObjectStoreFiles implements StoreFiles {
  readonly description: string;
  /** The store's URI (`s3://bucket/prefix`), which file names in messages start with. */
  readonly uri: string;
  readonly #base: string;
  readonly #open: () => Promise<ObjectStore>;
  #store: Promise<ObjectStore> | undefined;
  #listing: { at: number; keys: Promise<string[]> } | undefined;

  constructor(uri: string, description: string, base: string, open: () => Promise<ObjectStore>) {
    this.uri = uri;
    this.description = description;
    this.#base = base;
    this.#open = open;
  }

  async folders(folder: readonly string[]): Promise<string[]> {
    const prefix = this.#prefix(folder);
    const found = new Set<string>();
    for (const key of await this.#keys()) {
      if (!key.startsWith(prefix)) continue;
      const rest = key.slice(prefix.length);
      const slash = rest.indexOf('/');
      if (slash > 0 && !rest.startsWith('.')) found.add(rest.slice(0, slash));
    }
    return [...found].sort();
  }

  async files(folder: readonly string[], fresh = false): Promise<string[] | undefined> {
    const prefix = this.#prefix(folder);
    const keys = fresh ? (await (await this.#opened()).list(prefix)).map((o) => o.key) : (await this.#keys()).filter((k) => k.startsWith(prefix));
    const names = keys.map((k) => k.slice(prefix.length)).filter((rest) => rest !== '' && !rest.includes('/'));
    return keys.length === 0 ? undefined : names;
  }

  async read(file: readonly string[]): Promise<string | undefined> {
    try {
      return await text(await (await this.#opened()).download(this.#base + file.join('/')));
    } catch (err) {
      if (err instanceof StorageError && err.reason === 'ObjectNotFound') return undefined;
      throw err;
    }
  }

  where(file: readonly string[]): string {
    return `${this.uri}/${file.join('/')}`;
  }

  close(): void {
    void this.#store?.then((store) => store.close(), () => undefined);
  }

  #opened(): Promise<ObjectStore> {
    if (!this.#store) {
      const store = this.#open();
      this.#store = store;
      // A store that could not be opened (a Secret not mounted yet) is tried again at the next request.
      store.catch(() => {
        if (this.#store === store) this.#store = undefined;
      });
    }
    return this.#store;
  }

  #prefix(folder: readonly string[]): string {
    return folder.length === 0 ? this.#base : `${this.#base}${folder.join('/')}/`;
  }

  #keys(): Promise<string[]> {
    const now = Date.now();
    if (!this.#listing || now - this.#listing.at > LISTING_TTL_MS) {
      const keys = this.#opened().then((store) => store.list(this.#base)).then((objects) => objects.map((o) => o.key));
      this.#listing = { at: now, keys };
      keys.catch(() => {
        if (this.#listing?.keys === keys) this.#listing = undefined;
      });
    }
    return this.#listing.keys;
  }
}
