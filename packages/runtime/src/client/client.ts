// The Kubernetes client: typed CRUD, server-side apply, merge and JSON patches, the status subresource,
// dry-run, and the raw watch stream the watcher builds on. JSON over HTTPS through one keep-alive agent.
import { Agent, request as httpsRequest } from 'node:https';
import type { IncomingMessage } from 'node:http';
import { apiError, ApiError } from './errors.ts';
import { connect, type Connection, type ConnectionOptions } from './config.ts';
import { collectionPath, objectPath, type ResourceType } from './resources.ts';
import type { KubeList, KubeObject, ObjectKey } from '../object.ts';

export interface RequestOptions {
  query?: Record<string, string | number | boolean | undefined>;
  contentType?: string;
  /**
   * Extra request headers, e.g. for an API server proxy path whose backend reads its own header, or an
   * `accept` other than JSON. The connection's own headers (Authorization, Impersonate-*) and the body's
   * (Content-Type: use `contentType`; Content-Length) cannot be set here: naming one throws a TypeError.
   */
  headers?: Readonly<Record<string, string>>;
  signal?: AbortSignal;
  /** Default 30 s; watches have none. */
  timeoutMs?: number;
}

export interface WriteOptions {
  dryRun?: boolean;
  fieldManager?: string;
  /**
   * How the API server treats fields its schema does not know or duplicated (`fieldValidation`). Default
   * Strict: the request is refused and the fields named, so a typo (in a podTemplate, say) is an error and
   * not a warning nobody reads or a field silently dropped. Warn or Ignore only where a caller means it.
   */
  fieldValidation?: 'Strict' | 'Warn' | 'Ignore';
  signal?: AbortSignal;
}

export interface ApplyOptions extends WriteOptions {
  fieldManager: string;
  /** Take ownership of fields another manager owns instead of failing with a conflict. */
  force?: boolean;
}

export interface ListOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  limit?: number;
  continue?: string;
  resourceVersion?: string;
  resourceVersionMatch?: 'Exact' | 'NotOlderThan';
  signal?: AbortSignal;
}

export interface DeleteOptions extends WriteOptions {
  propagationPolicy?: 'Foreground' | 'Background' | 'Orphan';
  gracePeriodSeconds?: number;
  preconditions?: { uid?: string; resourceVersion?: string };
}

export type JsonPatchOp =
  | { op: 'add' | 'replace' | 'test'; path: string; value: unknown }
  | { op: 'remove'; path: string }
  | { op: 'move' | 'copy'; from: string; path: string };

export interface RawWatchEvent {
  type: 'ADDED' | 'MODIFIED' | 'DELETED' | 'BOOKMARK' | 'ERROR';
  object: unknown;
}

/** Observes every request: for metrics, and for benchmarks that count API calls. */
export type RequestObserver = (method: string, path: string, code: number, seconds: number) => void;

const WRITE_METHODS = new Set(['POST', 'PUT', 'PATCH', 'DELETE']);

/** Headers the client sets itself: a caller's `headers` may not replace them. */
function reservedHeader(name: string): boolean {
  return name === 'authorization' || name.startsWith('impersonate-') || name === 'content-type' || name === 'content-length' || name === 'host';
}

/** The request's headers, lower-cased: `accept`, then the caller's extra ones, then the connection's. */
export function requestHeaders(extra: Readonly<Record<string, string>> | undefined, connection: Readonly<Record<string, string>>): Record<string, string> {
  const headers: Record<string, string> = { accept: 'application/json' };
  for (const [name, value] of Object.entries(extra ?? {})) {
    const key = name.toLowerCase();
    if (reservedHeader(key)) throw new TypeError(`request header ${name} is the client's own and cannot be set per request`);
    headers[key] = value;
  }
  for (const [name, value] of Object.entries(connection)) headers[name.toLowerCase()] = value;
  return headers;
}

export class Client {
  readonly server: string;
  readonly #connection: Connection;
  readonly #agent: Agent;
  readonly #observers: RequestObserver[] = [];
  /** Totals since creation: every request, and those that write. */
  readonly stats = { requests: 0, writes: 0 };

  constructor(connection: Connection) {
    this.#connection = connection;
    this.server = connection.server;
    this.#agent = new Agent({ ...connection.tls, keepAlive: true, maxSockets: 64, maxFreeSockets: 16 });
  }

  static async connect(options: ConnectionOptions = {}): Promise<Client> {
    return new Client(await connect(options));
  }

  observe(observer: RequestObserver): void {
    this.#observers.push(observer);
  }

  close(): void {
    this.#agent.destroy();
  }

  /** The local ports of this client's open connections (to find them in `ss` output, or cut them in tests). */
  openConnections(): number[] {
    const ports: number[] = [];
    for (const sockets of [...Object.values(this.#agent.sockets), ...Object.values(this.#agent.freeSockets)]) {
      for (const socket of sockets ?? []) if (socket.localPort) ports.push(socket.localPort);
    }
    return ports;
  }

  async #open(method: string, path: string, body: unknown, options: RequestOptions): Promise<IncomingMessage> {
    const url = new URL(path, this.server);
    for (const [k, v] of Object.entries(options.query ?? {})) if (v !== undefined && v !== '') url.searchParams.set(k, String(v));
    const payload = body === undefined ? undefined : typeof body === 'string' ? body : JSON.stringify(body);
    const headers: Record<string, string | number> = requestHeaders(options.headers, await this.#connection.headers());
    if (payload !== undefined) {
      headers['content-type'] = options.contentType ?? 'application/json';
      headers['content-length'] = Buffer.byteLength(payload);
    }
    this.stats.requests++;
    if (WRITE_METHODS.has(method)) this.stats.writes++;
    return new Promise<IncomingMessage>((resolve, reject) => {
      const req = httpsRequest(url, { method, agent: this.#agent, headers, signal: options.signal }, resolve);
      req.on('error', reject);
      if (options.timeoutMs) req.setTimeout(options.timeoutMs, () => req.destroy(new Error(`${method} ${path}: no response in ${options.timeoutMs} ms`)));
      req.end(payload);
    });
  }

  /**
   * One request to any path (objects, discovery documents, a service proxy); resolves with the parsed JSON
   * body (the text when the response is not JSON), rejects with a typed ApiError for 4xx/5xx, whose `body`
   * is what came back.
   */
  async request<T>(method: string, path: string, body?: unknown, options: RequestOptions = {}): Promise<T> {
    const started = performance.now();
    const res = await this.#open(method, path, body, { timeoutMs: 30_000, ...options });
    let text = '';
    res.setEncoding('utf8');
    for await (const chunk of res as AsyncIterable<string>) text += chunk;
    const code = res.statusCode ?? 0;
    for (const observe of this.#observers) observe(method, path, code, (performance.now() - started) / 1000);
    let parsed: unknown = text;
    if (text && (res.headers['content-type'] ?? '').includes('json')) parsed = JSON.parse(text);
    if (code >= 400) throw apiError(method, path, code, parsed);
    return parsed as T;
  }

  get<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey | string, options: { signal?: AbortSignal } = {}): Promise<T> {
    const k = typeof key === 'string' ? { namespace: '', name: key } : key;
    return this.request<T>('GET', objectPath(type, k.namespace, k.name), undefined, options);
  }

  /** `get` that resolves undefined when the object does not exist. */
  async find<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey | string): Promise<T | undefined> {
    try {
      return await this.get(type, key);
    } catch (err) {
      if (err instanceof ApiError && err.code === 404) return undefined;
      throw err;
    }
  }

  list<T extends KubeObject>(type: ResourceType<T>, options: ListOptions = {}): Promise<KubeList<T>> {
    const { namespace, signal, ...query } = options;
    return this.request<KubeList<T>>('GET', collectionPath(type, namespace), undefined, { query: { ...query }, signal });
  }

  create<T extends KubeObject>(type: ResourceType<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return this.request<T>('POST', collectionPath(type, obj.metadata.namespace), withKind(type, obj), { query: writeQuery(options), signal: options.signal });
  }

  /** PUT: optimistic concurrency through metadata.resourceVersion (a stale one gives ConflictError). */
  replace<T extends KubeObject>(type: ResourceType<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return this.request<T>('PUT', objectPath(type, obj.metadata.namespace, obj.metadata.name!), withKind(type, obj), { query: writeQuery(options), signal: options.signal });
  }

  async delete(type: ResourceType, key: ObjectKey | string, options: DeleteOptions = {}): Promise<void> {
    const k = typeof key === 'string' ? { namespace: '', name: key } : key;
    const body = { apiVersion: 'v1', kind: 'DeleteOptions', propagationPolicy: options.propagationPolicy, gracePeriodSeconds: options.gracePeriodSeconds, preconditions: options.preconditions };
    // A delete sends no object, so there are no fields to validate: only dryRun applies.
    await this.request('DELETE', objectPath(type, k.namespace, k.name), body, { query: { dryRun: options.dryRun ? 'All' : undefined }, signal: options.signal });
  }

  /** Server-side apply: `obj` is the full intent of `fieldManager`; fields it stops sending are removed if it owned them. */
  apply<T extends KubeObject>(type: ResourceType<T>, obj: T, options: ApplyOptions): Promise<T> {
    return this.#apply(type, obj, options);
  }

  /** Server-side apply to the status subresource. */
  applyStatus<T extends KubeObject>(type: ResourceType<T>, obj: T, options: ApplyOptions): Promise<T> {
    return this.#apply(type, obj, options, 'status');
  }

  #apply<T extends KubeObject>(type: ResourceType<T>, obj: T, options: ApplyOptions, subresource?: string): Promise<T> {
    const path = objectPath(type, obj.metadata.namespace, obj.metadata.name!, subresource);
    const { managedFields: _drop, resourceVersion: _rv, ...metadata } = obj.metadata;
    return this.request<T>('PATCH', path, withKind(type, { ...obj, metadata }), {
      query: { ...writeQuery(options), fieldManager: options.fieldManager, force: options.force ? true : undefined },
      contentType: 'application/apply-patch+yaml',
      signal: options.signal,
    });
  }

  /** JSON merge patch (RFC 7386). */
  mergePatch<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, patch: unknown, options: WriteOptions & { subresource?: string } = {}): Promise<T> {
    return this.request<T>('PATCH', objectPath(type, key.namespace, key.name, options.subresource), patch, {
      query: writeQuery(options),
      contentType: 'application/merge-patch+json',
      signal: options.signal,
    });
  }

  /** JSON patch (RFC 6902); a failing `test` op gives InvalidError/ConflictError, so edits can be conditional. */
  jsonPatch<T extends KubeObject>(type: ResourceType<T>, key: ObjectKey, ops: JsonPatchOp[], options: WriteOptions & { subresource?: string } = {}): Promise<T> {
    return this.request<T>('PATCH', objectPath(type, key.namespace, key.name, options.subresource), ops, {
      query: writeQuery(options),
      contentType: 'application/json-patch+json',
      signal: options.signal,
    });
  }

  /** PUT to the status subresource (spec changes in `obj` are ignored by the server). */
  replaceStatus<T extends KubeObject>(type: ResourceType<T>, obj: T, options: WriteOptions = {}): Promise<T> {
    return this.request<T>('PUT', objectPath(type, obj.metadata.namespace, obj.metadata.name!, 'status'), withKind(type, obj), { query: writeQuery(options), signal: options.signal });
  }

  /**
   * A watch stream of raw events from `resourceVersion` on, ending when the server closes it or `signal`
   * aborts. `onActivity` fires on every chunk (for a watchdog that detects silent dead connections);
   * `onOpen` once the server has accepted the watch (a 2xx status), before any event arrives.
   */
  async *watch(
    type: ResourceType,
    options: ListOptions & { resourceVersion: string; allowWatchBookmarks?: boolean; timeoutSeconds?: number; signal: AbortSignal; onActivity?: () => void; onOpen?: () => void },
  ): AsyncGenerator<RawWatchEvent> {
    const { namespace, signal, onActivity, onOpen, ...query } = options;
    const path = collectionPath(type, namespace);
    const res = await this.#open('GET', path, undefined, { query: { ...query, watch: true }, signal });
    const code = res.statusCode ?? 0;
    for (const observe of this.#observers) observe('WATCH', path, code, 0);
    if (code >= 400) {
      let text = '';
      for await (const chunk of res.setEncoding('utf8') as AsyncIterable<string>) text += chunk;
      let body: unknown = text;
      try {
        body = JSON.parse(text);
      } catch {
        /* keep text */
      }
      throw apiError('WATCH', path, code, body);
    }
    onOpen?.();
    let buffered = '';
    try {
      for await (const chunk of res.setEncoding('utf8') as AsyncIterable<string>) {
        onActivity?.();
        buffered += chunk;
        let newline: number;
        while ((newline = buffered.indexOf('\n')) >= 0) {
          const line = buffered.slice(0, newline);
          buffered = buffered.slice(newline + 1);
          if (line.trim()) yield JSON.parse(line) as RawWatchEvent;
        }
      }
    } finally {
      res.destroy();
    }
  }
}

function writeQuery(options: WriteOptions): Record<string, string | undefined> {
  return { dryRun: options.dryRun ? 'All' : undefined, fieldManager: options.fieldManager, fieldValidation: options.fieldValidation ?? 'Strict' };
}

function withKind<T extends KubeObject>(type: ResourceType<T>, obj: T): T {
  return { ...obj, apiVersion: obj.apiVersion ?? type.apiVersion, kind: obj.kind ?? type.kind };
}
