// The recorder's read-only history endpoint: HTTPS, JSON, GET only, on every replica. Reached through the API
// server's service proxy (`/api/v1/namespaces/<ns>/services/https:quorum-recorder:history/proxy/v1/...`), so
// a caller needs only a kubeconfig. The API server authenticates the caller and checks `get services/proxy`
// on this Service; it then drops the caller's Authorization header and forwards no identity, so the caller
// sends its bearer token again in X-Quorum-Authorization, and the recorder checks it with a TokenReview and
// each read with a SubjectAccessReview (access.ts). A request without a token the API server accepts is
// refused, whoever sends it: the Service's ClusterIP is reachable from any pod, not only from the API server.
//
// The serving certificate is generated in memory at start: the API server's proxy does not verify it (it
// dials pod IPs), so it protects the token on the pod network against listening, not against a peer that
// can already redirect pod traffic.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { ApiError, DiscoveryDocumentError, generateCertificates, KindUnavailableError, type Runnable } from '@quorum/runtime';
import { KubeAuthorizer, type ReviewClient } from './access.ts';
import { HistoryHandlers, type HistoryResponse } from './handlers.ts';
import { API_PREFIX, TOKEN_HEADER } from './protocol.ts';
import { StoreReader, type ObjectStoreSource } from './store-reader.ts';

export interface HistoryLog {
  debug(fields: Record<string, unknown>, msg: string): void;
  info(fields: Record<string, unknown>, msg: string): void;
  warn(fields: Record<string, unknown>, msg: string): void;
  error(fields: Record<string, unknown>, msg: string): void;
}

export interface HistoryServerOptions {
  /** The recorder's storage root: the store of every ChangeRecorder that writes to the volume is below it. */
  storageRoot: string;
  /** The stores in object stores that the ChangeRecorders name now (store/target.ts, objectStoreSources). */
  objectStores?: () => Promise<ObjectStoreSource[]>;
  /** Makes the TokenReviews and SubjectAccessReviews (the recorder's own ServiceAccount). */
  client: ReviewClient;
  /** Default HISTORY_PORT; 0 for an ephemeral one. */
  port?: number;
  host?: string;
  /** The names in the generated serving certificate (e.g. quorum-recorder.quorum-system.svc). */
  dnsNames?: string[];
  /** A serving certificate to use instead of a generated one (PEM). */
  tls?: { cert: string; key: string };
  log?: HistoryLog;
}

const silent: HistoryLog = { debug: () => undefined, info: () => undefined, warn: () => undefined, error: () => undefined };

/** `Bearer <token>` → the token; undefined for anything else. */
export function bearerToken(header: string | string[] | undefined): string | undefined {
  const value = Array.isArray(header) ? header[0] : header;
  const match = /^Bearer\s+(\S+)\s*$/i.exec(value ?? '');
  return match?.[1];
}

export class HistoryServer {
  readonly #server: Server;
  readonly #handlers: HistoryHandlers;
  readonly #authorizer: KubeAuthorizer;
  readonly #log: HistoryLog;

  private constructor(server: Server, handlers: HistoryHandlers, authorizer: KubeAuthorizer, log: HistoryLog) {
    this.#server = server;
    this.#handlers = handlers;
    this.#authorizer = authorizer;
    this.#log = log;
  }

  static async start(options: HistoryServerOptions): Promise<HistoryServer> {
    const tls = options.tls ?? (await generateCertificates({ dnsNames: options.dnsNames?.length ? options.dnsNames : ['quorum-recorder'], validityDays: 365 }));
    const handlers = new HistoryHandlers(new StoreReader(options.storageRoot, options.objectStores ? { objectStores: options.objectStores } : {}));
    const authorizer = new KubeAuthorizer(options.client);
    const log = options.log ?? silent;
    const server = createServer({ cert: tls.cert, key: tls.key, requestTimeout: 60_000, headersTimeout: 15_000 });
    const instance = new HistoryServer(server, handlers, authorizer, log);
    server.on('request', (req: IncomingMessage, res: ServerResponse) => void instance.#serve(req, res));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(options.port ?? 8443, options.host ?? '0.0.0.0', () => {
        server.off('error', reject);
        resolve();
      });
    });
    return instance;
  }

  get port(): number {
    const address = this.#server.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  async close(): Promise<void> {
    await new Promise<void>((resolve) => this.#server.close(() => resolve()));
    this.#server.closeAllConnections();
    this.#handlers.reader.close();
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const started = performance.now();
    let user: string | undefined;
    let reply: HistoryResponse;
    const url = new URL(req.url ?? '/', 'https://history.invalid');
    try {
      reply = await this.#respond(req, url, (name) => (user = name));
    } catch (err) {
      this.#log.error({ err, path: url.pathname, user }, 'history endpoint: request failed');
      reply = { status: 500, body: { error: 'internal error in the recorder; its log has the details' } };
    }
    const body = `${JSON.stringify(reply.body)}\n`;
    const headers: Record<string, string | number> = { 'content-type': 'application/json', 'cache-control': 'no-store', 'content-length': Buffer.byteLength(body) };
    if (reply.status === 405) headers['allow'] = 'GET, HEAD';
    res.writeHead(reply.status, headers).end(req.method === 'HEAD' ? undefined : body);
    // Never the token, nor the query's values beyond what names the object.
    this.#log.debug({ method: req.method, path: url.pathname, query: url.search, user, status: reply.status, ms: Math.round(performance.now() - started) }, 'history endpoint: request');
  }

  async #respond(req: IncomingMessage, url: URL, identified: (user: string) => void): Promise<HistoryResponse> {
    if (req.method !== 'GET' && req.method !== 'HEAD') return { status: 405, body: { error: `the history endpoint is read-only: ${req.method ?? '?'} is not served, only GET` } };
    if (!url.pathname.startsWith(`${API_PREFIX}/`)) return { status: 404, body: { error: `no such endpoint: ${url.pathname}` } };
    const token = bearerToken(req.headers[TOKEN_HEADER]);
    if (!token) {
      return {
        status: 401,
        body: { error: `the history endpoint needs the caller's bearer token in the ${TOKEN_HEADER} header (the API server's proxy does not pass Authorization on); quorum history sends it` },
      };
    }
    let who;
    try {
      who = await this.#authorizer.authenticate(token);
    } catch (err) {
      return { status: 503, body: { error: `the recorder cannot check tokens with the API server: ${apiMessage(err)}` } };
    }
    if (!who) return { status: 401, body: { error: `the API server does not accept the token in ${TOKEN_HEADER} (expired, or not a bearer token of this cluster)` } };
    identified(who.username);
    try {
      return await this.#handlers.handle(url, this.#authorizer.access(who));
    } catch (err) {
      if (err instanceof ApiError || err instanceof KindUnavailableError || err instanceof DiscoveryDocumentError) {
        return { status: 503, body: { error: `the recorder cannot check access with the API server: ${err.message}` } };
      }
      throw err;
    }
  }
}

function apiMessage(err: unknown): string {
  return err instanceof Error ? err.message : String(err);
}

/**
 * The history server as a manager Runnable: it runs on every replica (reading needs no leadership), and
 * stops when the manager stops.
 */
export function historyServerRunnable(options: HistoryServerOptions): Runnable {
  return {
    name: 'history-endpoint',
    needLeaderElection: false,
    start: async (signal) => {
      const server = await HistoryServer.start(options);
      options.log?.info({ port: server.port }, 'history endpoint serving');
      await new Promise<void>((resolve) => (signal.aborted ? resolve() : signal.addEventListener('abort', () => resolve(), { once: true })));
      await server.close();
    },
  };
}
