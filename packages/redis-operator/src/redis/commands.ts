// The operator's writes over the Redis protocol for planned changes: a failover asked of the Sentinels (with
// the primary's writes paused until its replicas have everything, so that no acknowledged write is left
// behind), the same without Sentinels (Redis's own FAILOVER TO), and SENTINEL RESET. Each call is bounded.
import type { Redis } from 'ioredis';
import { TLS_DIR } from '../render/config.ts';
import { parseInfo, withConnection, type Endpoint } from './readings.ts';

/** How long the primary's writes stay paused at most: past it Redis resumes them by itself (a crash cannot leave them paused). */
export const WRITE_PAUSE_MS = 10_000;
/** How long the replicas get to catch up with the paused primary. */
const CATCH_UP_MS = 5_000;

const pause = (ms: number): Promise<void> => new Promise((r) => setTimeout(r, ms));

/** The primary's offset and its connected replicas' offsets (INFO replication `slaveN:…,offset=…`). */
export function replicaOffsets(info: Map<string, string>): { primary: number; replicas: number[] } {
  const replicas = [...info].filter(([k]) => /^slave\d+$/.test(k)).map(([, v]) => Number(/offset=(\d+)/.exec(v)?.[1] ?? -1));
  return { primary: Number(info.get('master_repl_offset') ?? 0), replicas };
}

async function caughtUp(redis: Redis): Promise<boolean> {
  const deadline = Date.now() + CATCH_UP_MS;
  for (;;) {
    const { primary, replicas } = replicaOffsets(parseInfo(await redis.info('replication')));
    if (replicas.length > 0 && replicas.every((o) => o >= primary)) return true;
    if (Date.now() > deadline) return false;
    await pause(100);
  }
}

/**
 * A failover the Sentinels carry out, away from the primary at `primary`: its writes paused (CLIENT PAUSE
 * WRITE, which expires by itself), every replica caught up with it, then SENTINEL FAILOVER on the first
 * Sentinel that accepts it. A write acknowledged by WAIT before the pause is on every replica; writes after it
 * wait, and then meet a replica (READONLY) or a primary without replicas (NOREPLICAS): never acknowledged.
 */
export async function sentinelFailover(primary: Endpoint, sentinels: readonly Endpoint[], monitored: string): Promise<void> {
  await withConnection(primary, async (redis) => {
    await redis.call('CLIENT', 'PAUSE', String(WRITE_PAUSE_MS), 'WRITE');
    try {
      if (!(await caughtUp(redis))) throw new Error(`the replicas did not catch up with the primary within ${CATCH_UP_MS / 1000} s`);
      await askSentinels(sentinels, monitored);
    } catch (err) {
      await redis.call('CLIENT', 'UNPAUSE').catch(() => undefined);
      throw err;
    }
  });
}

async function askSentinels(sentinels: readonly Endpoint[], monitored: string): Promise<void> {
  const refusals: string[] = [];
  for (const s of sentinels) {
    try {
      await withConnection(s, (redis) => redis.call('SENTINEL', 'FAILOVER', monitored));
      return;
    } catch (err) {
      const message = (err as Error).message;
      if (/INPROG/.test(message)) return; // one is under way already: what was asked for
      refusals.push(message);
    }
  }
  throw new Error(`no Sentinel accepted SENTINEL FAILOVER: ${refusals.join('; ') || 'no Sentinel has an address'}`);
}

/** Without Sentinels: Redis's FAILOVER TO, which pauses writes, waits for `to` to catch up and swaps the roles itself. */
export async function failoverTo(primary: Endpoint, to: { host: string; port: number }): Promise<void> {
  await withConnection(primary, async (redis) => {
    try {
      await redis.call('FAILOVER', 'TO', to.host, String(to.port), 'TIMEOUT', String(CATCH_UP_MS));
    } catch (err) {
      if (!/already in progress/i.test((err as Error).message)) throw err;
    }
  });
}

/**
 * Has an instance load its certificate, key and CA files again. CONFIG SET applies (and reloads TLS) only when a
 * value changes, so the paths alternate between two spellings of the same files (`/tls/x`, `/tls/./x`).
 */
export async function reloadTLS(instance: Endpoint): Promise<void> {
  await withConnection(instance, async (redis) => {
    const [, current] = (await redis.config('GET', 'tls-cert-file')) as [string, string];
    const dir = current.includes('/./') ? TLS_DIR : `${TLS_DIR}/.`;
    await redis.call('CONFIG', 'SET', 'tls-cert-file', `${dir}/tls.crt`, 'tls-key-file', `${dir}/tls.key`, 'tls-ca-cert-file', `${dir}/ca.crt`);
  });
}

/** SENTINEL RESET: the Sentinel forgets the replicas and Sentinels it knew and learns the live ones again. */
export async function resetSentinel(sentinel: Endpoint, monitored: string): Promise<void> {
  await withConnection(sentinel, (redis) => redis.call('SENTINEL', 'RESET', monitored));
}
