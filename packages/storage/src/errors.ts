// Storage failures as the user must read them: which Secret was refused by which server, which bucket is
// missing where. Each carries a machine-readable reason, which becomes the EtcdBackup's condition reason.

export type StorageFailureReason =
  /** The server refused the credentials (wrong key, expired token, missing permission). */
  | 'AccessDenied'
  /** The bucket (or Azure container) does not exist. */
  | 'BucketNotFound'
  /** The object asked for does not exist. */
  | 'ObjectNotFound'
  /** No answer from the server: refused connection, DNS failure, timeout. */
  | 'StorageUnreachable'
  /** The credentials Secret lacks a key the destination needs, or holds one that cannot be read. */
  | 'CredentialsInvalid'
  /** Any other refusal, with the server's own words. */
  | 'StorageFailed';

export class StorageError extends Error {
  readonly reason: StorageFailureReason;
  constructor(reason: StorageFailureReason, message: string, cause?: unknown) {
    super(message, cause === undefined ? undefined : { cause });
    this.name = 'StorageError';
    this.reason = reason;
  }
}

/** What the error messages name: the server, the bucket and the Secret whose credentials were used. */
export interface StoreIdentity {
  /** The server's URL as the user configured it (or the provider's public one). */
  endpoint: string;
  /** "bucket NAME" or "container NAME". */
  bucket: string;
  /** The credentials Secret's name; undefined for a PVC or an emulator without credentials. */
  secret: string | undefined;
}

// Socket-level codes meaning no server answered (Node's, undici's and the SDKs' own spellings).
const UNREACHABLE_CODES = new Set([
  'ECONNREFUSED',
  'ECONNRESET',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
  'ENETUNREACH',
  'EPIPE',
  'UND_ERR_CONNECT_TIMEOUT',
  'UND_ERR_SOCKET',
  'ERR_SOCKET_CONNECTION_TIMEOUT',
  'TimeoutError',
  'RequestTimeout',
]);

/** The first socket-level error code in an error or its causes, e.g. ECONNREFUSED. */
export function networkCode(err: unknown): string | undefined {
  for (let e = err, depth = 0; typeof e === 'object' && e !== null && depth < 8; depth++) {
    const code = 'code' in e && typeof e.code === 'string' ? e.code : undefined;
    if (code && UNREACHABLE_CODES.has(code)) return code;
    const name = 'name' in e && typeof e.name === 'string' ? e.name : undefined;
    if (name && UNREACHABLE_CODES.has(name)) return name;
    const message = e instanceof Error ? e.message : '';
    const inMessage = /\b(ECONNREFUSED|ECONNRESET|ENOTFOUND|EAI_AGAIN|ETIMEDOUT|EHOSTUNREACH|ENETUNREACH)\b/.exec(message);
    if (inMessage) return inMessage[1];
    e = 'cause' in e ? e.cause : undefined;
  }
  return undefined;
}

export function errorText(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

export function accessDenied(id: StoreIdentity, serverMessage: string, cause?: unknown): StorageError {
  const whose = id.secret ? `the credentials in Secret ${id.secret}` : 'the credentials';
  return new StorageError('AccessDenied', `access denied: ${whose} were refused by ${id.endpoint}: ${serverMessage}`, cause);
}

export function bucketNotFound(id: StoreIdentity, cause?: unknown): StorageError {
  return new StorageError('BucketNotFound', `${id.bucket} does not exist at ${id.endpoint}`, cause);
}

export function objectNotFound(id: StoreIdentity, key: string, cause?: unknown): StorageError {
  return new StorageError('ObjectNotFound', `object ${key} does not exist in ${id.bucket} at ${id.endpoint}`, cause);
}

export function unreachable(id: StoreIdentity, cause: unknown): StorageError {
  const code = networkCode(cause);
  return new StorageError('StorageUnreachable', `cannot reach ${id.endpoint}${code ? ` (${code})` : ''}: ${errorText(cause)}`, cause);
}

export function storageFailed(id: StoreIdentity, what: string, cause: unknown): StorageError {
  return new StorageError('StorageFailed', `${what} failed at ${id.endpoint} (${id.bucket}): ${errorText(cause)}`, cause);
}
