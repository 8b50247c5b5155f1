// Where a RedisBackup is stored: the kit's destination (every operator's backups take it), with @quorum/storage's
// patterns; the schema is built in destination-schema.ts, the type taken from it here with `import type`.
import type { Static } from '@sinclair/typebox';
import type { DestinationSchema } from './destination-schema.ts';

export type BackupDestination = Static<typeof DestinationSchema>;
