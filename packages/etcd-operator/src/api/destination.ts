// Where a backup is stored: one object store bucket (S3, GCS, Azure Blob) or a PVC. Shared by EtcdBackup,
// EtcdBackupSchedule and EtcdCluster.spec.bootstrap.fromBackup, so the one schema is validated, defaulted
// and documented the same way everywhere. The schema is the kit's (every operator's backups take it,
// @quorum/kit backup-destination.ts), built with @quorum/storage's patterns; the types are assignable to
// @quorum/storage's Location types, which openStore() takes.
import { destinationSchemas } from '@quorum/kit/schema';
import { ENDPOINT_PATTERN, KEY_PREFIX_PATTERN } from '@quorum/storage';

export { DESTINATION_EXACTLY_ONE, ENDPOINT_RULE, destinationIssues, type AzureDestination, type Destination, type GcsDestination, type PvcDestination, type S3Destination } from '@quorum/kit';

export const { S3DestinationSchema, GcsDestinationSchema, AzureDestinationSchema, PvcDestinationSchema, DestinationSchema } = destinationSchemas({
  endpointPattern: ENDPOINT_PATTERN,
  keyPrefixPattern: KEY_PREFIX_PATTERN,
  prefixExample: 'prod/etcd',
});
