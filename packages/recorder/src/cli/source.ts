// Where `quorum history` reads records: the recorder's history endpoint through the API server's service
// proxy (the default: a kubeconfig is all it needs), or a directory with the handlers run in process
// (--path). Both speak the same protocol: a request path under /v1 and a JSON body.
import { ApiError, Client, connect, type Connection } from '@quorum/runtime';
import { allowAll } from '../history/access.ts';
import { HistoryHandlers } from '../history/handlers.ts';
import {
  API_PREFIX,
  HISTORY_PORT_NAME,
  TOKEN_HEADER,
  type DiffResponse,
  type KindsResponse,
  type ObjectId,
  type ObjectsResponse,
  type RecordResponse,
  type RecordsResponse,
} from '../history/protocol.ts';
import { StoreReader, type ObjectFilter } from '../history/store-reader.ts';
import { CliError } from './errors.ts';

/** One GET of the endpoint: the path with its query, and what came back. */
export type Fetch = (pathAndQuery: string) => Promise<{ status: number; body: unknown }>;

type Query = Record<string, string | undefined>;

function withQuery(path: string, query: Query): string {
  const params = new URLSearchParams();
  for (const [k, v] of Object.entries(query)) if (v !== undefined) params.set(k, v);
  const text = params.toString();
  return `${API_PREFIX}/${path}${text ? `?${text}` : ''}`;
}

const objectQuery = (id: ObjectId): Query => ({ group: id.group, kind: id.kind, namespace: id.namespace, name: id.name });

/** The endpoint's calls, typed; a refusal becomes a CliError with the endpoint's (or the API server's) words. */
export class HistorySource {
  readonly #fetch: Fetch;
  readonly #close: () => void;
  /** Where the records come from, for messages. */
  readonly description: string;

  constructor(fetch: Fetch, description: string, close: () => void = () => undefined) {
    this.#fetch = fetch;
    this.description = description;
    this.#close = close;
  }

  /** Releases the connection, if the source has one. */
  close(): void {
    this.#close();
  }

  kinds(): Promise<KindsResponse> {
    return this.#get('kinds', {});
  }

  objects(filter: ObjectFilter, store?: string): Promise<ObjectsResponse> {
    return this.#get('objects', { ...filter, store });
  }

  records(id: ObjectId, store?: string): Promise<RecordsResponse> {
    return this.#get('records', { ...objectQuery(id), store });
  }

  record(id: ObjectId, recordId: string, store?: string): Promise<RecordResponse> {
    return this.#get('record', { ...objectQuery(id), id: recordId, store });
  }

  diff(id: ObjectId, recordId: string, to?: string, store?: string): Promise<DiffResponse> {
    return this.#get('diff', { ...objectQuery(id), id: recordId, to, store });
  }

  async #get<T>(path: string, query: Query): Promise<T> {
    const { status, body } = await this.#fetch(withQuery(path, query));
    if (status >= 200 && status < 300) return body as T;
    throw new CliError(refusal(status, body, this.description));
  }
}

/** Records in a directory, read in process: the file system's permissions are the only check. */
export function localSource(path: string): HistorySource {
  const handlers = new HistoryHandlers(new StoreReader(path));
  const access = allowAll();
  return new HistorySource(async (pathAndQuery) => handlers.handle(new URL(pathAndQuery, 'http://local.invalid'), access), `the records in ${path}`);
}

export interface ProxyOptions {
  kubeconfig?: string;
  context?: string;
  /** The token to forward; default: the kubeconfig's bearer token. */
  token?: string;
  recorderNamespace: string;
  recorderService: string;
  timeoutMs?: number;
}

function headerValue(headers: Record<string, string>, name: string): string | undefined {
  const key = Object.keys(headers).find((k) => k.toLowerCase() === name);
  return key === undefined ? undefined : headers[key];
}

/**
 * The recorder's endpoint through the API server's service proxy, with the runtime's client: the
 * connection authenticates to the API server, and the caller's bearer token goes again in TOKEN_HEADER for
 * the recorder (the proxy drops Authorization).
 */
export async function proxySource(options: ProxyOptions, connection?: Connection): Promise<HistorySource> {
  const conn = connection ?? (await connect({ kubeconfig: options.kubeconfig, context: options.context }));
  const client = new Client(conn);
  const service = `${options.recorderNamespace}/${options.recorderService}`;
  const base = `/api/v1/namespaces/${encodeURIComponent(options.recorderNamespace)}/services/https:${encodeURIComponent(options.recorderService)}:${HISTORY_PORT_NAME}/proxy`;
  const tokenOf = (headers: Record<string, string>): string => {
    if (options.token) return options.token;
    const match = /^Bearer\s+(\S+)$/i.exec(headerValue(headers, 'authorization') ?? '');
    if (match) return match[1]!;
    throw new CliError(
      'the kubeconfig authenticates without a bearer token (with a client certificate, as admin kubeconfigs often do). The API server does not pass a ' +
        'client certificate, or any identity, on to the recorder, which must know who asks to apply your RBAC to the records. Pass a token with ' +
        '--token (or $QUORUM_HISTORY_TOKEN), e.g. --token "$(kubectl create token NAME -n NS)" for a ServiceAccount allowed to read the objects, ' +
        'or read a copy of the records with --path DIR',
    );
  };
  const timeoutMs = options.timeoutMs ?? 30_000;
  const fetch: Fetch = async (pathAndQuery) => {
    const token = tokenOf(await conn.headers());
    try {
      const body = await client.request<unknown>('GET', base + pathAndQuery, undefined, { headers: { [TOKEN_HEADER]: `Bearer ${token}` }, timeoutMs });
      return { status: 200, body };
    } catch (err) {
      // The endpoint's refusals and the proxy's come back as they were sent; refusal() words them.
      if (err instanceof ApiError) return { status: err.code, body: err.body };
      throw new CliError(`cannot reach the API server at ${conn.server}: ${err instanceof Error ? err.message : String(err)}`);
    }
  };
  return new HistorySource(fetch, `the recorder's history endpoint (Service ${service}, through the API server)`, () => client.close());
}

/** What a refusal says: the endpoint's own message, or the API server's (the proxy's refusals are Status objects). */
export function refusal(status: number, body: unknown, description: string): string {
  if (typeof body === 'object' && body !== null) {
    const b = body as { error?: unknown; kind?: unknown; message?: unknown; reason?: unknown };
    if (typeof b.error === 'string') return b.error;
    if (b.kind === 'Status' && typeof b.message === 'string') {
      if (status === 403) return `the API server does not let you reach ${description}: ${b.message}`;
      if (status === 404) return `${description} was not found: ${b.message} (is the recorder installed there? see --recorder-namespace)`;
      if (status === 503) return `${description} is not available: ${b.message} (is the recorder running?)`;
      return `${description}: ${status}${typeof b.reason === 'string' ? ` ${b.reason}` : ''}: ${b.message}`;
    }
  }
  const text = typeof body === 'string' ? body.trim().slice(0, 300) : '';
  return `${description} answered ${status}${text ? `: ${text}` : ''}`;
}
