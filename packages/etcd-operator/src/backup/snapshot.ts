// Streams a snapshot of one etcd member's database, never holding it whole in memory: gRPC spoken directly
// over node:http2 (etcd serves gRPC and HTTP on the same client port), because the JSON gateway would
// base64 every chunk and there is no gRPC dependency.
//
// The wire, as etcd 3.5 and 3.6 send it (server/etcdserver/api/v3rpc/maintenance.go, Snapshot): one
// SnapshotResponse per 32 KiB read from a bbolt read transaction, remaining_bytes counting down to 0, then
// one more message with remaining_bytes 0 whose blob is the SHA-256 of every byte before it. 3.6 also sets
// `version` (the storage version) on each message. `etcdctl snapshot save` writes the blobs one after the
// other, trailer included, and `etcdutl snapshot restore` checks that trailer: the stream below yields
// exactly those bytes, and ends only once the trailer matched.
import { createHash, type Hash } from 'node:crypto';
import { connect, constants as http2, type ClientHttp2Session, type ClientHttp2Stream, type IncomingHttpHeaders } from 'node:http2';
import { Readable } from 'node:stream';
import type { EtcdTls } from '../etcd/client.ts';

export const SNAPSHOT_PATH = '/etcdserverpb.Maintenance/Snapshot';
/** Bytes of the SHA-256 etcd appends to a snapshot. */
export const SNAPSHOT_TRAILER_BYTES = 32;
/**
 * The HTTP/2 receive window, per stream and per connection. The 64 KiB default allows only 64 KiB in
 * flight per round trip, capping throughput far below a disk's; 8 MiB allows 8 GB/s at a 1 ms round trip.
 * It is also what sits unread in memory while the destination is slower than etcd (the usual case), so it
 * is no larger: 32 MiB measured no faster on loopback and cost about 20 MiB more of RSS.
 */
export const DEFAULT_WINDOW_BYTES = 8 * 1024 * 1024;
/** No first message within this long: etcd is not serving the snapshot. */
const DEFAULT_FIRST_MESSAGE_TIMEOUT_MS = 60_000;
/** A SnapshotResponse holds a 32 KiB blob; anything this large is not etcd talking. */
const MAX_MESSAGE_BYTES = 16 * 1024 * 1024;

export type SnapshotFailureReason =
  /** etcd refused or failed the snapshot, or could not be reached. */
  | 'SnapshotFailed'
  /** The bytes do not match the SHA-256 etcd sent with them. */
  | 'SnapshotCorrupted'
  /** The stream ended before every byte (and the trailer) arrived. */
  | 'SnapshotTruncated'
  /** The member knows no leader: its data may be stale, and the cluster may have lost quorum. */
  | 'NoQuorum';

export class SnapshotError extends Error {
  readonly reason: SnapshotFailureReason;
  /** etcd's own message (grpc-message), when it sent one. */
  readonly etcdMessage: string | undefined;
  constructor(reason: SnapshotFailureReason, message: string, options: { etcdMessage?: string; cause?: unknown } = {}) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'SnapshotError';
    this.reason = reason;
    this.etcdMessage = options.etcdMessage;
  }
}

export interface SnapshotOptions {
  /** http(s)://host:port: the member's client URL. */
  endpoint: string;
  /** Only for https endpoints (PEM contents). */
  tls?: EtcdTls;
  /** Aborting destroys the stream with the signal's reason. */
  signal?: AbortSignal;
  /** HTTP/2 receive window; default DEFAULT_WINDOW_BYTES. */
  windowBytes?: number;
  /** How long to wait for the first message; default 60 s. */
  firstMessageTimeoutMs?: number;
}

export interface EtcdSnapshot {
  /**
   * The database followed by etcd's 32-byte SHA-256 trailer (what `etcdctl snapshot save` writes). It ends
   * only after the trailer matched; otherwise it errors with a SnapshotError (SnapshotCorrupted,
   * SnapshotTruncated or SnapshotFailed). Attach a consumer (and so an error listener) at once.
   */
  body: Readable;
  /** Size of the database alone, known from the first message. */
  dbBytes: number;
  /** Bytes `body` yields: dbBytes plus the trailer. */
  sizeBytes: number;
  /** The storage version etcd 3.6+ reports with each message; '' from 3.5. */
  storageVersion: string;
  /** The hex SHA-256 of every byte `body` yielded; throws before the body ended. */
  sha256(): string;
}

/**
 * Decodes a protobuf varint at `pos`; undefined when `buf` ends first. Numbers above 2^53 are refused
 * (no database is that large).
 */
function readVarint(buf: Buffer, pos: number): [value: number, next: number] | undefined {
  let value = 0;
  let scale = 1;
  for (let i = pos; i < buf.length; i++) {
    if (i >= pos + 10) throw new Error('a varint longer than 10 bytes');
    const byte = buf[i]!;
    value += (byte & 0x7f) * scale;
    if ((byte & 0x80) === 0) {
      if (!Number.isSafeInteger(value)) throw new Error('a varint out of range');
      return [value, i + 1];
    }
    scale *= 128;
  }
  return undefined;
}

/** grpc-message is percent-encoded (gRPC over HTTP/2 spec). */
function grpcMessage(headers: IncomingHttpHeaders): string {
  const raw = headers['grpc-message'];
  const text = Array.isArray(raw) ? raw.join(', ') : raw ?? '';
  try {
    return decodeURIComponent(text);
  } catch {
    return text;
  }
}

function headerText(headers: IncomingHttpHeaders, name: string): string | undefined {
  const v = headers[name];
  return Array.isArray(v) ? v[0] : v;
}

/** What a length-delimited field's bytes are for. */
type FieldUse = 'blob' | 'trailer' | 'version' | 'skip';

/** A field header: at most a 10-byte tag and a 10-byte varint or length. */
const MAX_FIELD_HEADER = 20;

/**
 * Turns the gRPC response body (5-byte prefixes, SnapshotResponse messages) into the snapshot's bytes,
 * checking them as they pass; see EtcdSnapshot.body. Blob bytes are passed on as slices of the HTTP/2
 * chunks they arrived in, never copied: every copy of a 32 KiB message would be garbage the collector
 * reclaims late, and measured as 60+ MiB more RSS while streaming.
 *
 * A SnapshotResponse's fields: 1 header (skipped), 2 remaining_bytes (uint64, omitted when 0), 3 blob
 * (bytes), 4 version (string, 3.6+); unknown fields are skipped by wire type. Go encodes fields in number
 * order, so remaining_bytes is known before the blob starts.
 */
export class SnapshotDecoder extends Readable {
  readonly #endpoint: string;
  readonly #hash: Hash = createHash('sha256');
  readonly #pending: Buffer[] = [];
  #pendingBytes = 0;
  /** Bytes of the current message not parsed yet; undefined between messages. */
  #messageLeft: number | undefined;
  /** The current message's remaining_bytes (0 until seen: proto3 omits a 0). */
  #remaining = 0;
  #version: Buffer[] = [];
  #trailer: Buffer[] = [];
  /** The length-delimited field being read, and how many of its bytes are still to come. */
  #field: FieldUse | undefined;
  #fieldLeft = 0;
  /** Database size, from the first message. */
  dbBytes: number | undefined;
  storageVersion = '';
  #received = 0;
  #messages = 0;
  #trailerVerified = false;
  #bodySha256: string | undefined;
  /** Called once, when the first message ended (size known). */
  onFirstMessage: (() => void) | undefined;
  /** Resumes the source when the consumer wants more. */
  onRead: (() => void) | undefined;
  /** Releases the source. */
  onDestroy: (() => void) | undefined;

  constructor(endpoint: string) {
    super({ highWaterMark: 1024 * 1024 });
    this.#endpoint = endpoint;
  }

  /** The hex SHA-256 of every byte this stream yielded (database and trailer), once the trailer was checked. */
  get sha256(): string | undefined {
    return this.#bodySha256;
  }

  get trailerVerified(): boolean {
    return this.#trailerVerified;
  }

  override _read(): void {
    this.onRead?.();
  }

  override _destroy(err: Error | null, callback: (error?: Error | null) => void): void {
    this.onDestroy?.();
    callback(err);
  }

  /** Feeds bytes of the gRPC response body; false when the consumer is full (pause the source). Throws a SnapshotError on bad input. */
  feed(chunk: Buffer): boolean {
    this.#pending.push(chunk);
    this.#pendingBytes += chunk.length;
    let wantsMore = true;
    for (;;) {
      if (this.#messageLeft === undefined) {
        if (this.#pendingBytes < 5) break;
        const prefix = this.#peek(5);
        this.#skip(5);
        if (prefix[0] !== 0) throw this.#protocolError(`a compressed gRPC message (flag ${prefix[0]}), which was not asked for`);
        const length = prefix.readUInt32BE(1);
        if (length > MAX_MESSAGE_BYTES) throw this.#protocolError(`a ${length}-byte gRPC message`);
        if (this.#trailerVerified) throw this.#protocolError('a message after the SHA-256 trailer');
        this.#messageLeft = length;
        this.#remaining = 0;
        this.#version = [];
        this.#trailer = [];
      } else if (this.#fieldLeft > 0) {
        if (this.#pendingBytes === 0) break;
        const piece = this.#takeUpTo(this.#fieldLeft);
        this.#fieldLeft -= piece.length;
        this.#messageLeft -= piece.length;
        if (this.#field === 'blob') {
          this.#hash.update(piece);
          this.#received += piece.length;
          wantsMore = this.push(piece) && wantsMore;
        } else if (this.#field === 'trailer') {
          this.#trailer.push(piece);
        } else if (this.#field === 'version') {
          this.#version.push(piece);
        }
      } else if (this.#messageLeft > 0) {
        if (this.#pendingBytes === 0) break;
        // A field header: parse it whole, or wait for the rest of it.
        const header = this.#peek(Math.min(MAX_FIELD_HEADER, this.#messageLeft, this.#pendingBytes));
        const parsed = this.#fieldHeader(header);
        if (parsed === undefined) {
          if (header.length < Math.min(MAX_FIELD_HEADER, this.#messageLeft)) break;
          throw this.#protocolError('a SnapshotResponse with a malformed field');
        }
        this.#skip(parsed);
        this.#messageLeft -= parsed;
        if (this.#fieldLeft > this.#messageLeft) throw this.#protocolError('a SnapshotResponse field that runs past the end of its message');
      }
      if (this.#messageLeft === 0 && this.#fieldLeft === 0) {
        this.#messageLeft = undefined;
        this.#endMessage();
      }
    }
    return wantsMore;
  }

  /** The response ended: fine only if the trailer was verified and etcd reported success. */
  finish(trailers: IncomingHttpHeaders): void {
    const status = headerText(trailers, 'grpc-status');
    if (status !== undefined && status !== '0') {
      this.destroy(this.failure(trailers));
      return;
    }
    if (!this.#trailerVerified) {
      this.destroy(this.truncated(status === undefined ? 'the response ended without a gRPC status' : 'etcd ended the stream early'));
      return;
    }
    if (this.#pendingBytes !== 0 || this.#messageLeft !== undefined) {
      this.destroy(this.#protocolError('a partial gRPC message after the trailer'));
      return;
    }
    this.push(null);
  }

  /** etcd's error (grpc-status ≠ 0) as a SnapshotError, with its own words. */
  failure(headers: IncomingHttpHeaders): SnapshotError {
    const message = grpcMessage(headers);
    const status = headerText(headers, 'grpc-status') ?? '?';
    const reason = /no leader/i.test(message) ? 'NoQuorum' : 'SnapshotFailed';
    const prefix = reason === 'NoQuorum' ? 'no quorum: ' : '';
    return new SnapshotError(reason, `${prefix}etcd at ${this.#endpoint} failed the snapshot: ${message || '(no message)'} (gRPC status ${status})`, { etcdMessage: message });
  }

  truncated(detail: string, cause?: unknown): SnapshotError {
    const of = this.dbBytes === undefined ? '' : ` of ${this.dbBytes}`;
    return new SnapshotError('SnapshotTruncated', `the snapshot from ${this.#endpoint} is truncated: ${detail} after ${this.#received}${of} bytes`, cause === undefined ? {} : { cause });
  }

  #protocolError(what: string): SnapshotError {
    return new SnapshotError('SnapshotFailed', `unexpected answer from ${this.#endpoint} ${SNAPSHOT_PATH}: ${what}`);
  }

  /** Parses a field header at the start of `header`; returns its length, or undefined when incomplete. */
  #fieldHeader(header: Buffer): number | undefined {
    let parsed: [number, number] | undefined;
    try {
      parsed = readVarint(header, 0);
      if (parsed === undefined) return undefined;
      const [tag, afterTag] = parsed;
      const field = Math.floor(tag / 8);
      const wireType = tag % 8;
      if (wireType === 1 || wireType === 5) {
        this.#field = 'skip';
        this.#fieldLeft = wireType === 1 ? 8 : 4;
        return afterTag;
      }
      if (wireType !== 0 && wireType !== 2) throw new Error(`unsupported wire type ${wireType} for field ${field}`);
      const value = readVarint(header, afterTag);
      if (value === undefined) return undefined;
      if (wireType === 0) {
        if (field === 2) this.#remaining = value[0];
        return value[1];
      }
      this.#startField(field, value[0]);
      return value[1];
    } catch (err) {
      if (err instanceof SnapshotError) throw err;
      throw this.#protocolError(`a SnapshotResponse that does not decode: ${err instanceof Error ? err.message : String(err)}`);
    }
  }

  #startField(field: number, length: number): void {
    this.#fieldLeft = length;
    if (field === 4) {
      this.#field = 'version';
      return;
    }
    if (field !== 3) {
      this.#field = 'skip';
      return;
    }
    // The first message tells the database's size: what it carries plus what remains.
    this.dbBytes ??= this.#remaining + length;
    if (this.#received === this.dbBytes) {
      // Every database byte arrived: this is etcd's SHA-256 of them.
      if (length !== SNAPSHOT_TRAILER_BYTES) throw this.#protocolError(`a ${length}-byte trailer (expected a ${SNAPSHOT_TRAILER_BYTES}-byte SHA-256)`);
      this.#field = 'trailer';
      return;
    }
    if (this.#received + length > this.dbBytes) throw this.#protocolError(`${this.#received + length} bytes of a ${this.dbBytes}-byte database`);
    this.#field = 'blob';
  }

  #endMessage(): void {
    this.#messages++;
    this.#field = undefined;
    const first = this.#messages === 1;
    this.dbBytes ??= this.#remaining;
    if (first) this.storageVersion = Buffer.concat(this.#version).toString('utf8');
    if (this.#trailer.length > 0) {
      if (this.#remaining !== 0) throw this.#protocolError(`a trailer with remaining_bytes ${this.#remaining}`);
      const sent = Buffer.concat(this.#trailer);
      // A copy: the same hash goes on over the trailer, giving the whole body's SHA-256 (see sha256()).
      const actual = this.#hash.copy().digest();
      if (!actual.equals(sent)) {
        throw new SnapshotError(
          'SnapshotCorrupted',
          `the snapshot from ${this.#endpoint} is corrupted: its ${this.dbBytes} bytes hash to sha256 ${actual.toString('hex')}, but etcd sent ${sent.toString('hex')}`,
        );
      }
      this.#trailerVerified = true;
      this.#hash.update(sent);
      this.#bodySha256 = this.#hash.digest('hex');
      this.push(sent);
    } else if (this.#remaining !== this.dbBytes - this.#received) {
      throw this.#protocolError(`remaining_bytes ${this.#remaining} after ${this.#received} of ${this.dbBytes} bytes`);
    }
    if (first) this.onFirstMessage?.();
  }

  /** Up to `n` of the next pending bytes, not consumed; copied (they are few) when they span chunks. */
  #peek(n: number): Buffer {
    const first = this.#pending[0]!;
    if (first.length >= n) return first.subarray(0, n);
    const out = Buffer.allocUnsafe(n);
    let filled = 0;
    for (const chunk of this.#pending) {
      if (filled === n) break;
      filled += chunk.copy(out, filled, 0, Math.min(chunk.length, n - filled));
    }
    return out;
  }

  #skip(n: number): void {
    while (n > 0) n -= this.#takeUpTo(n).length;
  }

  /** The next pending bytes, at most `n`, from one chunk: a slice, never a copy. */
  #takeUpTo(n: number): Buffer {
    const first = this.#pending[0]!;
    if (first.length <= n) {
      this.#pending.shift();
      this.#pendingBytes -= first.length;
      return first;
    }
    this.#pending[0] = first.subarray(n);
    this.#pendingBytes -= n;
    return first.subarray(0, n);
  }
}

/**
 * Starts a snapshot of the member at `options.endpoint` and resolves once its first message arrived (so
 * its size is known); rejects with a SnapshotError when etcd refuses it or cannot be reached.
 */
export function openSnapshot(options: SnapshotOptions): Promise<EtcdSnapshot> {
  const url = new URL(options.endpoint);
  if (url.protocol !== 'http:' && url.protocol !== 'https:') return Promise.reject(new TypeError(`etcd endpoint must be http(s)://host:port: ${options.endpoint}`));
  const endpoint = url.origin;
  const windowBytes = options.windowBytes ?? DEFAULT_WINDOW_BYTES;
  const body = new SnapshotDecoder(endpoint);
  return new Promise<EtcdSnapshot>((resolve, reject) => {
    if (options.signal?.aborted) {
      const reason: unknown = options.signal.reason;
      reject(reason instanceof Error ? reason : new SnapshotError('SnapshotFailed', 'the snapshot was aborted'));
      return;
    }
    const session: ClientHttp2Session = connect(endpoint, {
      settings: { initialWindowSize: windowBytes, enablePush: false },
      ...(url.protocol === 'https:' ? { ...options.tls, ALPNProtocols: ['h2'] } : {}),
    });
    // The connection's window too: initialWindowSize only sets each stream's.
    session.on('connect', () => session.setLocalWindowSize(windowBytes));
    const stream: ClientHttp2Stream = session.request(
      {
        [http2.HTTP2_HEADER_METHOD]: 'POST',
        [http2.HTTP2_HEADER_PATH]: SNAPSHOT_PATH,
        [http2.HTTP2_HEADER_CONTENT_TYPE]: 'application/grpc',
        te: 'trailers',
      },
      { endStream: false },
    );
    // One gRPC message: not compressed, 0 bytes long (an empty SnapshotRequest).
    stream.end(Buffer.alloc(5));

    let settled = false;
    /** The caller has the body (and so listens for its errors). */
    let resolved = false;
    let responseHeaders: IncomingHttpHeaders = {};
    let trailers: IncomingHttpHeaders | undefined;
    let ended = false;
    const firstMessageTimeoutMs = options.firstMessageTimeoutMs ?? DEFAULT_FIRST_MESSAGE_TIMEOUT_MS;

    const release = (): void => {
      clearTimeout(firstMessageTimer);
      options.signal?.removeEventListener('abort', onAbort);
      if (!stream.closed) stream.close(http2.NGHTTP2_CANCEL);
      if (!session.closed) session.close();
      // A session whose peer stopped answering would wait forever for its streams to close.
      setTimeout(() => session.destroy(), 1000).unref();
    };
    const settle = (err?: Error): void => {
      if (settled) return;
      settled = true;
      clearTimeout(firstMessageTimer);
      if (err) {
        release();
        reject(err);
        return;
      }
      resolved = true;
      resolve({
        body,
        dbBytes: body.dbBytes!,
        sizeBytes: body.dbBytes! + SNAPSHOT_TRAILER_BYTES,
        storageVersion: body.storageVersion,
        sha256: () => {
          if (body.sha256 === undefined) throw new Error('the snapshot has not ended: its SHA-256 is not known yet');
          return body.sha256;
        },
      });
    };
    /** Before the first message: rejects openSnapshot; after it: errors the body. */
    const fail = (err: Error): void => {
      if (!settled) settle(err);
      else if (resolved && !body.destroyed) body.destroy(err);
    };
    const onAbort = (): void => {
      const reason: unknown = options.signal?.reason;
      fail(reason instanceof Error ? reason : new SnapshotError('SnapshotFailed', 'the snapshot was aborted'));
    };
    options.signal?.addEventListener('abort', onAbort, { once: true });
    const firstMessageTimer = setTimeout(() => {
      fail(new SnapshotError('SnapshotFailed', `etcd at ${endpoint} sent no snapshot data within ${Math.round(firstMessageTimeoutMs / 1000)} s`));
    }, firstMessageTimeoutMs);

    body.onFirstMessage = () => settle();
    body.onRead = () => stream.resume();
    body.onDestroy = release;

    const lost = (err: unknown): void => {
      if (ended) return;
      const detail = err instanceof Error ? err.message : String(err);
      if (body.dbBytes === undefined) fail(new SnapshotError('SnapshotFailed', `cannot stream a snapshot from etcd at ${endpoint}: ${detail}`, { cause: err }));
      else fail(body.truncated(`the connection failed (${detail})`, err));
    };
    session.on('error', lost);
    session.on('close', () => lost(new Error('the connection closed')));

    stream.on('response', (headers) => {
      responseHeaders = headers;
      const status = Number(headers[http2.HTTP2_HEADER_STATUS]);
      if (status !== 200) {
        const type = headerText(headers, 'content-type');
        fail(new SnapshotError('SnapshotFailed', `etcd at ${endpoint} answered ${SNAPSHOT_PATH} with HTTP ${status}${type ? ` (${type})` : ''}`));
      }
    });
    stream.on('trailers', (headers: IncomingHttpHeaders) => {
      trailers = headers;
    });
    stream.on('data', (chunk: Buffer) => {
      if (body.destroyed) return;
      try {
        if (!body.feed(chunk)) stream.pause();
      } catch (err) {
        fail(err instanceof Error ? err : new Error(String(err)));
      }
    });
    stream.on('end', () => {
      ended = true;
      // A trailers-only answer (an immediate error) carries grpc-status in its headers.
      const final = trailers ?? responseHeaders;
      if (!settled) {
        const status = headerText(final, 'grpc-status');
        fail(status !== undefined && status !== '0' ? body.failure(final) : new SnapshotError('SnapshotFailed', `etcd at ${endpoint} ended the snapshot stream without sending any data`));
        return;
      }
      body.finish(final);
      release();
    });
    stream.on('error', lost);
    stream.on('close', () => {
      if (ended) return;
      const code = stream.rstCode;
      // After the session's own error (e.g. ECONNREFUSED), which says more, if it has one.
      setImmediate(() => lost(new Error(code ? `the stream was reset (HTTP/2 error code ${code})` : 'the stream closed before it ended')));
    });
  });
}
