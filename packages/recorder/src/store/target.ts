// Where a ChangeRecorder's records go, from its spec.storage: a directory below the recorder's storage root
// (`path`, the default), or a folder of an object store bucket (`s3`, `gcs` or `azure`, with `prefix`). Both
// default to the ChangeRecorder's name. The reconciler compares targets (two recorders must never write one
// store), names them in messages, and resolves them to the StoreLocation a session opens.
import { join } from 'node:path';
import { locationKind, locationURI, type Location } from '@quorum/storage';
import type { ChangeRecorder } from '../api/changerecorder.ts';
import { applyDefaults, type DefaultedSpec } from '../api/defaults.ts';
import type { ObjectStoreSource, StoreLocation } from './open-store.ts';

export type StorageTarget =
  /** Relative to the recorder's storage root. */
  | { path: string }
  /** Exactly one of s3, gcs or azure, its prefix set. */
  | { objectStore: Location };

export function storageTarget(recorderName: string, spec: DefaultedSpec): StorageTarget {
  const { path, s3, gcs, azure } = spec.storage;
  if (s3) return { objectStore: { s3: { ...s3, prefix: s3.prefix ?? recorderName } } };
  if (gcs) return { objectStore: { gcs: { ...gcs, prefix: gcs.prefix ?? recorderName } } };
  if (azure) return { objectStore: { azure: { ...azure, prefix: azure.prefix ?? recorderName } } };
  return { path: path ?? recorderName };
}

/** An object store location's folder and Secret, and what identifies its bucket: the kind, the server (as configured) and the bucket's name. */
function folderOf(location: Location): { bucketId: string; prefix: string; credentialsSecret: string } {
  const spec = location.s3 ?? location.gcs ?? location.azure;
  if (!spec) throw new Error('an object store target names one of s3, gcs or azure');
  const name = 'container' in spec ? spec.container : spec.bucket;
  const endpoint = spec.endpoint?.replace(/\/+$/, '') ?? '';
  return { bucketId: JSON.stringify([locationKind(location), endpoint, name]), prefix: spec.prefix ?? '', credentialsSecret: spec.credentialsSecret };
}

/** Whether two folders would mix their records: the same folder, or one inside the other. */
export function pathsOverlap(a: string, b: string): boolean {
  return a === b || a === '' || b === '' || a.startsWith(`${b}/`) || b.startsWith(`${a}/`);
}

/**
 * Whether two targets would mix their records: overlapping directories of the volume, or overlapping folders
 * of one bucket on one server. (The same bucket reached through two different endpoints is not recognised.)
 */
export function targetsOverlap(a: StorageTarget, b: StorageTarget): boolean {
  if ('path' in a || 'path' in b) return 'path' in a && 'path' in b && pathsOverlap(a.path, b.path);
  const x = folderOf(a.objectStore);
  const y = folderOf(b.objectStore);
  return x.bucketId === y.bucketId && pathsOverlap(x.prefix, y.prefix);
}

/** The name a store goes by in the history endpoint and `quorum history --recorder`: its path, or its URI (`s3://bucket/prefix`). */
export function targetName(target: StorageTarget): string {
  return 'path' in target ? target.path : objectStoreName(target.objectStore);
}

export function objectStoreName(location: Location): string {
  return locationURI(location, folderOf(location).prefix);
}

/** For messages: the directory, or the object store's URI and server. */
export function describeTarget(target: StorageTarget, storageRoot: string): string {
  if ('path' in target) return join(storageRoot, target.path);
  const endpoint = (target.objectStore.s3 ?? target.objectStore.gcs ?? target.objectStore.azure)?.endpoint;
  return `${objectStoreName(target.objectStore)}${endpoint ? ` at ${endpoint}` : ''}`;
}

/** The Secret an object store target reads its credentials from; undefined for a directory. */
export function credentialsSecretOf(target: StorageTarget): string | undefined {
  return 'path' in target ? undefined : folderOf(target.objectStore).credentialsSecret;
}

/** Where the session finds the target: the directory below `storageRoot`, or the bucket with its Secret's mount below `credentialsRoot`. */
export function storeLocationOf(target: StorageTarget, roots: { storageRoot: string; credentialsRoot: string }): StoreLocation {
  if ('path' in target) return { directory: join(roots.storageRoot, target.path) };
  return { objectStore: target.objectStore, credentialsDir: join(roots.credentialsRoot, folderOf(target.objectStore).credentialsSecret) };
}

/**
 * The stores in object stores that `recorders` name, for the history endpoint: each once, by name, with where
 * its credentials Secret is mounted. Those of deleted ChangeRecorders are not among them.
 */
export function objectStoreSources(recorders: readonly Pick<ChangeRecorder, 'metadata' | 'spec'>[], credentialsRoot: string): ObjectStoreSource[] {
  const sources = new Map<string, ObjectStoreSource>();
  for (const recorder of recorders) {
    const target = storageTarget(recorder.metadata.name ?? '', applyDefaults(recorder.spec));
    if ('path' in target) continue;
    const name = objectStoreName(target.objectStore);
    const credentialsDir = join(credentialsRoot, folderOf(target.objectStore).credentialsSecret);
    if (!sources.has(name)) sources.set(name, { name, description: describeTarget(target, ''), objectStore: target.objectStore, credentialsDir });
  }
  return [...sources.values()];
}
