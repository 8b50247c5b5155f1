// An RDB streamed from a running server over the replication protocol, as `redis-cli --rdb` does: AUTH, then
// `REPLCONF rdb-only 1` (the server sends the snapshot and no replication stream after it, and closes), then
// `SYNC`. The server answers with newlines while it prepares the snapshot, then either `$<length>\r\n` and that
// many bytes (a snapshot written to disk first) or `$EOF:<40-byte mark>\r\n`, the bytes, and the mark again
// (diskless: the length is not known in advance). Asked of a replica, the snapshot is the replica's own fork:
// the primary does no work for it.
import { connect, type Socket } from 'node:net';
import { connect as connectTLS } from 'node:tls';
import { PassThrough, type Readable } from 'node:stream';

/** Bytes an RDB file starts with: `REDIS` and a four-digit format version. */
export const RDB_MAGIC = 'REDIS';
const EOF_MARK_BYTES = 40;

export class RdbStreamError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'RdbStreamError';
  }
}

/** One RESP command as the server reads it (an array of bulk strings). */
export function encodeCommand(args: readonly string[]): Buffer {
  const parts = args.map((a) => `$${Buffer.byteLength(a)}\r\n${a}\r\n`);
  return Buffer.from(`*${args.length}\r\n${parts.join('')}`);
}

/** How the snapshot's payload is delimited, from the `$…` line that announces it. */
export type Framing = { kind: 'length'; bytes: number } | { kind: 'eof-mark'; mark: Buffer };

export function parseFraming(line: string): Framing {
  if (line.startsWith('$EOF:')) {
    const mark = line.slice(5);
    if (mark.length !== EOF_MARK_BYTES) throw new RdbStreamError(`the server announced an EOF mark of ${mark.length} bytes, not ${EOF_MARK_BYTES}`);
    return { kind: 'eof-mark', mark: Buffer.from(mark, 'latin1') };
  }
  const bytes = Number(line.slice(1));
  if (!line.startsWith('$') || !Number.isSafeInteger(bytes) || bytes < 0) throw new RdbStreamError(`the server answered SYNC with ${JSON.stringify(line.slice(0, 200))} instead of a snapshot`);
  return { kind: 'length', bytes };
}

/**
 * Splits the payload off the bytes that follow the framing line: pushes what belongs to the snapshot, and says
 * when it is complete. An EOF-marked payload holds back the last 40 bytes it saw until it knows they are not the mark.
 */
export class PayloadCutter {
  private remaining: number;
  private tail = Buffer.alloc(0);
  done = false;
  private readonly framing: Framing;
  private readonly push: (chunk: Buffer) => void;
  constructor(framing: Framing, push: (chunk: Buffer) => void) {
    this.framing = framing;
    this.push = push;
    this.remaining = framing.kind === 'length' ? framing.bytes : Infinity;
    if (this.remaining === 0) this.done = true;
  }

  write(chunk: Buffer): void {
    if (this.done) return;
    if (this.framing.kind === 'length') {
      const take = chunk.subarray(0, Math.min(chunk.length, this.remaining));
      this.remaining -= take.length;
      if (take.length > 0) this.push(take);
      this.done = this.remaining === 0;
      return;
    }
    const seen = Buffer.concat([this.tail, chunk]);
    const at = seen.indexOf(this.framing.mark);
    if (at >= 0) {
      if (at > 0) this.push(seen.subarray(0, at));
      this.done = true;
      return;
    }
    const keep = Math.min(seen.length, EOF_MARK_BYTES - 1);
    if (seen.length > keep) this.push(seen.subarray(0, seen.length - keep));
    this.tail = Buffer.from(seen.subarray(seen.length - keep));
  }
}

export interface RdbSource {
  host: string;
  port: number;
  password?: string;
  /** The CA bundle to verify a TLS server by (its host name is `host`); absent: plaintext. */
  tlsCA?: string;
  /** Bound of connecting and of each reply before the snapshot (the snapshot itself is bounded by the caller). */
  timeoutMs?: number;
  signal?: AbortSignal;
}

export interface RdbStream {
  /** The snapshot's bytes, ending when the payload is complete; errors if the connection ends first. */
  body: Readable;
  /** Announced by the server, when it wrote the snapshot to disk first; undefined for a diskless transfer. */
  sizeBytes: number | undefined;
  /** The server's version (`redis_version` of INFO server; Valkey reports it too). */
  version: string;
}

/** Reads replies line by line until the snapshot's payload begins; then hands the socket's bytes to a PayloadCutter. */
class ReplyReader {
  private buffer = Buffer.alloc(0);
  private waiters: ((b: Buffer) => void)[] = [];
  private readonly socket: Socket;
  constructor(socket: Socket) {
    this.socket = socket;
    socket.on('data', this.onData);
  }
  private readonly onData = (chunk: Buffer): void => {
    this.buffer = Buffer.concat([this.buffer, chunk]);
    this.waiters.shift()?.(Buffer.alloc(0));
  };
  private async more(timeoutMs: number, what: string): Promise<void> {
    await new Promise<void>((resolve, reject) => {
      const timer = setTimeout(() => reject(new RdbStreamError(`no answer to ${what} within ${timeoutMs / 1000} s`)), timeoutMs);
      const onClose = (): void => reject(new RdbStreamError(`the server closed the connection while waiting for ${what}`));
      this.socket.once('close', onClose);
      this.waiters.push(() => {
        clearTimeout(timer);
        this.socket.off('close', onClose);
        resolve();
      });
    });
  }
  /** One line without its CRLF; a bare `\n` (the server's keep-alive while it prepares a snapshot) is skipped. */
  async line(timeoutMs: number, what: string): Promise<string> {
    for (;;) {
      while (this.buffer[0] === 0x0a) this.buffer = this.buffer.subarray(1);
      const end = this.buffer.indexOf('\r\n');
      if (end >= 0) {
        const line = this.buffer.subarray(0, end).toString('latin1');
        this.buffer = this.buffer.subarray(end + 2);
        return line;
      }
      await this.more(timeoutMs, what);
    }
  }
  async bulk(timeoutMs: number, what: string): Promise<string> {
    const header = await this.line(timeoutMs, what);
    if (header.startsWith('-')) throw new RdbStreamError(`${what}: ${header.slice(1)}`);
    const length = Number(header.slice(1));
    while (this.buffer.length < length + 2) await this.more(timeoutMs, what);
    const value = this.buffer.subarray(0, length).toString('utf8');
    this.buffer = this.buffer.subarray(length + 2);
    return value;
  }
  /** Stops reading replies: what was read past the last line, and every later byte, go to `sink`. */
  handOver(sink: (chunk: Buffer) => void): void {
    this.socket.off('data', this.onData);
    if (this.buffer.length > 0) sink(this.buffer);
    this.socket.on('data', sink);
  }
}

function dial(source: RdbSource, timeoutMs: number): Promise<Socket> {
  return new Promise((resolve, reject) => {
    // Over TLS the server's certificate is verified against the CA bundle and `host`, its stable name.
    const socket: Socket = source.tlsCA !== undefined ? connectTLS({ host: source.host, port: source.port, ca: source.tlsCA, servername: source.host }) : connect({ host: source.host, port: source.port });
    const timer = setTimeout(() => {
      socket.destroy();
      reject(new RdbStreamError(`cannot connect to ${source.host}:${source.port} within ${timeoutMs / 1000} s`));
    }, timeoutMs);
    socket.once(source.tlsCA !== undefined ? 'secureConnect' : 'connect', () => {
      clearTimeout(timer);
      socket.removeAllListeners('error');
      resolve(socket);
    });
    socket.once('error', (err: Error) => {
      clearTimeout(timer);
      reject(new RdbStreamError(`cannot connect to ${source.host}:${source.port}: ${err.message}`));
    });
  });
}

/** The snapshot's bytes piped into `body` with backpressure: the socket pauses while the upload is behind. */
function pipePayload(socket: Socket, reader: ReplyReader, framing: Framing, body: PassThrough): void {
  const cutter = new PayloadCutter(framing, (chunk) => {
    if (!body.write(chunk)) socket.pause();
  });
  body.on('drain', () => socket.resume());
  const finish = (): void => {
    body.end();
    socket.destroy();
  };
  socket.once('close', () => {
    if (!cutter.done) body.destroy(new RdbStreamError(`the server closed the connection before the snapshot was complete`));
  });
  socket.on('error', (err) => body.destroy(new RdbStreamError(`the snapshot's connection failed: ${err.message}`)));
  if (cutter.done) return finish();
  reader.handOver((chunk) => {
    cutter.write(chunk);
    if (cutter.done) finish();
  });
}

/** Connects, authenticates, and asks for a snapshot; resolves once the server announced it. */
export async function openRdbStream(source: RdbSource): Promise<RdbStream> {
  const timeoutMs = source.timeoutMs ?? 30_000;
  const socket = await dial(source, timeoutMs);
  const abort = (): void => {
    socket.destroy(source.signal?.reason instanceof Error ? source.signal.reason : new RdbStreamError('aborted'));
  };
  source.signal?.addEventListener('abort', abort, { once: true });
  try {
    socket.on('error', () => undefined);
    const reader = new ReplyReader(socket);
    if (source.password !== undefined) {
      socket.write(encodeCommand(['AUTH', source.password]));
      const auth = await reader.line(timeoutMs, 'AUTH');
      if (auth !== '+OK') throw new RdbStreamError(`AUTH refused: ${auth.replace(/^-/, '')}`);
    }
    socket.write(encodeCommand(['INFO', 'server']));
    const info = await reader.bulk(timeoutMs, 'INFO server');
    const version = /^redis_version:(.*)$/m.exec(info)?.[1]?.trim() ?? '';
    // Servers before 7.0 refuse rdb-only; they then stream replication after the snapshot, which the cutter drops.
    socket.write(encodeCommand(['REPLCONF', 'rdb-only', '1']));
    await reader.line(timeoutMs, 'REPLCONF rdb-only');
    socket.write(encodeCommand(['SYNC']));
    const announced = await reader.line(timeoutMs, 'SYNC');
    if (announced.startsWith('-')) throw new RdbStreamError(`SYNC refused: ${announced.slice(1)}`);
    const framing = parseFraming(announced);
    const body = new PassThrough({ highWaterMark: 1024 * 1024 });
    body.once('close', () => source.signal?.removeEventListener('abort', abort));
    pipePayload(socket, reader, framing, body);
    return { body, sizeBytes: framing.kind === 'length' ? framing.bytes : undefined, version };
  } catch (err) {
    source.signal?.removeEventListener('abort', abort);
    socket.destroy();
    throw err;
  }
}

/**
 * Checks, as the bytes pass, that they are an RDB file: the magic at the start and the EOF opcode (0xFF) nine
 * bytes before the end (an 8-byte checksum follows it). Catches a truncated stream and an answer that is not a
 * snapshot before either is stored as one.
 */
export class RdbShapeCheck {
  private head = Buffer.alloc(0);
  private last = Buffer.alloc(0);
  bytes = 0;
  update(chunk: Buffer): void {
    this.bytes += chunk.length;
    if (this.head.length < RDB_MAGIC.length) this.head = Buffer.concat([this.head, chunk.subarray(0, RDB_MAGIC.length - this.head.length)]);
    this.last = Buffer.concat([this.last, chunk]).subarray(-9);
  }
  /** Why the bytes are not a complete RDB file, or undefined when they are. */
  problem(): string | undefined {
    if (this.head.toString('latin1') !== RDB_MAGIC) return `not an RDB file: it starts with ${JSON.stringify(this.head.toString('latin1'))}, not ${RDB_MAGIC}`;
    if (this.last.length < 9 || this.last[0] !== 0xff) return `the RDB file is truncated: no EOF opcode before its checksum (${this.bytes} bytes)`;
    return undefined;
  }
}
