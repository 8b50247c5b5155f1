// Where a backup is stored: one object store bucket (S3, GCS, Azure Blob) or a folder on a PVC. Every operator's
// backup kinds (EtcdBackup, RedisBackup, their schedules and bootstraps) take this one schema, so it is validated,
// defaulted and documented the same way everywhere, and the https rule that keeps credentials off the wire applies
// to all of them. The drivers, and what they need of a location (credential keys, the PVC key rule, the prefix and
// endpoint patterns), are @quorum/storage's: its two patterns are passed in (the kit does not depend on the
// storage drivers). The types are assignable to @quorum/storage's Location types, which openStore() takes.
import { Value } from '@sinclair/typebox/value';
import { Type, type Static, type TObject, type TOptional, type TString, type TBoolean } from '@sinclair/typebox';
import type { Issue, Path } from '@quorum/runtime/crd';

/** A Secret or claim name in the backup's namespace (a DNS-1123 subdomain). */
export const OBJECT_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

/**
 * The credentials travel to the endpoint (an S3 signature, a GCS bearer token, an Azure SAS): https, except to
 * a Service inside the cluster, which is the one plain-http allowance (`<service>.<namespace>.svc`, or with
 * `.cluster.local`), for in-cluster stores such as MinIO.
 */
export const ENDPOINT_RULE = {
  rule: "self.startsWith('https://') || self.matches(r'^http://[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\.svc(\\.cluster\\.local)?(:[0-9]{1,5})?(/[^\\s]*)?$')",
  message: 'an endpoint must be https://, or http:// only to a Service in this cluster (<service>.<namespace>.svc or <service>.<namespace>.svc.cluster.local): the credentials are sent to it',
};

/** ENDPOINT_RULE in code, for an operator's own validation (webhooks may be off). */
export function endpointAllowed(endpoint: string): boolean {
  return endpoint.startsWith('https://') || /^http:\/\/[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\.svc(\.cluster\.local)?(:[0-9]{1,5})?(\/[^\s]*)?$/.test(endpoint);
}

export const DESTINATION_EXACTLY_ONE = {
  rule: '(has(self.s3) ? 1 : 0) + (has(self.gcs) ? 1 : 0) + (has(self.azure) ? 1 : 0) + (has(self.pvc) ? 1 : 0) == 1',
  message: 'a destination must set exactly one of s3, gcs, azure or pvc',
};

export interface DestinationSchemaOptions {
  /** @quorum/storage's ENDPOINT_PATTERN and KEY_PREFIX_PATTERN. */
  endpointPattern: string;
  keyPrefixPattern: string;
  /** The example in the prefix's description (`prod/etcd`). */
  prefixExample: string;
}

type Str = TString;
type Opt<T extends TString | TBoolean> = TOptional<T>;
export type S3DestinationSchemaType = TObject<{ bucket: Str; prefix: Opt<Str>; endpoint: Opt<Str>; region: Opt<Str>; forcePathStyle: Opt<TBoolean>; credentialsSecret: Str }>;
export type GcsDestinationSchemaType = TObject<{ bucket: Str; prefix: Opt<Str>; endpoint: Opt<Str>; credentialsSecret: Str }>;
export type AzureDestinationSchemaType = TObject<{ container: Str; prefix: Opt<Str>; endpoint: Opt<Str>; credentialsSecret: Str }>;
export type PvcDestinationSchemaType = TObject<{ claimName: Str; path: Opt<Str> }>;
export type DestinationSchemaType = TObject<{ s3: TOptional<S3DestinationSchemaType>; gcs: TOptional<GcsDestinationSchemaType>; azure: TOptional<AzureDestinationSchemaType>; pvc: TOptional<PvcDestinationSchemaType> }>;

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

export type S3Destination = Static<S3DestinationSchemaType>;
export type GcsDestination = Static<GcsDestinationSchemaType>;
export type AzureDestination = Static<AzureDestinationSchemaType>;
export type PvcDestination = Static<PvcDestinationSchemaType>;
export type Destination = Static<DestinationSchemaType>;

/** DESTINATION_EXACTLY_ONE in code, for an operator's and its webhooks' own validation. */
export function destinationIssues(d: Record<string, unknown>, path: Path): Issue[] {
  const set = (['s3', 'gcs', 'azure', 'pvc'] as const).filter((k) => d[k] !== undefined).length;
  return set === 1 ? [] : [{ path, message: DESTINATION_EXACTLY_ONE.message }];
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
