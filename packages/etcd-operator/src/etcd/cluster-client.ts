// Several members at once: one EtcdClient per endpoint, and a leader view that only counts answers,
// so unreachable members never make up a majority.
import { quorum } from './quorum.ts';
import { EtcdClient, type CallOptions, type EtcdStatus, type EtcdTls } from './client.ts';

export interface EtcdClusterClientOptions {
  endpoints: string[];
  timeoutMs?: number;
  tls?: EtcdTls;
}

export interface EndpointStatus {
  endpoint: string;
  status: EtcdStatus;
}

export interface EndpointFailure {
  endpoint: string;
  error: Error;
}

export interface LeaderStatus {
  /** Statuses of the endpoints that answered, in endpoint order. */
  statuses: EndpointStatus[];
  /** Endpoints that did not answer (or answered with an error). */
  failures: EndpointFailure[];
  /** Set only when more than half of ALL endpoints (not just those that answered) name the same leader. */
  leaderId: string | undefined;
  /** The endpoint whose own status says it is that leader, if it answered. */
  leaderEndpoint: string | undefined;
}

export class EtcdClusterClient {
  readonly #clients: Map<string, EtcdClient>;

  constructor(options: EtcdClusterClientOptions) {
    if (options.endpoints.length === 0) throw new TypeError('EtcdClusterClient needs at least one endpoint');
    this.#clients = new Map();
    for (const endpoint of options.endpoints) {
      const client = new EtcdClient({ endpoint, timeoutMs: options.timeoutMs, tls: options.tls });
      if (this.#clients.has(client.endpoint)) throw new TypeError(`duplicate endpoint: ${endpoint}`);
      this.#clients.set(client.endpoint, client);
    }
  }

  /** Normalised endpoints (URL origins), in the order given. */
  get endpoints(): string[] {
    return [...this.#clients.keys()];
  }

  /** The client for one endpoint (as given or normalised), or undefined. */
  client(endpoint: string): EtcdClient | undefined {
    return this.#clients.get(endpoint) ?? this.#clients.get(safeOrigin(endpoint));
  }

  clients(): EtcdClient[] {
    return [...this.#clients.values()];
  }

  forEach(fn: (client: EtcdClient, endpoint: string) => void): void {
    for (const [endpoint, client] of this.#clients) fn(client, endpoint);
  }

  [Symbol.iterator](): IterableIterator<EtcdClient> {
    return this.#clients.values();
  }

  /** Every endpoint's status in parallel, each under the client timeout. */
  async leaderStatus(opts: CallOptions = {}): Promise<LeaderStatus> {
    const entries = [...this.#clients];
    const settled = await Promise.allSettled(entries.map(([, client]) => client.status(opts)));
    opts.signal?.throwIfAborted();
    const statuses: EndpointStatus[] = [];
    const failures: EndpointFailure[] = [];
    settled.forEach((result, i) => {
      const endpoint = entries[i]![0];
      if (result.status === 'fulfilled') statuses.push({ endpoint, status: result.value });
      else failures.push({ endpoint, error: result.reason instanceof Error ? result.reason : new Error(String(result.reason)) });
    });
    const votes = new Map<string, number>();
    for (const { status } of statuses) {
      if (status.leaderId !== '0') votes.set(status.leaderId, (votes.get(status.leaderId) ?? 0) + 1);
    }
    let leaderId: string | undefined;
    for (const [id, n] of votes) {
      if (n >= quorum(entries.length)) leaderId = id;
    }
    const leaderEndpoint = leaderId === undefined ? undefined : statuses.find((s) => s.status.memberId === leaderId)?.endpoint;
    return { statuses, failures, leaderId, leaderEndpoint };
  }

  close(): void {
    for (const client of this.#clients.values()) client.close();
  }
}

function safeOrigin(endpoint: string): string {
  try {
    return new URL(endpoint).origin;
  } catch {
    return endpoint;
  }
}
