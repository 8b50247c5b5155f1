// Data-safety checker: writes unique keys to an etcd cluster at a steady rate, remembers which writes
// etcd acknowledged, and later proves every acknowledged key is still there with its value. Used by
// unit tests against local etcd and by chaos tests against the operator's clusters.
//
// It talks to etcd's v3 JSON gateway (grpc-gateway) over plain HTTP so it needs no client library and
// works against anything that exposes the client port, such as the cluster's client Service.
import http from 'node:http';
import { randomBytes } from 'node:crypto';

export interface DataCheckerOptions {
  /** Client URLs, `http://host:port`; writes rotate across them. */
  endpoints: string[];
  /** Writes started per second. Default 20. */
  ratePerSecond?: number;
  /** Key prefix; every key written lives under it. Default `/quorum-checker/<random>/`. */
  prefix?: string;
  /** Per-request timeout in milliseconds. Default 2000. */
  timeoutMs?: number;
  /** Writes allowed in flight at once; the pace slows rather than piling up requests. Default 4. */
  maxInFlight?: number;
}

export interface VerifyOptions {
  /** How long to keep retrying the read-back (the cluster may still be healing). Default 30000. */
  timeoutMs?: number;
  /** Keys per range request. Default 1000. */
  pageSize?: number;
}

export interface DataCheckerReport {
  /** Acknowledged writes that were checked. */
  acknowledged: number;
  /** Writes that failed or timed out: they may or may not have been applied, so they are not checked for presence. */
  unacknowledged: number;
  /** Acknowledged keys that are missing, sorted. */
  lost: string[];
  /** Keys present with a value this checker never wrote to them, sorted. */
  corrupted: string[];
  /** Unacknowledged writes that turned out to have been applied anyway (informational). */
  unacknowledgedPresent: number;
  verifiedAt: string;
}

export interface DataCheckerStats {
  running: boolean;
  attempted: number;
  acknowledged: number;
  unacknowledged: number;
  inFlight: number;
  /** Acknowledged writes per second over the last few seconds. */
  writesPerSecond: number;
  lastError?: string;
  lastErrorAt?: string;
}

/** Thrown by `verify()` when no complete read-back succeeded before its timeout. */
export class VerifyTimeoutError extends Error {
  readonly attempts: number;
  readonly lastError: string | undefined;

  constructor(message: string, attempts: number, lastError: string | undefined) {
    super(message);
    this.name = 'VerifyTimeoutError';
    this.attempts = attempts;
    this.lastError = lastError;
  }
}

interface WriteRecord {
  value: string;
  acknowledged: boolean;
}

interface RangeKv {
  key: string;
  value: string;
}

interface RangePage {
  kvs: RangeKv[];
  more: boolean;
  revision: string;
}

const SEQ_DIGITS = 10;
const RATE_WINDOW_MS = 5000;

export class DataChecker {
  readonly prefix: string;
  readonly #endpoints: string[];
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #maxInFlight: number;
  readonly #runId = randomBytes(6).toString('hex');
  readonly #agent = new http.Agent({ keepAlive: true, maxSockets: 16 });

  // Every write ever attempted, by key; keys are never rewritten, so a key maps to exactly one value.
  readonly #writes = new Map<string, WriteRecord>();
  readonly #inFlight = new Set<Promise<void>>();
  #ackTimes: number[] = [];
  #seq = 0;
  #startedAt = 0;
  #next = 0;
  #acknowledged = 0;
  #unacknowledged = 0;
  #lastError: string | undefined;
  #lastErrorAt: string | undefined;
  #running = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(options: DataCheckerOptions) {
    if (options.endpoints.length === 0) throw new Error('DataChecker: at least one endpoint is required');
    this.#endpoints = options.endpoints.map((e) => {
      const url = new URL(e);
      if (url.protocol !== 'http:') throw new Error(`DataChecker: endpoint ${e} must be http://host:port`);
      return url.origin;
    });
    const rate = options.ratePerSecond ?? 20;
    if (!(rate > 0)) throw new Error('DataChecker: ratePerSecond must be positive');
    this.#intervalMs = 1000 / rate;
    this.#timeoutMs = options.timeoutMs ?? 2000;
    this.#maxInFlight = Math.max(1, options.maxInFlight ?? 4);
    this.prefix = options.prefix ?? `/quorum-checker/${this.#runId}/`;
    if (this.prefix === '') throw new Error('DataChecker: prefix must not be empty');
  }

  /** Starts the paced write loop. */
  start(): void {
    if (this.#running) throw new Error('DataChecker: already running');
    this.#running = true;
    this.#startedAt = performance.now();
    this.#loop = this.#run();
  }

  /** Stops writing and waits until every in-flight write has been acknowledged or failed. */
  async stop(): Promise<void> {
    this.#running = false;
    this.#wake?.();
    await this.#loop;
    this.#loop = undefined;
    await Promise.all(this.#inFlight);
  }

  /** Stops writing and drops pooled keep-alive connections (idle ones never hold the process open). */
  async close(): Promise<void> {
    await this.stop();
    this.#agent.destroy();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.close();
  }

  stats(): DataCheckerStats {
    const now = performance.now();
    this.#pruneAckTimes(now);
    // Rate over the window, or over the run so far when it is younger than the window.
    const span = Math.max(this.#intervalMs, Math.min(RATE_WINDOW_MS, now - this.#startedAt));
    const stats: DataCheckerStats = {
      running: this.#running,
      attempted: this.#seq,
      acknowledged: this.#acknowledged,
      unacknowledged: this.#unacknowledged,
      inFlight: this.#inFlight.size,
      writesPerSecond: (this.#ackTimes.length * 1000) / span,
    };
    if (this.#lastError !== undefined) stats.lastError = this.#lastError;
    if (this.#lastErrorAt !== undefined) stats.lastErrorAt = this.#lastErrorAt;
    return stats;
  }

  /** Keys etcd has acknowledged so far, in write order (for tests that tamper with the data). */
  acknowledgedKeys(): string[] {
    return [...this.#writes].filter(([, w]) => w.acknowledged).map(([k]) => k);
  }

  /**
   * Reads back everything under the prefix and checks it against the writes acknowledged when
   * `verify()` was called; writes still running keep going and are checked by a later call.
   * Retries until `timeoutMs` on any failure, then throws `VerifyTimeoutError`.
   */
  async verify(options: VerifyOptions = {}): Promise<DataCheckerReport> {
    const timeoutMs = options.timeoutMs ?? 30_000;
    const pageSize = Math.max(1, options.pageSize ?? 1000);
    // Snapshot first: each of these was acknowledged before the linearizable read below begins.
    const expected = new Map<string, string>();
    for (const [key, w] of this.#writes) if (w.acknowledged) expected.set(key, w.value);
    const unacknowledged = this.#unacknowledged;

    const deadline = performance.now() + timeoutMs;
    let attempts = 0;
    let lastError: string | undefined;
    let endpoint = 0;
    for (;;) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) break;
      attempts++;
      const base = this.#endpoints[endpoint++ % this.#endpoints.length]!;
      try {
        const present = await this.#readAll(base, pageSize, Math.min(this.#timeoutMs, remaining));
        return this.#compare(expected, present, unacknowledged);
      } catch (err) {
        lastError = describe(err);
      }
      const pause = Math.min(100 * 2 ** Math.min(attempts - 1, 3), deadline - performance.now());
      if (pause > 0) await new Promise((r) => setTimeout(r, pause));
    }
    throw new VerifyTimeoutError(
      `DataChecker.verify: could not read back ${expected.size} acknowledged key(s) under ${JSON.stringify(this.prefix)} ` +
        `within ${timeoutMs} ms (${attempts} attempt(s)); last error: ${lastError ?? 'none'}`,
      attempts,
      lastError,
    );
  }

  async #run(): Promise<void> {
    this.#next = performance.now();
    while (this.#running) {
      const delay = this.#next - performance.now();
      if (delay > 0) await this.#sleep(delay);
      while (this.#running && this.#inFlight.size >= this.#maxInFlight) await Promise.race(this.#inFlight);
      if (!this.#running) break;
      const write = this.#write().finally(() => this.#inFlight.delete(write));
      this.#inFlight.add(write);
      // After a stall (slow cluster, busy event loop) resume the pace instead of bursting to catch up.
      this.#next = Math.max(this.#next + this.#intervalMs, performance.now() - this.#intervalMs);
    }
  }

  #sleep(ms: number): Promise<void> {
    return new Promise((resolve) => {
      const timer = setTimeout(done, ms);
      function done(): void {
        clearTimeout(timer);
        resolve();
      }
      this.#wake = done;
    });
  }

  async #write(): Promise<void> {
    const seq = this.#seq++;
    const key = this.prefix + String(seq).padStart(SEQ_DIGITS, '0');
    const value = `${this.#runId}:${seq}:${randomBytes(4).toString('hex')}`;
    const record: WriteRecord = { value, acknowledged: false };
    this.#writes.set(key, record);
    const base = this.#endpoints[seq % this.#endpoints.length]!;
    try {
      const body = await this.#post(base, '/v3/kv/put', { key: b64(key), value: b64(value) }, this.#timeoutMs);
      // Only a response carrying a revision proves etcd committed the write.
      if (revisionOf(body) === undefined) throw new Error(`unexpected put response ${JSON.stringify(body).slice(0, 200)}`);
      record.acknowledged = true;
      this.#acknowledged++;
      this.#ackTimes.push(performance.now());
      this.#pruneAckTimes(performance.now());
    } catch (err) {
      // Ambiguous: it may or may not have been applied, so it is never counted as acknowledged.
      this.#unacknowledged++;
      this.#lastError = `put ${key} via ${base}: ${describe(err)}`;
      this.#lastErrorAt = new Date().toISOString();
    }
  }

  #pruneAckTimes(now: number): void {
    const cutoff = now - RATE_WINDOW_MS;
    let drop = 0;
    while (drop < this.#ackTimes.length && this.#ackTimes[drop]! < cutoff) drop++;
    if (drop > 0) this.#ackTimes = this.#ackTimes.slice(drop);
  }

  /** One consistent scan of the prefix: every page is read at the first page's revision. */
  async #readAll(base: string, pageSize: number, timeoutMs: number): Promise<Map<string, string>> {
    const present = new Map<string, string>();
    const end = b64(prefixEnd(Buffer.from(this.prefix)));
    let start = b64(this.prefix);
    let revision: string | undefined;
    for (;;) {
      const request: Record<string, unknown> = { key: start, range_end: end, limit: pageSize };
      if (revision !== undefined) request['revision'] = revision;
      const page = parseRange(await this.#post(base, '/v3/kv/range', request, timeoutMs));
      revision ??= page.revision;
      for (const kv of page.kvs) present.set(kv.key, kv.value);
      const last = page.kvs.at(-1);
      if (!page.more || last === undefined) return present;
      start = Buffer.concat([Buffer.from(last.key), Buffer.from([0])]).toString('base64');
    }
  }

  #compare(expected: Map<string, string>, present: Map<string, string>, unacknowledged: number): DataCheckerReport {
    const lost: string[] = [];
    const corrupted: string[] = [];
    let unacknowledgedPresent = 0;
    for (const [key, value] of expected) {
      const got = present.get(key);
      if (got === undefined) lost.push(key);
      else if (got !== value) corrupted.push(key);
    }
    for (const [key, got] of present) {
      if (expected.has(key)) continue;
      const write = this.#writes.get(key);
      // Either an ambiguous write that landed (fine if intact), one acknowledged after the snapshot, or a stranger.
      if (write === undefined || got !== write.value) corrupted.push(key);
      else if (!write.acknowledged) unacknowledgedPresent++;
    }
    return {
      acknowledged: expected.size,
      unacknowledged,
      lost: lost.sort(),
      corrupted: corrupted.sort(),
      unacknowledgedPresent,
      verifiedAt: new Date().toISOString(),
    };
  }

  #post(base: string, path: string, payload: Record<string, unknown>, timeoutMs: number): Promise<unknown> {
    const data = Buffer.from(JSON.stringify(payload));
    const url = new URL(path, base);
    return new Promise((resolve, reject) => {
      let settled = false;
      const settle = (err: Error | undefined, value?: unknown): void => {
        if (settled) return;
        settled = true;
        clearTimeout(timer);
        if (err) {
          req.destroy();
          reject(err);
        } else resolve(value);
      };
      // One deadline for connect, request and response body; destroying the request ends all of them.
      const timer = setTimeout(() => settle(new Error(`timed out after ${Math.round(timeoutMs)} ms`)), timeoutMs);
      const req = http.request(
        {
          agent: this.#agent,
          hostname: url.hostname,
          port: url.port,
          path: url.pathname,
          method: 'POST',
          headers: { 'content-type': 'application/json', 'content-length': data.length },
        },
        (res) => {
          const chunks: Buffer[] = [];
          res.on('data', (c: Buffer) => chunks.push(c));
          res.on('error', (err) => settle(err));
          res.on('close', () => {
            if (!res.complete) settle(new Error('connection closed before the response was complete'));
          });
          res.on('end', () => {
            const text = Buffer.concat(chunks).toString('utf8');
            const status = res.statusCode ?? 0;
            if (status < 200 || status >= 300) {
              settle(new Error(`HTTP ${status}: ${gatewayMessage(text)}`));
              return;
            }
            try {
              settle(undefined, JSON.parse(text) as unknown);
            } catch {
              settle(new Error(`invalid JSON response: ${text.slice(0, 200)}`));
            }
          });
        },
      );
      req.on('error', (err) => settle(err));
      req.end(data);
    }).catch((err: unknown) => {
      throw new Error(`POST ${url.href}: ${describe(err)}`);
    });
  }
}

function b64(s: string | Buffer): string {
  return (typeof s === 'string' ? Buffer.from(s) : s).toString('base64');
}

/** etcd's prefix range end: the prefix with its last byte below 0xff incremented. */
function prefixEnd(prefix: Buffer): Buffer {
  const end = Buffer.from(prefix);
  for (let i = end.length - 1; i >= 0; i--) {
    if (end[i]! < 0xff) {
      end[i]! += 1;
      return end.subarray(0, i + 1);
    }
  }
  return Buffer.from([0]); // all 0xff: to the end of the keyspace
}

function isRecord(v: unknown): v is Record<string, unknown> {
  return typeof v === 'object' && v !== null && !Array.isArray(v);
}

function revisionOf(body: unknown): string | undefined {
  if (!isRecord(body) || !isRecord(body['header'])) return undefined;
  const rev = body['header']['revision'];
  // int64 fields arrive as JSON strings.
  return typeof rev === 'string' || typeof rev === 'number' ? String(rev) : undefined;
}

function parseRange(body: unknown): RangePage {
  const revision = revisionOf(body);
  if (!isRecord(body) || revision === undefined) throw new Error(`unexpected range response ${JSON.stringify(body).slice(0, 200)}`);
  const raw = body['kvs'] ?? []; // omitted when empty
  if (!Array.isArray(raw)) throw new Error('unexpected range response: kvs is not a list');
  const kvs = raw.map((kv: unknown): RangeKv => {
    if (!isRecord(kv) || typeof kv['key'] !== 'string') throw new Error('unexpected range response: bad kv');
    const value = typeof kv['value'] === 'string' ? kv['value'] : ''; // empty values are omitted
    return { key: Buffer.from(kv['key'], 'base64').toString('utf8'), value: Buffer.from(value, 'base64').toString('utf8') };
  });
  return { kvs, more: body['more'] === true, revision };
}

function gatewayMessage(text: string): string {
  try {
    const body = JSON.parse(text) as unknown;
    if (isRecord(body) && typeof body['message'] === 'string') return body['message'];
  } catch {
    // not JSON: fall through to the raw text
  }
  return text.slice(0, 200);
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    const code = (err as NodeJS.ErrnoException).code;
    return code && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
