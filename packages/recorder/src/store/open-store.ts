// Where one ChangeRecorder's records are, as the reconciler resolves it from spec.storage: a directory on the
// recorder's volume, or a key prefix in an object store bucket whose credentials Secret is mounted into the
// recorder's pod. Opening it gives the RecordStore the session writes through.
import { stat } from 'node:fs/promises';
import { locationKind, locationPrefix, openStore, StorageError, type Location, type ObjectStore } from '@quorum/storage';
import { ObjectRecordStore } from './object-record-store.ts';
import { FileRecordStore, type RecordStore, type StoreLog } from './record-store.ts';
import type { RedactionKeySource } from './redaction-keys.ts';

/** A store in an object store, as a ChangeRecorder names it: `objectStore` with its prefix, and where its credentials Secret is mounted. */
export interface ObjectStoreSource {
  /** Its URI: `s3://bucket/prefix`, `gs://…`, `azure://container/prefix`. */
  name: string;
  /** For messages: the URI and the server. */
  description: string;
  objectStore: Location;
  credentialsDir: string;
}

export type StoreLocation =
  | { directory: string }
  /** `objectStore` names exactly one of s3, gcs or azure, with its prefix; `credentialsDir` is where its Secret is mounted. */
  | { objectStore: Location; credentialsDir: string };

/** Two locations are the same store exactly when their keys are equal. */
export function storeLocationKey(location: StoreLocation): string {
  return 'directory' in location ? `directory:${location.directory}` : `objectStore:${JSON.stringify(location.objectStore)}`;
}

/**
 * How long any one call to an object store may take (a record, a last-seen copy, a listing, a removal): a
 * server that accepts a connection and never answers must not hold a write, or a reader, for ever. A call past
 * it fails as StorageUnreachable, and the write is retried after its backoff.
 */
export const STORE_CALL_TIMEOUT_MS = 30_000;

/** The store at `location`, created if needed (a directory, its marker), its redaction key kept by `keys`. */
export async function openRecordStore(location: StoreLocation, keys: RedactionKeySource, log?: StoreLog, callTimeoutMs = STORE_CALL_TIMEOUT_MS): Promise<RecordStore> {
  if ('directory' in location) return FileRecordStore.open(location.directory, keys, log);
  return ObjectRecordStore.open(await openObjectStore(location, callTimeoutMs), locationPrefix(location.objectStore), keys, log);
}

/**
 * `store`, each of whose calls is aborted after `timeoutMs` (with the caller's own signal, if any). A
 * download's stream is bounded too: it must have ended by then.
 */
export function withCallTimeouts(store: ObjectStore, timeoutMs: number): ObjectStore {
  const bounded = async <T>(what: string, signal: AbortSignal | undefined, call: (signal: AbortSignal) => Promise<T>): Promise<T> => {
    const timeout = AbortSignal.timeout(timeoutMs);
    try {
      return await call(signal ? AbortSignal.any([signal, timeout]) : timeout);
    } catch (err) {
      if (!timeout.aborted || signal?.aborted) throw err;
      throw new StorageError('StorageUnreachable', `${store.description}: ${what} got no answer within ${timeoutMs / 1000} s`, err);
    }
  };
  return {
    description: store.description,
    chunksDieYoung: store.chunksDieYoung,
    upload: (key, body, opts = {}) => bounded(`upload of ${key}`, opts.signal, (signal) => store.upload(key, body, { ...opts, signal })),
    download: (key, opts = {}) => bounded(`download of ${key}`, opts.signal, (signal) => store.download(key, { ...opts, signal })),
    delete: (key, opts = {}) => bounded(`removal of ${key}`, opts.signal, (signal) => store.delete(key, { ...opts, signal })),
    list: (prefix, opts = {}) => bounded(`listing of ${prefix || 'the bucket'}`, opts.signal, (signal) => store.list(prefix, { ...opts, signal })),
    close: () => store.close(),
  };
}

/** The object store of a location, once its credentials Secret is mounted where the location says; each call bounded by `callTimeoutMs`. */
export async function openObjectStore(location: { objectStore: Location; credentialsDir: string }, callTimeoutMs = STORE_CALL_TIMEOUT_MS): Promise<ObjectStore> {
  const { objectStore, credentialsDir } = location;
  const kind = locationKind(objectStore);
  if (kind === 'pvc') throw new Error('a record store on a PVC is a directory, not an object store location');
  const secret = objectStore[kind]!.credentialsSecret;
  const mounted = await stat(credentialsDir).then(
    (info) => info.isDirectory(),
    () => false,
  );
  if (!mounted) {
    throw new StorageError(
      'CredentialsInvalid',
      `the credentials Secret ${secret} is not mounted into the recorder's pod (no ${credentialsDir}): install the recorder with it (recorderManifests({ storageSecrets: ['${secret}'] }))`,
    );
  }
  return withCallTimeouts(await openStore(objectStore, credentialsDir), callTimeoutMs);
}
