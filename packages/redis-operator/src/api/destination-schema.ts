// The RedisBackup destination's schema, built by the kit with @quorum/storage's patterns: loaded by the other
// schema modules, the generators and the backup agent, not by the operator's process.
import { destinationSchemas } from '@quorum/kit/schema';
import { ENDPOINT_PATTERN, KEY_PREFIX_PATTERN } from '@quorum/storage';

export const { DestinationSchema } = destinationSchemas({ endpointPattern: ENDPOINT_PATTERN, keyPrefixPattern: KEY_PREFIX_PATTERN, prefixExample: 'prod/redis' });
