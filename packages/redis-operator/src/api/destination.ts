// Where Redis backups are stored: the kit's destination schema (shared with the etcd operator's backups: one
// bucket of S3, GCS or Azure Blob, or a folder on a PVC; https except to an in-cluster Service), built with
// @quorum/storage's patterns.
import type { Static } from '@sinclair/typebox';
import { destinationSchemas } from '@quorum/kit/schema';
import { ENDPOINT_PATTERN, KEY_PREFIX_PATTERN } from '@quorum/storage';

export const { DestinationSchema } = destinationSchemas({ endpointPattern: ENDPOINT_PATTERN, keyPrefixPattern: KEY_PREFIX_PATTERN, prefixExample: 'prod/redis' });
export type BackupDestination = Static<typeof DestinationSchema>;
