// Where a backup is stored: one object store bucket (S3, GCS, Azure Blob) or a PVC. Shared by EtcdBackup,
// EtcdBackupSchedule and EtcdCluster.spec.bootstrap.fromBackup, so the one schema is validated, defaulted
// and documented the same way everywhere. The schema is the kit's (every operator's backups take it,
// @quorum/kit backup-destination.ts), built with @quorum/storage's patterns in destination-schema.ts; the types
// are assignable to @quorum/storage's Location types, which openStore() takes.
export { DESTINATION_EXACTLY_ONE, ENDPOINT_RULE, destinationIssues, type AzureDestination, type Destination, type GcsDestination, type PvcDestination, type S3Destination } from '@quorum/kit';
