// Checks a stored snapshot as it is read back (for a restore): its SHA-256 as a whole, and etcd's own
// trailer (the last 32 bytes are the SHA-256 of every byte before them), without holding it in memory.
import { createHash, type Hash } from 'node:crypto';
import { Transform, type TransformCallback } from 'node:stream';
import { SnapshotError, SNAPSHOT_TRAILER_BYTES } from './snapshot.ts';

/**
 * bbolt writes whole pages (4 KiB, or 64 KiB on some arm64 kernels), all multiples of 512: a snapshot is
 * that plus the trailer. This is the check `etcdutl snapshot restore` makes to find the trailer.
 */
const PAGE_MULTIPLE = 512;
/** Enough of the file's start to hold both bbolt meta pages for any page size up to 64 KiB. */
const HEAD_BYTES = 64 * 1024 + 80;
const BOLT_MAGIC = 0xed0cdaed;

/** FNV-1a, 64 bits: bbolt's meta page checksum. */
function fnv1a64(bytes: Buffer): bigint {
  let hash = 0xcbf29ce484222325n;
  for (const byte of bytes) hash = BigInt.asUintN(64, (hash ^ BigInt(byte)) * 0x100000001b3n);
  return hash;
}

/**
 * The database size a bbolt file's meta pages record (high-water page ID × page size), which is exactly
 * what a snapshot holds before its trailer; undefined when neither meta page is intact. The layout (bbolt's
 * `meta` after a 16-byte page header, little-endian): magic u32, version u32, pageSize u32, flags u32,
 * root bucket 16 bytes, freelist u64, pgid u64, txid u64, checksum u64 over the fields before it.
 */
export function boltDatabaseBytes(head: Buffer): number | undefined {
  const metaAt = (offset: number): { bytes: number; txid: bigint } | undefined => {
    if (head.length < offset + 80) return undefined;
    const meta = head.subarray(offset + 16, offset + 80);
    if (meta.readUInt32LE(0) !== BOLT_MAGIC || fnv1a64(meta.subarray(0, 56)) !== meta.readBigUInt64LE(56)) return undefined;
    const pageSize = meta.readUInt32LE(8);
    const bytes = Number(meta.readBigUInt64LE(40)) * pageSize;
    return Number.isSafeInteger(bytes) ? { bytes, txid: meta.readBigUInt64LE(48) } : undefined;
  };
  const first = metaAt(0);
  // The second meta page sits one page in; its page size is the first's, or one bbolt supports.
  const candidates = first ? [head.readUInt32LE(24)] : [4096, 16384, 65536];
  const second = candidates.map(metaAt).find((m) => m !== undefined);
  const newest = [first, second].filter((m) => m !== undefined).sort((a, b) => (a.txid > b.txid ? -1 : 1))[0];
  return newest?.bytes;
}

export interface SnapshotFileCheckOptions {
  /** Hex SHA-256 the whole file must have (the backup's recorded one). */
  sha256?: string;
  /** For messages: where the bytes came from. */
  source: string;
  /** Called as bytes pass, with the total so far. */
  onBytes?: (total: number) => void;
}

/**
 * Passes the bytes through unchanged and fails at their end, with a SnapshotError, when they are not a
 * whole etcd snapshot: SnapshotTruncated when the size is not whole pages plus the trailer,
 * SnapshotCorrupted when etcd's trailer or the expected SHA-256 does not match.
 */
export class SnapshotFileCheck extends Transform {
  readonly #options: SnapshotFileCheckOptions;
  readonly #whole: Hash = createHash('sha256');
  readonly #database: Hash = createHash('sha256');
  /** The last bytes seen, which may turn out to be the trailer. */
  #tail: Buffer = Buffer.alloc(0);
  /** The file's first bytes, where bbolt's meta pages are. */
  #head: Buffer[] = [];
  #headBytes = 0;
  #bytes = 0;
  #sha256 = '';

  constructor(options: SnapshotFileCheckOptions) {
    super({ highWaterMark: 1024 * 1024 });
    this.#options = options;
  }

  /** Bytes seen so far. */
  get bytes(): number {
    return this.#bytes;
  }

  /** Hex SHA-256 of the whole file; set once the check passed. */
  get sha256(): string {
    return this.#sha256;
  }

  override _transform(chunk: Buffer, _encoding: BufferEncoding, callback: TransformCallback): void {
    this.#bytes += chunk.length;
    this.#whole.update(chunk);
    this.#options.onBytes?.(this.#bytes);
    if (this.#headBytes < HEAD_BYTES) {
      const part = chunk.subarray(0, HEAD_BYTES - this.#headBytes);
      this.#head.push(Buffer.from(part));
      this.#headBytes += part.length;
    }
    // Everything but the last 32 bytes belongs to the database hash.
    if (chunk.length >= SNAPSHOT_TRAILER_BYTES) {
      this.#database.update(this.#tail);
      this.#database.update(chunk.subarray(0, chunk.length - SNAPSHOT_TRAILER_BYTES));
      this.#tail = Buffer.from(chunk.subarray(chunk.length - SNAPSHOT_TRAILER_BYTES));
    } else {
      const joined = Buffer.concat([this.#tail, chunk]);
      const keep = Math.min(SNAPSHOT_TRAILER_BYTES, joined.length);
      this.#database.update(joined.subarray(0, joined.length - keep));
      this.#tail = joined.subarray(joined.length - keep);
    }
    callback(null, chunk);
  }

  override _flush(callback: TransformCallback): void {
    const { source } = this.#options;
    // The size the database says it has: a snapshot cut at a page boundary is caught here, not as a
    // mismatched hash (the trailer is gone) that would read as corruption.
    const expected = boltDatabaseBytes(Buffer.concat(this.#head));
    if (expected !== undefined && this.#bytes !== expected + SNAPSHOT_TRAILER_BYTES) {
      const short = this.#bytes < expected + SNAPSHOT_TRAILER_BYTES;
      callback(
        new SnapshotError(
          short ? 'SnapshotTruncated' : 'SnapshotCorrupted',
          `${source} is not a whole etcd snapshot: it holds ${this.#bytes} bytes, but its database records ${expected} bytes plus etcd's ${SNAPSHOT_TRAILER_BYTES}-byte SHA-256${short ? ' (it was cut short)' : ''}`,
        ),
      );
      return;
    }
    if (this.#bytes % PAGE_MULTIPLE !== SNAPSHOT_TRAILER_BYTES) {
      callback(
        new SnapshotError(
          'SnapshotTruncated',
          `${source} is not a whole etcd snapshot: its ${this.#bytes} bytes are not whole database pages followed by etcd's ${SNAPSHOT_TRAILER_BYTES}-byte SHA-256 (it was cut short, or is not a snapshot)`,
        ),
      );
      return;
    }
    const whole = this.#whole.digest('hex');
    const recorded = this.#options.sha256?.toLowerCase();
    if (recorded !== undefined && whole !== recorded) {
      callback(new SnapshotError('SnapshotCorrupted', `${source} is corrupted: its SHA-256 is ${whole}, but the backup recorded ${recorded}`));
      return;
    }
    const database = this.#database.digest();
    if (!database.equals(this.#tail)) {
      callback(
        new SnapshotError(
          'SnapshotCorrupted',
          `${source} is corrupted: its first ${this.#bytes - SNAPSHOT_TRAILER_BYTES} bytes hash to sha256 ${database.toString('hex')}, but etcd's trailer says ${this.#tail.toString('hex')}`,
        ),
      );
      return;
    }
    this.#sha256 = whole;
    callback();
  }
}
