// Where a backup is stored: one object store bucket (S3, GCS, Azure Blob) or a folder on a PVC. Every operator's
// backup kinds (EtcdBackup, RedisBackup, their schedules and bootstraps) take this one schema, so it is validated,
// defaulted and documented the same way everywhere, and the https rule that keeps credentials off the wire applies
// to all of them. The drivers, and what they need of a location (credential keys, the PVC key rule, the prefix and
// endpoint patterns), are @quorum/storage's: its two patterns are passed in (the kit does not depend on the
// storage drivers). The types are assignable to @quorum/storage's Location types, which openStore() takes.
//
// The schema builders and the agent's argument parser, which need TypeBox at run time, are in
// backup-destination-schema.ts (`@quorum/kit/schema`): an operator process that never builds a schema or parses an
// agent's argument does not load TypeBox (about 4 MiB of a ~80 MiB process, docs/memory.md).
import type { Static, TObject, TOptional, TString, TBoolean } from '@sinclair/typebox';
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
