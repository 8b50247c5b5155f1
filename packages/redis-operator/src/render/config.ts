// redis.conf and sentinel.conf, rendered from the spec. Nothing here is per instance or assumes one primary per
// Redis: the files are shared by every instance, and what differs per pod (its announced host, whom it
// replicates, a Sentinel's identity) is added by the pod's start-up script (pods.ts) from its own name. A sharded
// kind renders its own replication part and reuses the rest.
import type { DefaultedSpec } from '../api/defaults.ts';
import { REDIS_PORT, SENTINEL_PORT } from '../names.ts';

/** Where the pods keep their files: the claim, and the config written at start from the ConfigMap. */
export const DATA_DIR = '/data';
export const CONFIG_DIR = '/etc/redis'; // in the container
export const TEMPLATE_DIR = '/config';
export const SENTINEL_DIR = '/sentinel';
/** Where the served TLS Secret is mounted whole (never by subPath, which the kubelet does not update). */
export const TLS_DIR = '/tls';

/** Redis's documented default snapshot schedule, written out, since `save` without arguments means none. */
const RDB_SCHEDULE = '3600 1 300 100 60 10000';

const SUFFIX_BYTES: Record<string, number> = { '': 1, k: 1e3, M: 1e6, G: 1e9, T: 1e12, P: 1e15, E: 1e18, Ki: 2 ** 10, Mi: 2 ** 20, Gi: 2 ** 30, Ti: 2 ** 40, Pi: 2 ** 50, Ei: 2 ** 60 };

/** A byte quantity (`256Mi`, `1G`, `1048576`) in bytes, as redis.conf takes it. */
export function quantityBytes(quantity: string): number {
  const match = /^([0-9]+)([KMGTPE]i|[kMGTPE])?$/.exec(quantity);
  if (!match) throw new Error(`not a byte quantity: ${quantity}`);
  return Number(match[1]) * SUFFIX_BYTES[match[2] ?? '']!;
}

/** A value as redis.conf reads it: bare when it is one plain word, else double-quoted with escapes. */
export function confValue(value: string): string {
  if (value !== '' && /^[A-Za-z0-9._:/@+-]+$/.test(value)) return value;
  return `"${value.replace(/[\\"]/g, (c) => `\\${c}`)}"`;
}

/**
 * With TLS, the port speaks TLS only (`port 0`: no plaintext listener). Clients are authenticated by the password,
 * not by certificates (`tls-auth-clients no`): they verify the server with the CA bundle and need no certificate of
 * their own. `tls-replication yes`: a replica dials its primary over TLS, and a Sentinel every instance and Sentinel.
 * Redis checks the chain, not the host name, when it dials.
 */
export function tlsLines(spec: Pick<DefaultedSpec, 'tls'>, port: number): string[] {
  if (spec.tls.disabled === true) return [`port ${port}`];
  return [
    'port 0',
    `tls-port ${port}`,
    `tls-cert-file ${TLS_DIR}/tls.crt`,
    `tls-key-file ${TLS_DIR}/tls.key`,
    `tls-ca-cert-file ${TLS_DIR}/ca.crt`,
    'tls-auth-clients no',
    'tls-replication yes',
  ];
}

/** The redis.conf every instance starts from (the password comes from the Secret, as arguments). */
export function redisConf(spec: DefaultedSpec): string {
  const lines = [
    ...tlsLines(spec, REDIS_PORT),
    'bind * -::*',
    // Auth is always on (requirepass): protected mode would only refuse connections from other pods.
    'protected-mode no',
    `dir ${DATA_DIR}`,
    'dbfilename dump.rdb',
    `save ${spec.persistence.rdb ? RDB_SCHEDULE : '""'}`,
    `appendonly ${spec.persistence.aof ? 'yes' : 'no'}`,
    `maxmemory ${spec.maxmemory === undefined ? 0 : quantityBytes(spec.maxmemory)}`,
    `maxmemory-policy ${spec.maxmemoryPolicy}`,
    // An isolated old primary stops taking writes once no replica has acknowledged it for this long: the bound
    // on what a failover can lose (docs/redis.md, "Failover and its write-loss window").
    `min-replicas-to-write ${spec.minReplicasToWrite}`,
    `min-replicas-max-lag ${spec.minReplicasMaxLagSeconds}`,
    'replica-read-only yes',
    'replica-serve-stale-data yes',
    ...(spec.config ?? []).map((d) => `${d.name} ${confValue(d.value)}`),
  ];
  return `${lines.join('\n')}\n`;
}

/** A majority of the Sentinels: how many must agree that the primary is down. */
export function sentinelQuorum(sentinels: number): number {
  return Math.floor(sentinels / 2) + 1;
}

/**
 * The sentinel.conf every Sentinel starts from, monitoring `primaryHost` under the Redis's name. Hostnames,
 * not IPs, are resolved and announced, so that what Sentinels remember survives pods being recreated.
 */
export function sentinelConf(redis: string, spec: DefaultedSpec, primaryHost: string): string {
  const lines = [
    ...tlsLines(spec, SENTINEL_PORT),
    `dir ${SENTINEL_DIR}`,
    'sentinel resolve-hostnames yes',
    'sentinel announce-hostnames yes',
    `sentinel monitor ${redis} ${primaryHost} ${REDIS_PORT} ${sentinelQuorum(spec.sentinel.replicas)}`,
    `sentinel down-after-milliseconds ${redis} ${spec.sentinel.downAfterMilliseconds}`,
    `sentinel failover-timeout ${redis} ${spec.sentinel.failoverTimeoutMilliseconds}`,
    `sentinel parallel-syncs ${redis} 1`,
  ];
  return `${lines.join('\n')}\n`;
}
