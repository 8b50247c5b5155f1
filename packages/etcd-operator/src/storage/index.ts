// Backup storage: one ObjectStore per destination kind (S3, GCS, Azure Blob, a PVC folder), opened from
// the destination and the mounted credentials Secret. Each SDK is loaded only when its kind is used.
import { destinationKind, type Destination } from '../api/destination.ts';
import type { ObjectStore, StoreOptions } from './store.ts';

export { StorageError, type StorageFailureReason } from './errors.ts';
export type { CallOptions, ObjectStore, StoredObject, StoreOptions, UploadOptions, UploadResult } from './store.ts';

/**
 * The store for `destination`. `credentialsDir` is where the credentials Secret is mounted (one file per
 * key, see CREDENTIAL_KEYS); `pvcRoot` where a pvc destination's claim is mounted.
 */
export async function openStore(destination: Destination, credentialsDir: string | undefined, pvcRoot?: string, options: StoreOptions = {}): Promise<ObjectStore> {
  switch (destinationKind(destination)) {
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
