// S3 and S3-compatible servers (MinIO, Ceph RGW…) through the official SDK. Uploads are multipart with
// bounded parts, so memory stays flat whatever the snapshot's size; a failed one is aborted, so no parts
// linger and no object appears.
import { Readable } from 'node:stream';
import {
  DeleteObjectCommand,
  GetObjectCommand,
  ListObjectsV2Command,
  S3Client,
  S3ServiceException,
} from '@aws-sdk/client-s3';
import { CREDENTIAL_KEYS, type S3Location } from './location.ts';
import { requireCredential } from './credentials.ts';
import { multipartUpload } from './s3-multipart.ts';
import {
  accessDenied,
  bucketNotFound,
  networkCode,
  objectNotFound,
  StorageError,
  storageFailed,
  unreachable,
  type StoreIdentity,
} from './errors.ts';
import { guardedUpload, withErrors, type CallOptions, type ObjectStore, type StoredObject, type StoreOptions, type UploadOptions, type UploadResult } from './store.ts';

const MiB = 1024 * 1024;
/** 8 MiB parts, two in flight: 24 MiB of part buffers (two being sent, one being filled), reused for the whole upload. */
const MIN_PART_BYTES = 8 * MiB;
const QUEUE_SIZE = 2;
/** S3 allows 10,000 parts; leave room for a database that grew since its size was read. */
const PART_BUDGET = 9000;

// Error names S3 and its look-alikes give a refused signature or permission.
const ACCESS_ERRORS = new Set([
  'AccessDenied',
  'InvalidAccessKeyId',
  'SignatureDoesNotMatch',
  'InvalidToken',
  'ExpiredToken',
  'TokenRefreshRequired',
  'AllAccessDisabled',
  'AccountProblem',
  'Forbidden',
]);

/** Parts big enough that the whole snapshot fits in S3's part limit, in whole MiB. */
export function s3PartSize(sizeHint: number | undefined): number {
  const needed = Math.ceil((sizeHint ?? 0) / PART_BUDGET / MiB) * MiB;
  return Math.max(MIN_PART_BYTES, needed);
}

export class S3Store implements ObjectStore {
  readonly description: string;
  /** Parts are copied into pooled buffers (s3-multipart.ts). */
  readonly chunksDieYoung = true;
  readonly #client: S3Client;
  readonly #bucket: string;
  readonly #id: StoreIdentity;

  constructor(destination: S3Location, credentials: { accessKeyId: string; secretAccessKey: string }, options: StoreOptions = {}) {
    const region = destination.region ?? 'us-east-1';
    const endpoint = destination.endpoint ?? `https://s3.${region}.amazonaws.com`;
    this.#bucket = destination.bucket;
    this.#id = { endpoint, bucket: `bucket ${destination.bucket}`, secret: destination.credentialsSecret };
    this.description = `s3://${destination.bucket} at ${endpoint}`;
    this.#client = new S3Client({
      region,
      ...(destination.endpoint ? { endpoint: destination.endpoint } : {}),
      forcePathStyle: destination.forcePathStyle ?? false,
      credentials,
      // Checksums only where S3 requires them: S3-compatible servers reject the newer checksum headers,
      // and the snapshot carries its own SHA-256, which the agent checks end to end.
      requestChecksumCalculation: 'WHEN_REQUIRED',
      responseChecksumValidation: 'WHEN_REQUIRED',
      ...(options.maxAttempts ? { maxAttempts: options.maxAttempts } : {}),
      // A server that never accepts the connection fails fast; one that stops answering mid-transfer too.
      requestHandler: { connectionTimeout: 10_000, socketTimeout: 120_000 },
    });
    // Parts are not hashed for the signature (see s3-multipart.ts): the header, set before signing, tells
    // the signer so. Only parts: every other request's payload is small, and stays signed.
    this.#client.middlewareStack.add(
      (next, context) => (args) => {
        const request: unknown = args.request;
        if (context.commandName === 'UploadPartCommand' && typeof request === 'object' && request !== null && 'headers' in request && typeof request.headers === 'object' && request.headers !== null) {
          (request.headers as Record<string, string>)['x-amz-content-sha256'] = 'UNSIGNED-PAYLOAD';
        }
        return next(args);
      },
      { step: 'build', name: 'quorumUnsignedParts' },
    );
  }

  async upload(key: string, body: Readable, opts: UploadOptions = {}): Promise<UploadResult> {
    const stored = await guardedUpload(body, opts, async (stream) => {
      try {
        await multipartUpload({ client: this.#client, bucket: this.#bucket, key, body: stream, partBytes: s3PartSize(opts.sizeHint), queueSize: QUEUE_SIZE });
      } catch (err) {
        throw this.#classify(err, 'upload');
      }
    });
    return { key, ...stored };
  }

  async download(key: string, opts: CallOptions = {}): Promise<Readable> {
    try {
      const out = await this.#client.send(new GetObjectCommand({ Bucket: this.#bucket, Key: key }), opts.signal ? { abortSignal: opts.signal } : {});
      // In Node the SDK's body is an IncomingMessage with the SDK's mixins: a Readable.
      if (!(out.Body instanceof Readable)) throw storageFailed(this.#id, 'download', new Error('the server returned no body'));
      return withErrors(out.Body, (err) => this.#classify(err, 'download', key), opts.signal);
    } catch (err) {
      throw this.#classify(err, 'download', key);
    }
  }

  async delete(key: string, opts: CallOptions = {}): Promise<void> {
    try {
      // S3 answers 204 for a key that is not there: deleting is idempotent by itself.
      await this.#client.send(new DeleteObjectCommand({ Bucket: this.#bucket, Key: key }), opts.signal ? { abortSignal: opts.signal } : {});
    } catch (err) {
      throw this.#classify(err, 'delete');
    }
  }

  async list(prefix: string, opts: CallOptions = {}): Promise<StoredObject[]> {
    const objects: StoredObject[] = [];
    let token: string | undefined;
    try {
      do {
        const page = await this.#client.send(
          new ListObjectsV2Command({ Bucket: this.#bucket, Prefix: prefix, ...(token ? { ContinuationToken: token } : {}) }),
          opts.signal ? { abortSignal: opts.signal } : {},
        );
        for (const o of page.Contents ?? []) {
          if (o.Key === undefined) continue;
          objects.push({ key: o.Key, sizeBytes: o.Size ?? 0, lastModified: o.LastModified ?? new Date(0) });
        }
        token = page.IsTruncated ? page.NextContinuationToken : undefined;
      } while (token);
    } catch (err) {
      throw this.#classify(err, 'list');
    }
    return objects;
  }

  close(): void {
    this.#client.destroy();
  }

  #classify(err: unknown, what: string, key?: string): unknown {
    if (err instanceof StorageError) return err;
    if (err instanceof S3ServiceException) {
      const status = err.$metadata.httpStatusCode;
      if (ACCESS_ERRORS.has(err.name) || status === 403 || status === 401) return accessDenied(this.#id, `${err.name}: ${err.message}`, err);
      if (err.name === 'NoSuchBucket') return bucketNotFound(this.#id, err);
      if (key !== undefined && (err.name === 'NoSuchKey' || status === 404)) return objectNotFound(this.#id, key, err);
      return storageFailed(this.#id, what, err);
    }
    if (networkCode(err)) return unreachable(this.#id, err);
    // The SDK gave up on a request (its socket timeout, or lib-storage cancelling the other parts after one
    // failed): the server stopped answering. The caller's own abort never gets here (guardedUpload wins it).
    if (err instanceof Error && (err.name === 'AbortError' || err.name === 'TimeoutError')) return unreachable(this.#id, err);
    // Not the server's answer (e.g. the body's own error, which guardedUpload lets win): as it is.
    return err;
  }
}

export async function openS3(destination: S3Location, credentialsDir: string | undefined, options: StoreOptions): Promise<S3Store> {
  const keys = CREDENTIAL_KEYS.s3;
  const secret = destination.credentialsSecret;
  const accessKeyId = await requireCredential(credentialsDir, 'accessKeyId', secret, keys);
  const secretAccessKey = await requireCredential(credentialsDir, 'secretAccessKey', secret, keys);
  return new S3Store(destination, { accessKeyId, secretAccessKey }, options);
}
