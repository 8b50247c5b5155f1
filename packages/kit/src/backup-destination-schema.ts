// The destination schema's builders and the backup agents' argument parser: the parts of backup-destination.ts
// that need TypeBox at run time, apart so that an operator process loads TypeBox only if it builds a schema (the
// API modules, generators) or parses an agent's argument (the backup agents). `@quorum/kit/schema`.
import { Value } from '@sinclair/typebox/value';
import { Type, type TString } from '@sinclair/typebox';
import {
  DESTINATION_EXACTLY_ONE,
  destinationIssues,
  ENDPOINT_RULE,
  OBJECT_NAME_PATTERN,
  type AzureDestinationSchemaType,
  type Destination,
  type DestinationSchemaOptions,
  type DestinationSchemaType,
  type GcsDestinationSchemaType,
  type PvcDestinationSchemaType,
  type S3DestinationSchemaType,
} from './backup-destination.ts';

export interface DestinationSchemas {
  S3DestinationSchema: S3DestinationSchemaType;
  GcsDestinationSchema: GcsDestinationSchemaType;
  AzureDestinationSchema: AzureDestinationSchemaType;
  PvcDestinationSchema: PvcDestinationSchemaType;
  DestinationSchema: DestinationSchemaType;
}

/** The destination schema and its four kinds, built once per API that embeds them. */
export function destinationSchemas(options: DestinationSchemaOptions): DestinationSchemas {
  const secretName = (what: string): TString => Type.String({ description: what, pattern: OBJECT_NAME_PATTERN, minLength: 1, maxLength: 253 });
  const prefix = Type.String({
    description: `Key prefix for the stored objects (e.g. \`${options.prefixExample}\`); '' stores them at the top of the bucket.`,
    pattern: options.keyPrefixPattern,
    maxLength: 512,
    default: '',
  });
  const endpoint = (what: string): TString =>
    Type.String({ description: `${what} https, or http only to an in-cluster Service (\`<service>.<namespace>.svc[.cluster.local]\`).`, pattern: options.endpointPattern, maxLength: 1024, 'x-kubernetes-validations': [ENDPOINT_RULE] });

  const S3DestinationSchema = Type.Object(
    {
      bucket: Type.String({ description: 'Bucket name.', minLength: 3, maxLength: 63 }),
      prefix: Type.Optional(prefix),
      endpoint: Type.Optional(endpoint('URL of an S3-compatible server (MinIO, Ceph…); AWS S3 when unset.')),
      region: Type.Optional(Type.String({ description: 'Region of the bucket; us-east-1 when unset.', minLength: 1, maxLength: 64 })),
      forcePathStyle: Type.Optional(Type.Boolean({ description: 'Address the bucket as a path (`endpoint/bucket/key`) rather than a host name, as most S3 servers other than AWS need.' })),
      credentialsSecret: secretName('Secret in the same namespace with keys accessKeyId and secretAccessKey.'),
    },
    { description: 'An S3 or S3-compatible bucket.' },
  );
  const GcsDestinationSchema = Type.Object(
    {
      bucket: Type.String({ description: 'Bucket name.', minLength: 3, maxLength: 222 }),
      prefix: Type.Optional(prefix),
      endpoint: Type.Optional(endpoint('URL of a GCS-compatible server (an emulator); Google Cloud Storage when unset.')),
      credentialsSecret: secretName('Secret in the same namespace with key serviceAccount.json (a service account key); the key may be absent for an emulator.'),
    },
    { description: 'A Google Cloud Storage bucket.' },
  );
  const AzureDestinationSchema = Type.Object(
    {
      container: Type.String({ description: 'Blob container name.', minLength: 3, maxLength: 63 }),
      prefix: Type.Optional(prefix),
      endpoint: Type.Optional(endpoint("URL of the Blob service, overriding the connection string's BlobEndpoint.")),
      credentialsSecret: secretName('Secret in the same namespace with key connectionString.'),
    },
    { description: 'An Azure Blob Storage container.' },
  );
  const PvcDestinationSchema = Type.Object(
    {
      claimName: Type.String({ description: 'PersistentVolumeClaim in the same namespace; ReadWriteMany lets backups run on any node.', pattern: OBJECT_NAME_PATTERN, minLength: 1, maxLength: 253 }),
      path: Type.Optional(Type.String({ description: 'Folder inside the volume; its top when unset.', pattern: options.keyPrefixPattern, maxLength: 512 })),
    },
    { description: 'A folder on a PersistentVolumeClaim.' },
  );
  const DestinationSchema = Type.Object(
    { s3: Type.Optional(S3DestinationSchema), gcs: Type.Optional(GcsDestinationSchema), azure: Type.Optional(AzureDestinationSchema), pvc: Type.Optional(PvcDestinationSchema) },
    { description: 'Where backups are stored: exactly one of s3, gcs, azure or pvc.', 'x-kubernetes-validations': [DESTINATION_EXACTLY_ONE] },
  );
  return { S3DestinationSchema, GcsDestinationSchema, AzureDestinationSchema, PvcDestinationSchema, DestinationSchema };
}

/**
 * An agent's --destination-json (the operator wrote it, but a hand-run agent may not have), parsed and checked
 * against `schema` and the exactly-one rule: the destination, or why not (a message naming the flag).
 */
export function parseDestinationArgument(json: string, schema: DestinationSchemaType): { destination: Destination } | { problem: string } {
  let value: unknown;
  try {
    value = JSON.parse(json);
  } catch (err) {
    return { problem: `--destination-json is not JSON: ${err instanceof Error ? err.message : String(err)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return { problem: '--destination-json must be a JSON object' };
  const issues = destinationIssues(value as Record<string, unknown>, []);
  if (issues.length > 0) return { problem: `--destination-json: ${issues.map((i) => i.message).join('; ')}` };
  if (!Value.Check(schema, value)) {
    const first = Value.Errors(schema, value).First();
    return { problem: `--destination-json: ${first ? `${first.path || '/'}: ${first.message}` : 'does not match the destination schema'}` };
  }
  return { destination: value };
}
