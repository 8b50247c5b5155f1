// The one interface every storage location is used through, and the guard every driver's upload runs
// inside: an upload completes only after its body ended without error, so an interrupted or corrupted
// body (an etcd snapshot, a change record) never leaves an object that looks complete.
import { createHash } from 'node:crypto';
import { PassThrough, type Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';

export interface UploadOptions {
  signal?: AbortSignal;
  /** The expected size in bytes, when known: drivers size their parts by it. */
  sizeHint?: number;
  /** Called as bytes pass, with the total so far (e.g. to report progress or pace the garbage collector). */
  onBytes?: (total: number) => void;
  /**
   * The hex SHA-256 of every byte the body yielded, once it ended: given when the body's source hashes
   * them anyway (an etcd snapshot does, for etcd's own check), so the upload does not hash them again.
   */
  sha256?: () => string;
}

/** Driver settings that are not part of the destination. */
export interface StoreOptions {
  /** Attempts per request, including the first (the SDKs' own retry of transient failures). Default: the SDK's. */
  maxAttempts?: number;
}

export interface CallOptions {
  signal?: AbortSignal;
}

export interface UploadResult {
  key: string;
  /** Bytes stored. */
  sizeBytes: number;
  /** Hex SHA-256 of the bytes stored, computed as they passed. */
  sha256: string;
}

export interface StoredObject {
  key: string;
  sizeBytes: number;
  lastModified: Date;
}

export interface ObjectStore {
  /** For messages: e.g. `s3://bucket at http://minio:9000`. */
  readonly description: string;
  /**
   * Streams `body` to `key`. The object appears only if the body ends without error: a body that errors
   * (or a signal that aborts) rejects with that error and leaves nothing under `key` (multipart aborted,
   * blocks never committed, partial file removed).
   */
  upload(key: string, body: Readable, opts?: UploadOptions): Promise<UploadResult>;
  /** The object's bytes; rejects with ObjectNotFound (a StorageError) when there is none. */
  download(key: string, opts?: CallOptions): Promise<Readable>;
  /** Removes the object; a missing one is not an error. */
  delete(key: string, opts?: CallOptions): Promise<void>;
  /** Every complete object whose key starts with `prefix`. */
  list(prefix: string, opts?: CallOptions): Promise<StoredObject[]>;
  /** Releases connections. */
  close(): void;
  /**
   * True when upload copies each chunk of the body into buffers of its own and keeps none, so the chunks
   * die young and a minor collection frees them (see the etcd operator's backup/memory.ts); false when the SDK holds them.
   */
  readonly chunksDieYoung: boolean;
}

/**
 * Runs one driver's upload of `body` so that the guarantees of ObjectStore.upload hold whatever the SDK
 * does: the driver reads a pass-through copy (counted and hashed) that errors exactly when `body` does; an abort destroys `body`;
 * a driver that fails leaves `body` destroyed (so its source, e.g. an etcd stream, is released); and the
 * body's own error wins over whatever error the SDK made of it.
 */
export async function guardedUpload(body: Readable, opts: UploadOptions, send: (stream: Readable) => Promise<void>): Promise<{ sizeBytes: number; sha256: string }> {
  opts.signal?.throwIfAborted();
  const hash = opts.sha256 ? undefined : createHash('sha256');
  let bytes = 0;
  let sourceError: unknown;
  let sourceEnded = false;
  const counted = new PassThrough({
    highWaterMark: 1024 * 1024,
    transform(chunk: Buffer, _encoding, callback) {
      bytes += chunk.length;
      hash?.update(chunk);
      opts.onBytes?.(bytes);
      callback(null, chunk);
    },
  });
  // The body's own failure (etcd's stream broke) explains an upload failure better than the store's
  // complaint about a body that stopped. But when the store gives up first (lib-storage destroys the stream
  // it reads), the body is destroyed as a consequence and errors too (an AbortError): what failed first
  // is the cause, and then the store's classified error must win.
  let sinkFailed = false;
  let bodyError: unknown;
  counted.once('error', () => {
    sinkFailed = true;
  });
  body.once('error', (e) => {
    if (!sinkFailed) bodyError ??= e;
  });
  let rejectAborted: (reason: Error) => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    rejectAborted = reject;
  });
  const onAbort = (): void => {
    const reason = opts.signal?.reason instanceof Error ? opts.signal.reason : new Error('upload aborted');
    body.destroy(reason);
    rejectAborted(reason);
  };
  opts.signal?.addEventListener('abort', onAbort, { once: true });
  const piped = pipeline(body, counted).then(
    () => {
      sourceEnded = true;
    },
    (err: unknown) => {
      sourceError = err;
    },
  );
  // An SDK may not pass the abort on to a request in flight (lib-storage does not), which could then hang
  // until its socket times out: an abort returns at once, and the driver's own clean-up (aborting the
  // multipart upload) finishes in the background. The abort destroys the body first, so nothing that did
  // not receive every byte can be completed after it.
  const sending = send(counted);
  sending.catch(() => undefined);
  try {
    await Promise.race([sending, aborted]);
  } catch (err) {
    const own = bodyError;
    if (!body.destroyed) body.destroy(err instanceof Error ? err : new Error(String(err)));
    await piped;
    throw asError(own ?? err);
  } finally {
    opts.signal?.removeEventListener('abort', onAbort);
  }
  await piped;
  if (sourceError !== undefined) throw asError(sourceError);
  // Every driver here finishes only after its stream ended; this guards a future one that might not.
  if (!sourceEnded) throw new Error('the upload finished before its body ended');
  return { sizeBytes: bytes, sha256: hash ? hash.digest('hex') : (opts.sha256?.() ?? '') };
}

/**
 * `source` as a stream whose errors are `classify`'s version of them (e.g. a reset connection becomes
 * StorageUnreachable naming the server), which an abort of `signal` destroys, and whose destruction
 * releases `source`.
 */
export function withErrors(source: Readable, classify: (err: unknown) => unknown, signal?: AbortSignal, destroySource: (source: Readable) => void = (s) => s.destroy()): Readable {
  const out = new PassThrough({ highWaterMark: 1024 * 1024 });
  source.pipe(out);
  source.on('error', (err) => {
    out.destroy(asError(classify(err)));
  });
  source.on('close', () => {
    if (!source.readableEnded && !out.destroyed) out.destroy(asError(classify(Object.assign(new Error('the connection closed before the object ended'), { code: 'ECONNRESET' }))));
  });
  const onAbort = (): void => {
    out.destroy(signal?.reason instanceof Error ? signal.reason : new Error('download aborted'));
  };
  signal?.addEventListener('abort', onAbort, { once: true });
  out.on('close', () => {
    signal?.removeEventListener('abort', onAbort);
    if (!source.destroyed) destroySource(source);
  });
  return out;
}

function asError(value: unknown): Error {
  return value instanceof Error ? value : new Error(String(value));
}

/**
 * `call`, or the signal's reason as soon as it aborts. Some SDK calls take no signal (the GCS SDK's list), or
 * may not pass an abort on to a request in flight; against a server that accepts a connection and never
 * answers, such a call would wait for ever. The request itself is left to end or fail on its own.
 */
export async function untilAborted<T>(call: Promise<T>, signal: AbortSignal | undefined): Promise<T> {
  if (!signal) return call;
  call.catch(() => undefined);
  signal.throwIfAborted();
  let onAbort: () => void = () => undefined;
  const aborted = new Promise<never>((_, reject) => {
    onAbort = () => reject(signal.reason instanceof Error ? signal.reason : new Error('the call was aborted'));
  });
  signal.addEventListener('abort', onAbort, { once: true });
  try {
    return await Promise.race([call, aborted]);
  } finally {
    signal.removeEventListener('abort', onAbort);
  }
}
