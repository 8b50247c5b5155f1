// "Available", decided the same way for every peer from what Redis, Sentinel and Kubernetes say rather than
// from any operator's status: exactly 3 Redis pods and 3 Sentinel pods (none terminating, none of the deleted
// ones left), all Ready; every Sentinel naming the same primary, a live Redis pod (by IP, or by hostname whose
// first label is the pod's name: Quorum's Sentinels announce hostnames); that pod a master with both replicas
// online, the two others replicas with their link up; a SET on it answered OK; and, when the scenario wrote a
// key before, that key read back from it.
import { Pods, type Client } from '@quorum/runtime';
import { Redis } from 'ioredis';
// A pod as both peers benches see it (name, uid, Ready, terminating, IP).
import { podView, type PodView } from '../../../etcd-operator/bench/peers/available.ts';

export type { PodView };

export const REDIS_PORT = 6379;
export const SENTINEL_PORT = 26379;

/** What INFO replication says, reduced to what the verdict needs. */
export interface ReplicationView {
  role: string;
  /** master_link_status:up (replicas). */
  linkUp: boolean;
  /** Replicas the master lists as state=online. */
  onlineReplicas: number;
}

type Failed = { error: string };

export interface Observation {
  redis: PodView[];
  sentinels: PodView[];
  /** Per Redis pod name. */
  replication: Record<string, ReplicationView | Failed>;
  /** Per Sentinel pod name: the primary's address it names (host, without the port). */
  named: Record<string, string | Failed>;
  /** The probe write on the named primary: the pod it went to, or why it failed. Absent: not tried. */
  write?: { pod: string } | Failed;
  /** The key the scenario wrote before (see Expectation.data), read back on the named primary. */
  read?: string | null | Failed;
}

export interface Expectation {
  instances: number;
  sentinels: number;
  /** Pods that were deleted and must be gone. */
  absentUids?: readonly string[];
  /** A value written before the scenario, that the primary must still have. */
  data?: { key: string; value: string };
}

export type Verdict = { available: true; primary: string } | { available: false; reason: string };

const failed = (x: unknown): x is Failed => typeof x === 'object' && x !== null && 'error' in x;

/** The live Redis pod an address names: by IP, or by the hostname's first label. */
export function podNamed(pods: readonly PodView[], address: string): PodView | undefined {
  return pods.find((p) => p.ip === address) ?? pods.find((p) => p.name === address.split('.')[0]);
}

/** The primary every Sentinel names, or why there is none (pure). */
export function agreedPrimary(obs: Observation): { pod: PodView } | Failed {
  const addresses = new Set<string>();
  for (const s of obs.sentinels) {
    const named = obs.named[s.name];
    if (named === undefined) return { error: `${s.name} not asked` };
    if (failed(named)) return { error: `${s.name}: ${named.error}` };
    addresses.add(named);
  }
  if (addresses.size !== 1) return { error: `the Sentinels name ${addresses.size === 0 ? 'no primary' : [...addresses].join(', ')}` };
  const [address] = [...addresses];
  const pod = podNamed(obs.redis.filter((p) => !p.terminating), address!);
  return pod ? { pod } : { error: `the Sentinels name ${address}, no live Redis pod` };
}

function podsReason(kind: string, pods: readonly PodView[], n: number): string | undefined {
  const live = pods.filter((p) => !p.terminating);
  if (live.length !== n) return `${live.length} ${kind} pods, not ${n}`;
  const unready = live.filter((p) => !p.ready).map((p) => p.name);
  return unready.length ? `${kind} pods not Ready: ${unready.join(', ')}` : undefined;
}

function replicationReason(obs: Observation, primary: PodView, replicas: number): string | undefined {
  for (const p of obs.redis.filter((x) => !x.terminating)) {
    const r = obs.replication[p.name];
    if (r === undefined || failed(r)) return `${p.name}: no INFO replication${r ? `: ${r.error}` : ''}`;
    if (p.name === primary.name) {
      if (r.role !== 'master') return `${p.name}, named primary, is ${r.role}`;
      if (r.onlineReplicas !== replicas) return `${p.name} has ${r.onlineReplicas} online replicas, not ${replicas}`;
    } else if (r.role !== 'slave' || !r.linkUp) {
      return `${p.name} is ${r.role}${r.role === 'slave' ? ' with its link down' : ''}`;
    }
  }
  return undefined;
}

/** The decision, on an observation (pure, for the unit tests). */
export function availability(obs: Observation, want: Expectation): Verdict {
  const no = (reason: string): Verdict => ({ available: false, reason });
  const all = [...obs.redis, ...obs.sentinels];
  if (want.absentUids?.some((uid) => all.some((p) => p.uid === uid))) return no('a deleted pod is still there');
  const pods = podsReason('Redis', obs.redis, want.instances) ?? podsReason('Sentinel', obs.sentinels, want.sentinels);
  if (pods) return no(pods);
  const primary = agreedPrimary(obs);
  if (failed(primary)) return no(primary.error);
  const replication = replicationReason(obs, primary.pod, want.instances - 1);
  if (replication) return no(replication);
  if (obs.write === undefined) return no('no write tried');
  if (failed(obs.write)) return no(`write refused: ${obs.write.error}`);
  if (obs.write.pod !== primary.pod.name) return no(`the write went to ${obs.write.pod}, not ${primary.pod.name}`);
  if (want.data) {
    if (obs.read === undefined || failed(obs.read)) return no(`${want.data.key} not read${obs.read ? `: ${obs.read.error}` : ''}`);
    if (obs.read !== want.data.value) return no(`${want.data.key} is ${JSON.stringify(obs.read)}, not ${JSON.stringify(want.data.value)}: data lost`);
  }
  return { available: true, primary: primary.pod.name };
}

/** INFO replication's text → the view (pure). */
export function parseReplication(info: string): ReplicationView {
  const field = (name: string): string | undefined => new RegExp(`^${name}:(.*)$`, 'm').exec(info)?.[1]?.trim();
  const onlineReplicas = [...info.matchAll(/^slave\d+:.*state=online/gm)].length;
  return { role: field('role') ?? 'unknown', linkUp: field('master_link_status') === 'up', onlineReplicas };
}

/** How to reach one peer's Redis: which pods are which, the Sentinels' name for it, and the password if any. */
export interface Target {
  namespace: string;
  redisSelector: string;
  sentinelSelector: string;
  masterName: string;
  password?: string;
}

const errorText = (err: unknown): string => (err instanceof Error ? err.message : String(err));

/** One command on a fresh connection to ip:port, bounded (no retries, no offline queue). */
export async function command<T>(ip: string, port: number, password: string | undefined, use: (c: Redis) => Promise<T>): Promise<T> {
  const c = new Redis({ host: ip, port, ...(password ? { password } : {}), lazyConnect: true, maxRetriesPerRequest: 0, enableOfflineQueue: false, connectTimeout: 1000, commandTimeout: 2000, retryStrategy: () => null });
  c.on('error', () => undefined);
  try {
    await c.connect();
    return await use(c);
  } finally {
    c.disconnect();
  }
}

async function attempt<T>(work: () => Promise<T>): Promise<T | Failed> {
  try {
    return await work();
  } catch (err) {
    return { error: errorText(err) };
  }
}

/** Reads the pods, asks every Redis and Sentinel by pod IP, and writes (and reads `data`) on the named primary. */
export async function observe(client: Client, t: Target, data?: { key: string }): Promise<Observation> {
  const list = async (selector: string): Promise<PodView[]> => ((await client.list(Pods, { namespace: t.namespace, labelSelector: selector })).items as Parameters<typeof podView>[0][]).map(podView);
  const [redis, sentinels] = await Promise.all([list(t.redisSelector), list(t.sentinelSelector)]);
  const obs: Observation = { redis, sentinels, replication: {}, named: {} };
  const reachable = (pods: PodView[]): PodView[] => pods.filter((p) => p.ip && !p.terminating);
  await Promise.all([
    ...reachable(redis).map(async (p) => {
      obs.replication[p.name] = await attempt(async () => parseReplication(await command(p.ip!, REDIS_PORT, t.password, (c) => c.info('replication'))));
    }),
    ...reachable(sentinels).map(async (s) => {
      obs.named[s.name] = await attempt(async () => {
        const reply = (await command(s.ip!, SENTINEL_PORT, t.password, (c) => c.call('SENTINEL', 'GET-MASTER-ADDR-BY-NAME', t.masterName))) as [string, string] | null;
        if (!reply) throw new Error(`no primary named ${t.masterName}`);
        return reply[0];
      });
    }),
  ]);
  const primary = agreedPrimary(obs);
  if (failed(primary) || !primary.pod.ip) return obs;
  const ip = primary.pod.ip;
  obs.write = await attempt(async () => {
    const ok: string = await command(ip, REDIS_PORT, t.password, (c) => c.set('peers:probe', String(Date.now())));
    if (ok !== 'OK') throw new Error(`SET answered ${ok}`);
    return { pod: primary.pod.name };
  });
  if (data) obs.read = await attempt(() => command(ip, REDIS_PORT, t.password, (c) => c.get(data.key)));
  return obs;
}
