// Reading instances and Sentinels over the Redis protocol (ioredis), by pod IP: what an instance says it is
// (INFO replication, INFO server) and whom the Sentinels name as primary. Every call is bounded; a failure is
// returned as a reading that says why, never thrown, since silence is not evidence (the planner decides on facts).
import type { TLSSocket } from 'node:tls';
import type { Redis } from 'ioredis';
import type { InstanceReading, InstanceStats, SentinelReading } from '../plan/types.ts';

/** Each connection and command is bounded by this: a reconcile never waits long on one silent pod. */
export const READ_TIMEOUT_MS = 1500;

export interface Endpoint {
  host: string;
  port: number;
  password: string;
  /** Set when the Redis has TLS: the CA bundle to verify the server by, and its pod's stable name (no SAN holds an IP). */
  tls?: { ca: string; servername: string };
}

/**
 * A connection that fails instead of retrying or queueing: the next reconcile tries again. ioredis (39 modules,
 * about 5 MiB) is loaded with the first connection, not at start: an operator with no Redis to manage never
 * loads it (docs/memory.md).
 */
export async function connect(e: Endpoint): Promise<Redis> {
  const { Redis: Client } = await import('ioredis');
  return new Client({
    host: e.host,
    port: e.port,
    password: e.password,
    ...(e.tls ? { tls: { ca: e.tls.ca, servername: e.tls.servername } } : {}),
    connectTimeout: READ_TIMEOUT_MS,
    commandTimeout: READ_TIMEOUT_MS,
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    enableOfflineQueue: false,
    retryStrategy: () => null,
  });
}

export async function withConnection<T>(e: Endpoint, use: (redis: Redis) => Promise<T>): Promise<T> {
  const redis = await connect(e);
  redis.on('error', () => undefined); // reported by the command that fails
  try {
    await redis.connect();
    return await use(redis);
  } finally {
    redis.disconnect();
  }
}

/** `INFO` text as a map of its `key:value` lines. */
export function parseInfo(text: string): Map<string, string> {
  const fields = new Map<string, string>();
  for (const line of text.split(/\r?\n/)) {
    const sep = line.indexOf(':');
    if (sep > 0 && !line.startsWith('#')) fields.set(line.slice(0, sep), line.slice(sep + 1).trim());
  }
  return fields;
}

/** The load figures of INFO memory, stats and replication; undefined when a field is missing (an older server). */
export function instanceStats(info: Map<string, string>): InstanceStats | undefined {
  const figures = ['used_memory', 'maxmemory', 'evicted_keys', 'connected_slaves'].map((k) => Number(info.get(k) ?? Number.NaN));
  if (!figures.every(Number.isFinite)) return undefined;
  const [usedMemoryBytes = 0, maxMemoryBytes = 0, evictedKeys = 0, connectedReplicas = 0] = figures;
  return { usedMemoryBytes, maxMemoryBytes, evictedKeys, connectedReplicas };
}

/** An instance's reading from its INFO replication and INFO server sections (and memory and stats, for metrics). */
export function instanceReading(info: Map<string, string>): InstanceReading {
  const role = info.get('role');
  if (role !== 'master' && role !== 'slave') return { ok: false, error: `unexpected role ${role ?? '(none)'}` };
  const stats = instanceStats(info);
  const replicaOffset = Number(info.get('slave_repl_offset') ?? Number.NaN);
  const offset = role === 'slave' && Number.isFinite(replicaOffset) ? replicaOffset : Number(info.get('master_repl_offset') ?? 0);
  return {
    ok: true,
    role,
    ...(role === 'slave' ? { primaryHost: info.get('master_host') ?? '', linkUp: info.get('master_link_status') === 'up' } : {}),
    offset,
    // Valkey answers redis_version with the Redis version it is compatible with (7.2.4), and its own apart.
    version: info.get('valkey_version') ?? info.get('redis_version') ?? '',
    ...(stats !== undefined ? { stats } : {}),
  };
}

export async function readInstance(e: Endpoint): Promise<InstanceReading> {
  try {
    return await withConnection(e, async (redis) => {
      const sections = await Promise.all(['replication', 'server', 'memory', 'stats'].map((section) => redis.info(section)));
      const reading = instanceReading(parseInfo(sections.join('\n')));
      const certificate = e.tls ? (redis.stream as TLSSocket).getPeerCertificate().fingerprint256 : undefined;
      return reading.ok && certificate ? { ...reading, certificate } : reading;
    });
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** The entries of a `SENTINEL REPLICAS` / `SENTINEL SENTINELS` answer, each a map of its flat field list. */
function entries(answer: unknown): Map<string, string>[] {
  if (!Array.isArray(answer)) return [];
  return answer.flatMap((entry) => {
    if (!Array.isArray(entry)) return [];
    const fields = new Map<string, string>();
    for (let i = 0; i + 1 < entry.length; i += 2) if (typeof entry[i] === 'string' && typeof entry[i + 1] === 'string') fields.set(entry[i] as string, entry[i + 1] as string);
    return [fields];
  });
}

/** The pod names in such an answer (`ip` is the announced hostname, `<pod>.<name>-headless.<ns>.svc`). */
export function podsOfEntries(answer: unknown): string[] {
  return entries(answer).flatMap((e) => {
    const ip = e.get('ip');
    return ip === undefined ? [] : [ip.split('.')[0] ?? ip];
  });
}

/**
 * The replicas a Sentinel would promote now: not down or disconnected in its eyes, and linked to the primary
 * as of its last INFO (Sentinel's own choice refuses the others: NOGOODSLAVE).
 */
export function goodReplicasOf(answer: unknown): string[] {
  const good = entries(answer).filter((e) => e.get('flags') === 'slave' && e.get('master-link-status') === 'ok');
  return podsOfEntries(good.map((e) => [...e].flat()));
}

export async function readSentinel(e: Endpoint, monitored: string): Promise<SentinelReading> {
  try {
    return await withConnection(e, async (redis) => {
      const addr = (await redis.call('SENTINEL', 'get-master-addr-by-name', monitored)) as [string, string] | null;
      if (addr === null) return { ok: true };
      const [replicas, sentinels] = await Promise.all([redis.call('SENTINEL', 'REPLICAS', monitored), redis.call('SENTINEL', 'SENTINELS', monitored)]);
      return { ok: true, primaryHost: addr[0], knownReplicas: podsOfEntries(replicas), goodReplicas: goodReplicasOf(replicas), knownSentinels: podsOfEntries(sentinels) };
    });
  } catch (err) {
    return { ok: false, error: (err as Error).message };
  }
}

/** `REPLICAOF NO ONE` (primaryHost undefined) or `REPLICAOF host port`: the operator's own failover, without Sentinels. */
export async function replicaOf(e: Endpoint, primary?: { host: string; port: number }): Promise<void> {
  await withConnection(e, async (redis) => {
    await (primary === undefined ? redis.call('REPLICAOF', 'NO', 'ONE') : redis.call('REPLICAOF', primary.host, String(primary.port)));
  });
}
