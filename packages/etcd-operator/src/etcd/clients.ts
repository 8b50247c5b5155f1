// The operator's etcd clients: one per member endpoint, kept across reconciles (its connections are pooled). Typed
// by the URL and TLS it dials alone, so the cluster and backup reconcilers share it without knowing each other.
import { createHash } from 'node:crypto';
import { EtcdClient, type EtcdTls } from './client.ts';

/** Where to dial one member: its client URL, and for https the credentials and the TLS server name. */
export interface EtcdEndpoint {
  url: string;
  tls?: EtcdTls;
}

/**
 * One etcd client per member endpoint, kept across reconciles (its connections are pooled). An https endpoint's
 * client is keyed by its credentials and server name too: when a certificate is renewed (or a pod IP is reused
 * by another member) a fresh client replaces the old one, whose connections are closed.
 */
export class EtcdClients {
  readonly #clients = new Map<string, { key: string; client: EtcdClient }>();
  get(endpoint: string | EtcdEndpoint): EtcdClient {
    const { url, tls } = typeof endpoint === 'string' ? { url: endpoint, tls: undefined } : endpoint;
    const key = tls ? createHash('sha256').update(JSON.stringify([tls.ca, tls.cert, tls.key, tls.servername])).digest('hex') : '';
    const held = this.#clients.get(url);
    if (held?.key === key) return held.client;
    held?.client.close();
    const client = new EtcdClient({ endpoint: url, timeoutMs: 3000, ...(tls ? { tls } : {}) });
    this.#clients.set(url, { key, client });
    return client;
  }
}
