// Data-safety checker for Redis: concurrent writers set unique keys through one endpoint (the `<name>` Service),
// and a write counts as acknowledged only once `WAIT 1` confirms a replica has it, which is what a failover
// keeps. verify() later proves that every acknowledged key is still there with its value.
import { randomBytes } from 'node:crypto';
import { Redis } from 'ioredis';

export interface RedisCheckerOptions {
  host: string;
  port: number;
  password: string;
  /** For a Redis with TLS: the CA bundle (ca.crt of its served Secret) and the name to verify, e.g. `<name>.<ns>.svc`. */
  tls?: { ca: string; servername: string };
  /** Writers running side by side. Default 4. */
  writers?: number;
  /** How long WAIT waits for a replica, in milliseconds. Default 1000. */
  waitMs?: number;
  /** Key prefix. Default `quorum-checker:<random>:`. */
  prefix?: string;
}

export interface RedisCheckerReport {
  acknowledged: number;
  /** Writes that failed, timed out or that no replica confirmed in time: they may or may not survive. */
  unacknowledged: number;
  /** Acknowledged keys missing or holding another value, sorted. */
  lost: string[];
}

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

function client(o: RedisCheckerOptions): Redis {
  // Fails fast instead of queueing while it reconnects: a write either reaches a primary now or counts as unacknowledged.
  const redis = new Redis({ host: o.host, port: o.port, password: o.password, ...(o.tls ? { tls: o.tls } : {}), lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 2000, commandTimeout: (o.waitMs ?? 1000) + 2000, retryStrategy: () => 200 });
  redis.on('error', () => undefined);
  return redis;
}

export class RedisDataChecker {
  readonly #options: RedisCheckerOptions;
  readonly #prefix: string;
  readonly #acked = new Map<string, string>();
  #unacked = 0;
  #sequence = 0;
  #running: Promise<void>[] = [];
  #stop = false;
  readonly #clients: Redis[] = [];

  constructor(options: RedisCheckerOptions) {
    this.#options = options;
    this.#prefix = options.prefix ?? `quorum-checker:${randomBytes(4).toString('hex')}:`;
  }

  get acknowledged(): number {
    return this.#acked.size;
  }

  start(): void {
    this.#stop = false;
    for (let i = 0; i < (this.#options.writers ?? 4); i++) {
      const redis = client(this.#options);
      this.#clients.push(redis);
      this.#running.push(this.#write(redis));
    }
  }

  async #write(redis: Redis): Promise<void> {
    await redis.connect().catch(() => undefined); // a failed first connection is retried by the client
    while (!this.#stop) {
      const key = `${this.#prefix}${(this.#sequence++).toString().padStart(8, '0')}`;
      const value = randomBytes(8).toString('hex');
      try {
        await redis.set(key, value);
        const replicas = (await redis.call('WAIT', '1', String(this.#options.waitMs ?? 1000))) as number;
        if (replicas >= 1) this.#acked.set(key, value);
        else this.#unacked++;
      } catch (err) {
        this.#unacked++;
        // A command that timed out may be waiting on a connection to a partitioned server, which TCP keeps open
        // for minutes (no reset comes back): connect again, through the Service, as a client with a bound would.
        if (err instanceof Error && /timed out/i.test(err.message)) redis.disconnect(true);
        await pause(100);
      }
    }
  }

  async stop(): Promise<void> {
    this.#stop = true;
    await Promise.all(this.#running);
    this.#running = [];
    for (const c of this.#clients.splice(0)) c.disconnect();
  }

  /**
   * Reads every acknowledged key back (retrying until `timeoutMs` while the Redis may still be settling), from the
   * Redis written to or from `target` (another Redis, e.g. one restored from a backup of it).
   */
  async verify(timeoutMs = 30_000, target?: Pick<RedisCheckerOptions, 'host' | 'port' | 'password' | 'tls'>): Promise<RedisCheckerReport> {
    const deadline = Date.now() + timeoutMs;
    const keys = [...this.#acked.keys()].sort();
    for (;;) {
      const redis = client({ ...this.#options, ...target });
      try {
        // Without an offline queue a command sent before the connection is ready fails: connect first.
        await redis.connect();
        const lost: string[] = [];
        for (let i = 0; i < keys.length; i += 500) {
          const page = keys.slice(i, i + 500);
          const values = page.length === 0 ? [] : await redis.mget(...page);
          page.forEach((k, j) => {
            if (values[j] !== this.#acked.get(k)) lost.push(k);
          });
        }
        return { acknowledged: keys.length, unacknowledged: this.#unacked, lost };
      } catch (err) {
        if (Date.now() > deadline) throw err;
        await pause(500);
      } finally {
        redis.disconnect();
      }
    }
  }
}
