// A folder on a PersistentVolumeClaim, mounted into the agent's pod. A backup is written to a hidden
// `.NAME.partial` file beside its final name, flushed to disk, and renamed into place only once the body
// ended without error: a reader never sees a file that is not whole.
import { createWriteStream } from 'node:fs';
import { mkdir, open, readdir, rename, rm, stat } from 'node:fs/promises';
import { basename, dirname, join, relative, resolve, sep } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { isPvcKey, type PvcLocation } from './location.ts';
import { errorText, StorageError } from './errors.ts';
import { guardedUpload, type CallOptions, type ObjectStore, type StoredObject, type UploadOptions, type UploadResult } from './store.ts';

const PARTIAL = /^\..*\.partial$/;

function fsCode(err: unknown): string {
  return typeof err === 'object' && err !== null && 'code' in err && typeof err.code === 'string' ? err.code : '';
}

/** The hidden file an upload to `path` writes before it is complete. */
export function partialPath(path: string): string {
  return join(dirname(path), `.${basename(path)}.partial`);
}

export class PvcStore implements ObjectStore {
  readonly description: string;
  /** A file stream queues chunks until the disk took them. */
  readonly chunksDieYoung = false;
  readonly #root: string;
  readonly #claim: string;

  constructor(destination: PvcLocation, root: string) {
    this.#root = resolve(root);
    this.#claim = destination.claimName;
    this.description = `pvc://${destination.claimName} mounted at ${this.#root}`;
  }

  async upload(key: string, body: Readable, opts: UploadOptions = {}): Promise<UploadResult> {
    const path = this.#path(key);
    const partial = partialPath(path);
    const stored = await guardedUpload(body, opts, async (stream) => {
      try {
        await mkdir(dirname(path), { recursive: true });
        // `flush` fsyncs the file before it is closed, so the rename below never publishes unwritten data.
        await pipeline(stream, createWriteStream(partial, { mode: 0o640, flush: true }));
        await rename(partial, path);
        await syncDirectory(dirname(path));
      } catch (err) {
        await rm(partial, { force: true }).catch(() => undefined);
        throw this.#classify(err, `writing ${key}`);
      }
    });
    return { key, ...stored };
  }

  async download(key: string, _opts: CallOptions = {}): Promise<Readable> {
    const path = this.#path(key);
    try {
      const handle = await open(path, 'r');
      // The handle is closed with the stream.
      return handle.createReadStream();
    } catch (err) {
      throw this.#classify(err, `reading ${key}`, key);
    }
  }

  async delete(key: string, _opts: CallOptions = {}): Promise<void> {
    try {
      await rm(this.#path(key), { force: true });
    } catch (err) {
      throw this.#classify(err, `deleting ${key}`);
    }
  }

  async list(prefix: string, _opts: CallOptions = {}): Promise<StoredObject[]> {
    // Start at the deepest folder the prefix names whole; an absent one holds nothing.
    const folder = prefix.includes('/') ? prefix.slice(0, prefix.lastIndexOf('/')) : '';
    const start = folder === '' ? this.#root : this.#path(folder);
    const objects: StoredObject[] = [];
    let names: string[];
    try {
      names = await readdir(start, { recursive: true });
    } catch (err) {
      if (fsCode(err) === 'ENOENT' && start !== this.#root) return [];
      throw this.#classify(err, 'listing');
    }
    for (const name of names) {
      if (PARTIAL.test(basename(name))) continue;
      const path = join(start, name);
      const key = relative(this.#root, path).split(sep).join('/');
      if (!key.startsWith(prefix)) continue;
      const info = await stat(path).catch(() => undefined);
      if (!info?.isFile()) continue;
      objects.push({ key, sizeBytes: info.size, lastModified: info.mtime });
    }
    return objects;
  }

  close(): void {}

  /** The file for `key`, which must stay inside the volume. */
  #path(key: string): string {
    if (!isPvcKey(key)) throw new StorageError('StorageFailed', `not a valid object key for a PVC: ${JSON.stringify(key)}`);
    return join(this.#root, ...key.split('/'));
  }

  #classify(err: unknown, what: string, key?: string): unknown {
    if (err instanceof StorageError) return err;
    const code = fsCode(err);
    if (code === '') return err;
    const where = `PersistentVolumeClaim ${this.#claim} (mounted at ${this.#root})`;
    if (code === 'ENOENT' && key !== undefined) return new StorageError('ObjectNotFound', `object ${key} does not exist on ${where}`, err);
    if (code === 'EACCES' || code === 'EPERM' || code === 'EROFS') {
      return new StorageError('AccessDenied', `access denied: ${what} on ${where} was refused (${code}): the volume must be writable by the agent's user (uid ${process.getuid?.() ?? '?'}): ${errorText(err)}`, err);
    }
    return new StorageError('StorageFailed', `${what} on ${where} failed (${code}): ${errorText(err)}`, err);
  }
}

async function syncDirectory(path: string): Promise<void> {
  // The rename itself is durable only once its directory is; some filesystems refuse to fsync a directory.
  const handle = await open(path, 'r');
  try {
    await handle.sync().catch(() => undefined);
  } finally {
    await handle.close();
  }
}

export async function openPvc(destination: PvcLocation, root: string | undefined): Promise<PvcStore> {
  if (root === undefined) throw new StorageError('StorageFailed', `a pvc destination needs the folder its claim ${destination.claimName} is mounted at (--pvc-root)`);
  const info = await stat(root).catch(() => undefined);
  if (!info?.isDirectory()) throw new StorageError('BucketNotFound', `PersistentVolumeClaim ${destination.claimName} is not mounted: ${root} is not a folder`);
  return new PvcStore(destination, root);
}
