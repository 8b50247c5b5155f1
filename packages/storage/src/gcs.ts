// Google Cloud Storage (or an emulator) through the official SDK. Uploads are resumable and sent in chunks:
// each chunk but the last leaves the total size open, and the last (which closes the object) is sent only
// once the body ended without error, so an interrupted upload leaves an unfinished session, not an object.
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { ApiError, Storage, type Bucket } from '@google-cloud/storage';
import type { GcsLocation } from './location.ts';
import { readCredential } from './credentials.ts';
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
import { guardedUpload, untilAborted, withErrors, type CallOptions, type ObjectStore, type StoredObject, type StoreOptions, type UploadOptions, type UploadResult } from './store.ts';

/** 8 MiB chunks (a multiple of 256 KiB, as GCS requires): the SDK holds one chunk in memory. */
const CHUNK_BYTES = 8 * 1024 * 1024;

interface ServiceAccount {
  project_id?: string;
  client_email?: string;
  private_key?: string;
}

export class GcsStore implements ObjectStore {
  readonly description: string;
  /** The SDK buffers chunks until it sends them. */
  readonly chunksDieYoung = false;
  readonly #storage: Storage;
  readonly #bucket: Bucket;
  readonly #id: StoreIdentity;

  constructor(destination: GcsLocation, serviceAccount: ServiceAccount | undefined, options: StoreOptions = {}) {
    const endpoint = destination.endpoint?.replace(/\/+$/, '') ?? 'https://storage.googleapis.com';
    this.#id = { endpoint, bucket: `bucket ${destination.bucket}`, secret: serviceAccount ? destination.credentialsSecret : undefined };
    this.description = `gs://${destination.bucket} at ${endpoint}`;
    this.#storage = new Storage({
      ...(destination.endpoint ? { apiEndpoint: endpoint, useAuthWithCustomEndpoint: serviceAccount !== undefined } : {}),
      // An emulator needs a project ID but no credentials.
      projectId: serviceAccount?.project_id ?? 'quorum-backup',
      ...(serviceAccount ? { credentials: { client_email: serviceAccount.client_email, private_key: serviceAccount.private_key } } : {}),
      // maxRetries 0 still retries a refused connection (with backoff, for seconds): one attempt means no retry at all.
      retryOptions: options.maxAttempts === 1 ? { autoRetry: false } : { autoRetry: true, maxRetries: (options.maxAttempts ?? 4) - 1, maxRetryDelay: 10 },
    });
    this.#bucket = this.#storage.bucket(destination.bucket);
  }

  async upload(key: string, body: Readable, opts: UploadOptions = {}): Promise<UploadResult> {
    const stored = await guardedUpload(body, opts, async (stream) => {
      const sink = this.#bucket.file(key).createWriteStream({
        resumable: true,
        chunkSize: CHUNK_BYTES,
        contentType: 'application/octet-stream',
        // CRC32C is computed as the bytes pass and compared with the server's at the end (a mismatch
        // deletes the object); MD5 would need the whole object.
        validation: 'crc32c',
      });
      try {
        await pipeline(stream, sink, opts.signal ? { signal: opts.signal } : {});
      } catch (err) {
        throw this.#classify(err, 'upload');
      }
    });
    return { key, ...stored };
  }

  async download(key: string, opts: CallOptions = {}): Promise<Readable> {
    const file = this.#bucket.file(key);
    try {
      // The read stream reports a missing object only once read: ask first, so the caller gets ObjectNotFound.
      await untilAborted(file.getMetadata(opts.signal ? { signal: opts.signal } : {}), opts.signal);
    } catch (err) {
      throw this.#classify(err, 'download', key);
    }
    const stream = file.createReadStream({ validation: 'crc32c' });
    return withErrors(stream, (err) => this.#classify(err, 'download', key), opts.signal, destroyOnceAnswered(stream));
  }

  async delete(key: string, opts: CallOptions = {}): Promise<void> {
    try {
      await untilAborted(this.#bucket.file(key).delete({ ignoreNotFound: true, ...(opts.signal ? { signal: opts.signal } : {}) }), opts.signal);
    } catch (err) {
      throw this.#classify(err, 'delete');
    }
  }

  async list(prefix: string, opts: CallOptions = {}): Promise<StoredObject[]> {
    try {
      // getFiles takes no signal: the abort ends the wait, not the request.
      const [files] = await untilAborted(this.#bucket.getFiles({ prefix, autoPaginate: true }), opts.signal);
      return files.map((f) => ({
        key: f.name,
        sizeBytes: Number(f.metadata.size ?? 0),
        lastModified: new Date(f.metadata.updated ?? f.metadata.timeCreated ?? 0),
      }));
    } catch (err) {
      throw this.#classify(err, 'list');
    }
  }

  close(): void {
    // The SDK's HTTP agent keeps no connections that outlive the process's need for them.
  }

  #classify(err: unknown, what: string, key?: string): unknown {
    if (err instanceof StorageError) return err;
    const status = err instanceof ApiError ? err.code : httpStatus(err);
    if (status === 401 || status === 403) return accessDenied(this.#id, err instanceof Error ? err.message : String(err), err);
    if (status === 404) {
      const message = err instanceof Error ? err.message : '';
      if (key !== undefined && !/bucket/i.test(message)) return objectNotFound(this.#id, key, err);
      return bucketNotFound(this.#id, err);
    }
    if (status !== undefined) return storageFailed(this.#id, what, err);
    if (networkCode(err)) return unreachable(this.#id, err);
    return err;
  }
}

/** The HTTP status of a gaxios error (the resumable upload's), which is not an ApiError. */
function httpStatus(err: unknown): number | undefined {
  if (typeof err !== 'object' || err === null) return undefined;
  const code = 'code' in err ? err.code : undefined;
  if (typeof code === 'number') return code;
  if (typeof code === 'string' && /^[1-5][0-9][0-9]$/.test(code)) return Number(code);
  const status = 'status' in err ? err.status : 'response' in err && typeof err.response === 'object' && err.response !== null && 'status' in err.response ? err.response.status : undefined;
  return typeof status === 'number' ? status : undefined;
}

export async function openGcs(destination: GcsLocation, credentialsDir: string | undefined, options: StoreOptions): Promise<GcsStore> {
  const secret = destination.credentialsSecret;
  const text = await readCredential(credentialsDir, 'serviceAccount.json');
  if (text === undefined && !destination.endpoint) {
    throw new StorageError('CredentialsInvalid', `the credentials Secret ${secret} has no key serviceAccount.json (only an emulator, set as the destination's endpoint, works without one)`);
  }
  let serviceAccount: ServiceAccount | undefined;
  if (text !== undefined) {
    try {
      serviceAccount = JSON.parse(text) as ServiceAccount;
    } catch (err) {
      throw new StorageError('CredentialsInvalid', `serviceAccount.json in Secret ${secret} is not JSON: ${err instanceof Error ? err.message : String(err)}`);
    }
    if (typeof serviceAccount !== 'object' || serviceAccount === null || !serviceAccount.client_email || !serviceAccount.private_key) {
      throw new StorageError('CredentialsInvalid', `serviceAccount.json in Secret ${secret} is not a service account key (it needs client_email and private_key)`);
    }
  }
  return new GcsStore(destination, serviceAccount, options);
}

/**
 * How a download given up early ends its SDK stream. The SDK pipes a late answer into the stream it returned
 * without checking that it is still open, and that throws ERR_STREAM_UNABLE_TO_PIPE as an unhandled rejection,
 * which ends the process (googleapis/google-cloud-node#9242; seen when a store call's timeout fired before a
 * slow bucket answered). So a stream whose request has no answer yet is destroyed only once the answer came
 * (the SDK emits `response` just before piping it); a request that fails instead ends the stream itself.
 */
function destroyOnceAnswered(stream: Readable): (source: Readable) => void {
  let answered = false;
  stream.once('response', () => {
    answered = true;
  });
  return (source) => {
    if (answered) source.destroy();
    else source.once('response', () => setImmediate(() => source.destroy()));
  };
}
