// Data-safety checker: writes unique keys to an etcd cluster at a steady rate, remembers which writes
// etcd acknowledged, and later proves every acknowledged key is still there with its value. Used by
// unit tests against local etcd and by chaos tests against the operator's clusters.
//
// It talks through the operator's own EtcdClient (etcd's v3 JSON gateway over HTTP, or HTTPS with a client
// certificate for a cluster with client TLS), so it works against anything that exposes the client port, such as
// the cluster's client Service.
import { randomBytes } from 'node:crypto';
import { EtcdClient, prefixEnd, type EtcdTls } from '../etcd/client.ts';

export interface DataCheckerOptions {
  /** Client URLs, `http://host:port` or `https://host:port`; writes rotate across them. */
  endpoints: string[];
  /** For https endpoints: the CA to trust, the client certificate (e.g. the cluster's `<cluster>-client-tls`), and a server name when the host is not in the certificate. */
  tls?: EtcdTls;
  /** Writes started per second. Default 20. */
  ratePerSecond?: number;
  /** Key prefix; every key written lives under it. Default `/quorum-checker/<random>/`. */
  prefix?: string;
  /** Per-request timeout in milliseconds. Default 2000. */
  timeoutMs?: number;
  /** Writes allowed in flight at once; the pace slows rather than piling up requests. Default 4. */
  maxInFlight?: number;
  /**
   * Times a failed write is sent again (to the next endpoint, after 250 ms), as an application's retrying
   * client would; only a write that failed every time counts as unacknowledged. Default 0. The same key and
   * value are sent again, so a write applied twice is still one write.
   */
  retries?: number;
}

export interface VerifyOptions {
  /** How long to keep retrying the read-back (the cluster may still be healing). Default 30000. */
  timeoutMs?: number;
  /** Keys per range request. Default 1000. */
  pageSize?: number;
  /**
   * Check only the writes acknowledged at or below this revision (a backup's: every write up to it must be
   * in a cluster restored from it). Later acknowledged writes may be present, and must then be intact.
   */
  upToRevision?: string | number;
  /** Read back through these endpoints instead (a cluster restored under a new address). */
  endpoints?: string[];
  /** With `endpoints`: the TLS to read them with (a cluster that turned TLS on since the writes). */
  tls?: EtcdTls;
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
  /** Writes that needed at least one retry (with `retries` set). */
  retried: number;
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
  /** The revision etcd committed it at, once acknowledged. */
  revision?: bigint;
}

const SEQ_DIGITS = 10;
const RATE_WINDOW_MS = 5000;
const RETRY_DELAY_MS = 250;

export class DataChecker {
  readonly prefix: string;
  /** One client per endpoint; writes and read-backs rotate across them. */
  readonly #clients: EtcdClient[];
  readonly #intervalMs: number;
  readonly #timeoutMs: number;
  readonly #tls: EtcdTls | undefined;
  readonly #maxInFlight: number;
  readonly #runId = randomBytes(6).toString('hex');

  // Every write ever attempted, by key; keys are never rewritten, so a key maps to exactly one value.
  readonly #writes = new Map<string, WriteRecord>();
  readonly #inFlight = new Set<Promise<void>>();
  #ackTimes: number[] = [];
  #seq = 0;
  #startedAt = 0;
  #next = 0;
  #acknowledged = 0;
  #unacknowledged = 0;
  #retried = 0;
  readonly #retries: number;
  #lastError: string | undefined;
  #lastErrorAt: string | undefined;
  #running = false;
  #loop: Promise<void> | undefined;
  #wake: (() => void) | undefined;

  constructor(options: DataCheckerOptions) {
    if (options.endpoints.length === 0) throw new Error('DataChecker: at least one endpoint is required');
    const origins = options.endpoints.map((e) => {
      const url = new URL(e);
      if (url.protocol !== 'http:' && url.protocol !== 'https:') throw new Error(`DataChecker: endpoint ${e} must be http(s)://host:port`);
      return url.origin;
    });
    const rate = options.ratePerSecond ?? 20;
    if (!(rate > 0)) throw new Error('DataChecker: ratePerSecond must be positive');
    this.#intervalMs = 1000 / rate;
    this.#timeoutMs = options.timeoutMs ?? 2000;
    this.#maxInFlight = Math.max(1, options.maxInFlight ?? 4);
    this.#retries = Math.max(0, options.retries ?? 0);
    this.prefix = options.prefix ?? `/quorum-checker/${this.#runId}/`;
    if (this.prefix === '') throw new Error('DataChecker: prefix must not be empty');
    this.#tls = options.tls;
    this.#clients = origins.map((endpoint) => this.#client(endpoint));
  }

  /** A client for one endpoint: the TLS options go to https ones only (EtcdClient refuses them for http). */
  #client(endpoint: string, tls: EtcdTls | undefined = this.#tls): EtcdClient {
    return new EtcdClient({ endpoint, timeoutMs: this.#timeoutMs, ...(tls && endpoint.startsWith('https:') ? { tls } : {}) });
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
    for (const client of this.#clients) client.close();
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
      retried: this.#retried,
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
    const limit = options.upToRevision === undefined ? undefined : BigInt(options.upToRevision);
    for (const [key, w] of this.#writes) if (w.acknowledged && (limit === undefined || (w.revision ?? 0n) <= limit)) expected.set(key, w.value);
    const unacknowledged = this.#unacknowledged;
    const own = options.endpoints?.map((endpoint) => this.#client(new URL(endpoint).origin, options.tls ?? this.#tls));
    try {
      return await this.#verifyThrough(own ?? this.#clients, expected, unacknowledged, timeoutMs, pageSize);
    } finally {
      for (const client of own ?? []) client.close();
    }
  }

  async #verifyThrough(clients: EtcdClient[], expected: Map<string, string>, unacknowledged: number, timeoutMs: number, pageSize: number): Promise<DataCheckerReport> {

    const deadline = performance.now() + timeoutMs;
    let attempts = 0;
    let lastError: string | undefined;
    let next = 0;
    for (;;) {
      const remaining = deadline - performance.now();
      if (remaining <= 0) break;
      attempts++;
      const client = clients[next++ % clients.length]!;
      try {
        const present = await this.#readAll(client, pageSize, Math.min(this.#timeoutMs, remaining));
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
    for (let attempt = 0; ; attempt++) {
      const client = this.#clients[(seq + attempt) % this.#clients.length]!;
      try {
        // put() resolves only on an answer carrying the write's revision: the proof etcd committed it.
        const { revision } = await client.put(key, value);
        record.acknowledged = true;
        record.revision = BigInt(revision);
        this.#acknowledged++;
        if (attempt > 0) this.#retried++;
        this.#ackTimes.push(performance.now());
        this.#pruneAckTimes(performance.now());
        return;
      } catch (err) {
        this.#lastError = `put ${key} via ${client.endpoint}${attempt > 0 ? ` (attempt ${attempt + 1})` : ''}: ${describe(err)}`;
        this.#lastErrorAt = new Date().toISOString();
        // A write under way when stop() is called still gets its retries (stop waits for it): counting it as
        // failed because of when the test stopped would blame the cluster for the checker's own timing.
        if (attempt >= this.#retries) {
          // Ambiguous: it may or may not have been applied, so it is never counted as acknowledged.
          this.#unacknowledged++;
          return;
        }
        await new Promise((r) => setTimeout(r, RETRY_DELAY_MS));
      }
    }
  }

  #pruneAckTimes(now: number): void {
    const cutoff = now - RATE_WINDOW_MS;
    let drop = 0;
    while (drop < this.#ackTimes.length && this.#ackTimes[drop]! < cutoff) drop++;
    if (drop > 0) this.#ackTimes = this.#ackTimes.slice(drop);
  }

  /** One consistent scan of the prefix: every page is read at the first page's revision. */
  async #readAll(client: EtcdClient, pageSize: number, timeoutMs: number): Promise<Map<string, string>> {
    const present = new Map<string, string>();
    const end = prefixEnd(this.prefix);
    let start = this.prefix;
    let revision: string | undefined;
    for (;;) {
      const page = await client.range(start, { end, limit: pageSize, revision, timeoutMs });
      revision ??= page.revision;
      for (const kv of page.kvs) present.set(kv.key, kv.value);
      const last = page.kvs.at(-1);
      if (!page.more || last === undefined) return present;
      // The next page starts right after the last key: the smallest key greater than it.
      start = `${last.key}\0`;
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
}

function describe(err: unknown): string {
  if (err instanceof Error) {
    // A system error's code (ECONNREFUSED…), when its message leaves it out; EtcdError's numeric gRPC code is already in its message.
    const code = (err as NodeJS.ErrnoException).code;
    return typeof code === 'string' && !err.message.includes(code) ? `${err.message} (${code})` : err.message;
  }
  return String(err);
}
