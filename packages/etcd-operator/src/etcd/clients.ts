// The operator's etcd clients: one per member endpoint, kept across reconciles (its connections are pooled). Typed
// by the URL and TLS it dials alone, so the cluster and backup reconcilers share it without knowing each other.
import { createHash } from 'node:crypto';
import { EtcdClient, type EtcdTls } from './client.ts';

/** Where to dial one member: its client URL, and for https the credentials and the TLS server name. */
export interface EtcdEndpoint {
  url: string;
  tls?: EtcdTls;
}

/** How long a client no reconcile asked for is kept: every member of a running cluster is dialled at each resync (30 s). */
export const IDLE_CLIENT_MS = 10 * 60_000;

/**
 * One etcd client per member endpoint, kept across reconciles (its connections are pooled). An https endpoint's
 * client is keyed by its credentials and server name too: when a certificate is renewed (or a pod IP is reused
 * by another member) a fresh client replaces the old one, whose connections are closed. Endpoints are pod IPs,
 * so each replaced member, each deleted cluster, leaves an endpoint no one dials again: a client not asked for
 * in IDLE_CLIENT_MS, with no call under way (a defragmentation may take many minutes), is closed and dropped
 * (issue 23, finding 9: per-pod state of deleted pods was never pruned).
 */
export class EtcdClients {
  readonly #clients = new Map<string, { key: string; client: EtcdClient; usedAt: number }>();
  readonly #idleMs: number;
  readonly #now: () => number;
  #sweptAt: number;

  constructor(options: { idleMs?: number; now?: () => number } = {}) {
    this.#idleMs = options.idleMs ?? IDLE_CLIENT_MS;
    this.#now = options.now ?? Date.now;
    this.#sweptAt = this.#now();
  }

  get(endpoint: string | EtcdEndpoint): EtcdClient {
    const { url, tls } = typeof endpoint === 'string' ? { url: endpoint, tls: undefined } : endpoint;
    const key = tls ? createHash('sha256').update(JSON.stringify([tls.ca, tls.cert, tls.key, tls.servername])).digest('hex') : '';
    const now = this.#now();
    this.#sweep(now);
    const held = this.#clients.get(url);
    if (held?.key === key) {
      held.usedAt = now;
      return held.client;
    }
    held?.client.close();
    const client = new EtcdClient({ endpoint: url, timeoutMs: 3000, ...(tls ? { tls } : {}) });
    this.#clients.set(url, { key, client, usedAt: now });
    return client;
  }

  /** How many endpoints have a client now. */
  get size(): number {
    return this.#clients.size;
  }

  /** Closes the clients idle for longer than the bound; at most once a minute, as get() is called often. */
  #sweep(now: number): void {
    if (now - this.#sweptAt < 60_000) return;
    this.#sweptAt = now;
    for (const [url, held] of this.#clients) {
      if (now - held.usedAt > this.#idleMs && held.client.inFlight === 0) {
        held.client.close();
        this.#clients.delete(url);
      }
    }
  }
}
