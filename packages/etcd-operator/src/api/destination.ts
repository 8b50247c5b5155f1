// Where a backup is stored: one object store bucket (S3, GCS, Azure Blob) or a PVC. Shared by EtcdBackup,
// EtcdBackupSchedule and EtcdCluster.spec.bootstrap.fromBackup, so the one schema is validated, defaulted
// and documented the same way everywhere. The drivers, and what they need of a location (credential keys,
// the PVC key rule, the prefix and endpoint patterns), are @quorum/storage's; the schema is the etcd API's,
// since where its credentials Secret lives (the backup's namespace) is this API's to say. These types are
// assignable to @quorum/storage's Location types, which openStore() takes.
import { Type, type Static } from '@sinclair/typebox';
import type { Issue, Path } from '@quorum/runtime/crd';
import { ENDPOINT_PATTERN, KEY_PREFIX_PATTERN } from '@quorum/storage';

/** A Secret name in the backup's namespace (a DNS-1123 subdomain). */
const SECRET_NAME_PATTERN = '^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$';

const secretName = (what: string): ReturnType<typeof Type.String> =>
  Type.String({ description: what, pattern: SECRET_NAME_PATTERN, minLength: 1, maxLength: 253 });
const prefix = Type.String({
  description: "Key prefix for the stored objects (e.g. `prod/etcd`); '' stores them at the top of the bucket.",
  pattern: KEY_PREFIX_PATTERN,
  maxLength: 512,
  default: '',
});
/**
 * The credentials travel to the endpoint (an S3 signature, a GCS bearer token, an Azure SAS): https, except to
 * a Service inside the cluster, which is the one plain-http allowance (`<service>.<namespace>.svc`, or with
 * `.cluster.local`), for in-cluster stores such as MinIO.
 */
export const ENDPOINT_RULE = {
  rule: "self.startsWith('https://') || self.matches(r'^http://[a-z0-9]([-a-z0-9]*[a-z0-9])?(\\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*\\.svc(\\.cluster\\.local)?(:[0-9]{1,5})?(/[^\\s]*)?$')",
  message: 'an endpoint must be https://, or http:// only to a Service in this cluster (<service>.<namespace>.svc or <service>.<namespace>.svc.cluster.local): the credentials are sent to it',
};
const endpoint = (what: string): ReturnType<typeof Type.String> =>
  Type.String({ description: `${what} https, or http only to an in-cluster Service (\`<service>.<namespace>.svc[.cluster.local]\`).`, pattern: ENDPOINT_PATTERN, maxLength: 1024, 'x-kubernetes-validations': [ENDPOINT_RULE] });

export const S3DestinationSchema = Type.Object(
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

export const GcsDestinationSchema = Type.Object(
  {
    bucket: Type.String({ description: 'Bucket name.', minLength: 3, maxLength: 222 }),
    prefix: Type.Optional(prefix),
    endpoint: Type.Optional(endpoint('URL of a GCS-compatible server (an emulator); Google Cloud Storage when unset.')),
    credentialsSecret: secretName('Secret in the same namespace with key serviceAccount.json (a service account key); the key may be absent for an emulator.'),
  },
  { description: 'A Google Cloud Storage bucket.' },
);

export const AzureDestinationSchema = Type.Object(
  {
    container: Type.String({ description: 'Blob container name.', minLength: 3, maxLength: 63 }),
    prefix: Type.Optional(prefix),
    endpoint: Type.Optional(endpoint("URL of the Blob service, overriding the connection string's BlobEndpoint.")),
    credentialsSecret: secretName('Secret in the same namespace with key connectionString.'),
  },
  { description: 'An Azure Blob Storage container.' },
);

export const PvcDestinationSchema = Type.Object(
  {
    claimName: Type.String({ description: 'PersistentVolumeClaim in the same namespace; ReadWriteMany lets backups run on any node.', pattern: SECRET_NAME_PATTERN, minLength: 1, maxLength: 253 }),
    path: Type.Optional(Type.String({ description: "Folder inside the volume; its top when unset.", pattern: KEY_PREFIX_PATTERN, maxLength: 512 })),
  },
  { description: 'A folder on a PersistentVolumeClaim.' },
);

export const DESTINATION_EXACTLY_ONE = {
  rule: '(has(self.s3) ? 1 : 0) + (has(self.gcs) ? 1 : 0) + (has(self.azure) ? 1 : 0) + (has(self.pvc) ? 1 : 0) == 1',
  message: 'a destination must set exactly one of s3, gcs, azure or pvc',
};

export const DestinationSchema = Type.Object(
  {
    s3: Type.Optional(S3DestinationSchema),
    gcs: Type.Optional(GcsDestinationSchema),
    azure: Type.Optional(AzureDestinationSchema),
    pvc: Type.Optional(PvcDestinationSchema),
  },
  { description: 'Where backups are stored: exactly one of s3, gcs, azure or pvc.', 'x-kubernetes-validations': [DESTINATION_EXACTLY_ONE] },
);

export type S3Destination = Static<typeof S3DestinationSchema>;
export type GcsDestination = Static<typeof GcsDestinationSchema>;
export type AzureDestination = Static<typeof AzureDestinationSchema>;
export type PvcDestination = Static<typeof PvcDestinationSchema>;
export type Destination = Static<typeof DestinationSchema>;

/** DESTINATION_EXACTLY_ONE in code, for the operator's and the webhooks' own validation. */
export function destinationIssues(d: Record<string, unknown>, path: Path): Issue[] {
  const set = (['s3', 'gcs', 'azure', 'pvc'] as const).filter((k) => d[k] !== undefined).length;
  return set === 1 ? [] : [{ path, message: DESTINATION_EXACTLY_ONE.message }];
}
