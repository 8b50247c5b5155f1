// Where one ChangeRecorder's records are, as the reconciler resolves it from spec.storage: a directory on the
// recorder's volume, or a key prefix in an object store bucket whose credentials Secret is mounted into the
// recorder's pod. Opening it gives the RecordStore the session writes through.
import { stat } from 'node:fs/promises';
import { locationKind, locationPrefix, openStore, StorageError, type Location, type ObjectStore } from '@quorum/storage';
import { ObjectRecordStore } from './object-record-store.ts';
import { FileRecordStore, type RecordStore, type StoreLog } from './record-store.ts';
import type { RedactionKeySource } from './redaction-keys.ts';

export type StoreLocation =
  | { directory: string }
  /** `objectStore` names exactly one of s3, gcs or azure, with its prefix; `credentialsDir` is where its Secret is mounted. */
  | { objectStore: Location; credentialsDir: string };

/** Two locations are the same store exactly when their keys are equal. */
export function storeLocationKey(location: StoreLocation): string {
  return 'directory' in location ? `directory:${location.directory}` : `objectStore:${JSON.stringify(location.objectStore)}`;
}

/** The store at `location`, created if needed (a directory, its marker), its redaction key kept by `keys`. */
export async function openRecordStore(location: StoreLocation, keys: RedactionKeySource, log?: StoreLog): Promise<RecordStore> {
  if ('directory' in location) return FileRecordStore.open(location.directory, keys, log);
  return ObjectRecordStore.open(await openObjectStore(location), locationPrefix(location.objectStore), keys, log);
}

/** The object store of a location, once its credentials Secret is mounted where the location says. */
export async function openObjectStore(location: { objectStore: Location; credentialsDir: string }): Promise<ObjectStore> {
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
  return openStore(objectStore, credentialsDir);
}
