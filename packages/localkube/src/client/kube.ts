// A small Kubernetes API client for localkube itself (readiness checks, the volume provisioner, tests):
// JSON over HTTPS with the credentials of a kubeconfig that localkube wrote. The full client, with
// informers and server-side apply, is @quorum/runtime's.
import { request as httpsRequest, Agent } from 'node:https';
import { readFile } from 'node:fs/promises';

export class KubeApiError extends Error {
  readonly status: number;
  readonly reason: string;
  readonly body: unknown;
  constructor(method: string, path: string, status: number, body: unknown) {
    const status_ = body as { message?: string; reason?: string } | undefined;
    super(`${method} ${path}: ${status} ${status_?.reason ?? ''} ${status_?.message ?? JSON.stringify(body)}`.replace(/\s+/g, ' '));
    this.name = 'KubeApiError';
    this.status = status;
    this.reason = status_?.reason ?? '';
    this.body = body;
  }
}

interface KubeconfigFile {
  clusters: { name: string; cluster: { server: string; 'certificate-authority-data': string } }[];
  users: { name: string; user: { token?: string; 'client-certificate-data'?: string; 'client-key-data'?: string } }[];
  contexts: { name: string; context: { cluster: string; user: string } }[];
  'current-context': string;
}

export interface KubeObject {
  apiVersion?: string;
  kind?: string;
  metadata: { name: string; namespace?: string; uid?: string; resourceVersion?: string; labels?: Record<string, string>; annotations?: Record<string, string>; deletionTimestamp?: string };
  [key: string]: unknown;
}

export interface KubeList<T = KubeObject> {
  items: T[];
  metadata: { resourceVersion: string; continue?: string };
}

export interface WatchEvent<T = KubeObject> {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: T;
}

export class KubeClient {
  readonly server: string;
  readonly #agent: Agent;
  readonly #token: string | undefined;

  constructor(server: string, agent: Agent, token?: string) {
    this.server = server;
    this.#agent = agent;
    this.#token = token;
  }

  /** A client for the current context of a kubeconfig file (JSON, as localkube writes them). */
  static async fromKubeconfig(path: string): Promise<KubeClient> {
    const config = JSON.parse(await readFile(path, 'utf8')) as KubeconfigFile;
    const context = config.contexts.find((c) => c.name === config['current-context'])?.context;
    const cluster = config.clusters.find((c) => c.name === context?.cluster)?.cluster;
    const user = config.users.find((u) => u.name === context?.user)?.user;
    if (!cluster || !user) throw new Error(`${path}: no cluster or user for context ${config['current-context']}`);
    const b64 = (s: string | undefined): Buffer | undefined => (s ? Buffer.from(s, 'base64') : undefined);
    const agent = new Agent({
      ca: b64(cluster['certificate-authority-data']),
      cert: b64(user['client-certificate-data']),
      key: b64(user['client-key-data']),
      keepAlive: true,
      maxSockets: 32,
    });
    return new KubeClient(cluster.server, agent, user.token);
  }

  close(): void {
    this.#agent.destroy();
  }

  #open(method: string, path: string, body: unknown, contentType: string, signal?: AbortSignal) {
    const url = new URL(path, this.server);
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    return httpsRequest(url, {
      method,
      agent: this.#agent,
      signal,
      headers: {
        accept: 'application/json',
        ...(payload !== undefined ? { 'content-type': contentType, 'content-length': Buffer.byteLength(payload) } : {}),
        ...(this.#token ? { authorization: `Bearer ${this.#token}` } : {}),
      },
    }).end(payload);
  }

  async request<T = KubeObject>(method: string, path: string, body?: unknown, options: { contentType?: string; signal?: AbortSignal; timeoutMs?: number } = {}): Promise<T> {
    const signal = AbortSignal.any([options.signal ?? new AbortController().signal, AbortSignal.timeout(options.timeoutMs ?? 30_000)]);
    return new Promise<T>((resolve, reject) => {
      const req = this.#open(method, path, body, options.contentType ?? 'application/json', signal);
      req.on('error', reject);
      req.on('response', (res) => {
        let text = '';
        res.setEncoding('utf8').on('data', (d: string) => (text += d));
        res.on('error', reject);
        res.on('end', () => {
          let parsed: unknown = text;
          try {
            parsed = text ? JSON.parse(text) : undefined;
          } catch {
            /* not JSON: keep the text */
          }
          if ((res.statusCode ?? 500) >= 400) reject(new KubeApiError(method, path, res.statusCode ?? 500, parsed));
          else resolve(parsed as T);
        });
      });
    });
  }

  get<T = KubeObject>(path: string): Promise<T> {
    return this.request<T>('GET', path);
  }

  /** GET that returns undefined for 404. */
  async find<T = KubeObject>(path: string): Promise<T | undefined> {
    try {
      return await this.get<T>(path);
    } catch (err) {
      if (err instanceof KubeApiError && err.status === 404) return undefined;
      throw err;
    }
  }

  create<T = KubeObject>(path: string, body: unknown): Promise<T> {
    return this.request<T>('POST', path, body);
  }

  /** Server-side apply as `fieldManager`, forcing ownership (localkube owns what it applies). */
  apply<T = KubeObject>(path: string, body: unknown, fieldManager = 'localkube'): Promise<T> {
    return this.request<T>('PATCH', `${path}?fieldManager=${fieldManager}&force=true`, body, { contentType: 'application/apply-patch+yaml' });
  }

  async delete(path: string): Promise<void> {
    try {
      await this.request('DELETE', path);
    } catch (err) {
      if (!(err instanceof KubeApiError && err.status === 404)) throw err;
    }
  }

  /** Watch events from `path` (a collection URL) until `signal` aborts or the server ends the stream. */
  async *watch<T = KubeObject>(path: string, signal: AbortSignal): AsyncGenerator<WatchEvent<T>> {
    const sep = path.includes('?') ? '&' : '?';
    const req = this.#open('GET', `${path}${sep}watch=true`, undefined, 'application/json', signal);
    const res = await new Promise<import('node:http').IncomingMessage>((resolve, reject) => {
      req.on('response', resolve);
      req.on('error', reject);
    });
    if ((res.statusCode ?? 500) >= 400) {
      res.resume();
      throw new KubeApiError('WATCH', path, res.statusCode ?? 500, undefined);
    }
    let buffered = '';
    try {
      for await (const chunk of res.setEncoding('utf8') as AsyncIterable<string>) {
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          if (line.trim()) yield JSON.parse(line) as WatchEvent<T>;
        }
      }
    } catch (err) {
      if (!signal.aborted) throw err;
    }
  }
}
