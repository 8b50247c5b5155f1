// @quorum/storage: one ObjectStore per location kind (S3, GCS, Azure Blob, a PVC folder), opened from the
// location and the mounted credentials Secret. Each SDK is loaded only when its kind is used. The etcd
// operator stores backups through it, the change recorder its records.
import { locationKind, type Location } from './location.ts';
import type { ObjectStore, StoreOptions } from './store.ts';

export { StorageError, type StorageFailureReason } from './errors.ts';
export type { CallOptions, ObjectStore, StoredObject, StoreOptions, UploadOptions, UploadResult } from './store.ts';
export {
  CREDENTIAL_KEYS,
  ENDPOINT_PATTERN,
  KEY_PREFIX_PATTERN,
  PVC_KEY_RULE,
  isPvcKey,
  locationKind,
  locationPrefix,
  locationURI,
  type AzureLocation,
  type GcsLocation,
  type Location,
  type LocationKind,
  type PvcLocation,
  type S3Location,
} from './location.ts';

/**
 * The store for `destination`. `credentialsDir` is where the credentials Secret is mounted (one file per
 * key, see CREDENTIAL_KEYS); `pvcRoot` where a pvc location's claim is mounted.
 */
export async function openStore(destination: Location, credentialsDir: string | undefined, pvcRoot?: string, options: StoreOptions = {}): Promise<ObjectStore> {
  switch (locationKind(destination)) {
    case 's3': {
      const { openS3 } = await import('./s3.ts');
      return openS3(destination.s3!, credentialsDir, options);
    }
    case 'gcs': {
      const { openGcs } = await import('./gcs.ts');
      return openGcs(destination.gcs!, credentialsDir, options);
    }
    case 'azure': {
      const { openAzure } = await import('./azure.ts');
      return openAzure(destination.azure!, credentialsDir, options);
    }
    case 'pvc': {
      const { openPvc } = await import('./pvc.ts');
      return openPvc(destination.pvc!, pvcRoot);
    }
  }
}
