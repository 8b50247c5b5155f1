// Where objects are stored, as the drivers read it: one object store bucket (S3, GCS, Azure Blob) or a folder
// on a PVC, with the name of the Secret whose mounted keys are the credentials. Plain data: each API that
// exposes a location (the etcd operator's backup Destination, the change recorder's spec.storage) declares its
// own schema, with its own words for where the Secret lives, and its type must be assignable to these.
// What every API must agree on, because the drivers depend on it, is here: the credential keys, the rule
// for keys on a PVC, and the patterns of prefixes and endpoints.

/**
 * One segment of a key prefix: the object-key-safe characters, but never `.` or `..` alone (a PVC driver
 * would resolve them out of its folder). Written without look-ahead, which the API server's regular
 * expressions (RE2) lack: at least one character that is not a dot, or three dots and more.
 */
const KEY_SEGMENT = "(\\.*[A-Za-z0-9!_*'()-][A-Za-z0-9!_.*'()-]*|\\.\\.\\.+)";
/** An object key prefix: no leading slash, no `.` or `..` segment, no empty segment; '' or a trailing slash allowed. */
export const KEY_PREFIX_PATTERN = `^(${KEY_SEGMENT}(/${KEY_SEGMENT})*/?)?$`;
/** An http(s) URL of an object store server. */
export const ENDPOINT_PATTERN = '^https?://[^\\s/]+(/[^\\s]*)?$';

/** The keys each kind of credentials Secret must hold: the drivers read these files from the mounted Secret. */
export const CREDENTIAL_KEYS = {
  s3: ['accessKeyId', 'secretAccessKey'],
  gcs: ['serviceAccount.json'],
  azure: ['connectionString'],
} as const;

export interface S3Location {
  bucket: string;
  /** Key prefix of the stored objects; the drivers take whole keys, so callers prepend it (locationPrefix). */
  prefix?: string;
  /** An S3-compatible server (MinIO, Ceph…); AWS S3 in `region` when unset. */
  endpoint?: string;
  /** Default us-east-1. */
  region?: string;
  /** Address the bucket as a path (`endpoint/bucket/key`), as most servers other than AWS need. */
  forcePathStyle?: boolean;
  /** The Secret (keys CREDENTIAL_KEYS.s3) whose mount is passed to openStore; named in error messages. */
  credentialsSecret: string;
}

export interface GcsLocation {
  bucket: string;
  prefix?: string;
  /** A GCS-compatible server (an emulator); Google Cloud Storage when unset. */
  endpoint?: string;
  /** The Secret (key CREDENTIAL_KEYS.gcs, which an emulator does not need). */
  credentialsSecret: string;
}

export interface AzureLocation {
  container: string;
  prefix?: string;
  /** The Blob service URL, overriding the connection string's. */
  endpoint?: string;
  /** The Secret (key CREDENTIAL_KEYS.azure). */
  credentialsSecret: string;
}

export interface PvcLocation {
  claimName: string;
  /** Folder inside the volume, as a key prefix. */
  path?: string;
}

/** Exactly one of the four is set. */
export interface Location {
  s3?: S3Location;
  gcs?: GcsLocation;
  azure?: AzureLocation;
  pvc?: PvcLocation;
}

export type LocationKind = 's3' | 'gcs' | 'azure' | 'pvc';

const EXACTLY_ONE = 'a location must set exactly one of s3, gcs, azure or pvc';

/** Which backend a location names. */
export function locationKind(l: Location): LocationKind {
  if (l.s3) return 's3';
  if (l.gcs) return 'gcs';
  if (l.azure) return 'azure';
  if (l.pvc) return 'pvc';
  throw new Error(EXACTLY_ONE);
}

/** The URI a stored object is reported by: s3://bucket/key, gs://bucket/key, azure://container/key, pvc://claim/key. */
export function locationURI(l: Location, key: string): string {
  if (l.s3) return `s3://${l.s3.bucket}/${key}`;
  if (l.gcs) return `gs://${l.gcs.bucket}/${key}`;
  if (l.azure) return `azure://${l.azure.container}/${key}`;
  if (l.pvc) return `pvc://${l.pvc.claimName}/${key}`;
  throw new Error(EXACTLY_ONE);
}

/** The folder (key prefix) a location stores under, with a trailing slash unless empty. */
export function locationPrefix(l: Location): string {
  const p = l.s3?.prefix ?? l.gcs?.prefix ?? l.azure?.prefix ?? l.pvc?.path ?? '';
  return p === '' || p.endsWith('/') ? p : `${p}/`;
}

/**
 * Whether `key` can name a file on a PVC: relative, and inside the volume. The PVC store refuses any other
 * key; APIs refuse at admission a key a spec makes certain.
 */
export function isPvcKey(key: string): boolean {
  const segments = key.split('/');
  return !(key === '' || key.startsWith('/') || segments.some((s) => s === '' || s === '.' || s === '..'));
}

/** What isPvcKey() asks for, in the words of the errors that refuse a key. */
export const PVC_KEY_RULE = "a file path inside the volume: relative, with no empty, '.' or '..' segment";
