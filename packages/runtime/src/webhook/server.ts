// The HTTPS endpoint the API server calls for admission: one path per handler, AdmissionReview in and
// out, certificates reloaded from disk as they rotate.
import { readFile } from 'node:fs/promises';
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import type { TLSSocket } from 'node:tls';
import type { KubeObject } from '../object.ts';
import {
  ADMISSION_API_VERSION,
  errorResponse,
  mutatingReviewer,
  parseAdmissionReview,
  validatingReviewer,
  type AdmissionResponse,
  type AdmissionReviewer,
  type MutatingHandler,
  type ValidatingHandler,
} from './admission.ts';
import { CertificateReloader, type WebhookLogger } from './cert-reloader.ts';
import { RefusalTally, WEBHOOK_REFUSALS, type RefusalMetrics, type WebhookRefusal } from './refusals.ts';
import type { RetryMetrics } from '../watch/retry-reporter.ts';

export type {
  AdmissionRequest,
  MutatingHandler,
  MutationResult,
  Operation,
  ValidatingHandler,
  ValidationResult,
} from './admission.ts';
export type { WebhookLogger, WebhookLogLevel } from './cert-reloader.ts';
export type { RefusalMetrics, WebhookRefusal } from './refusals.ts';

export interface WebhookServerOptions {
  /** Which of the operator's webhook servers this is: the `webhook` label of its metrics, and its log lines. Default `webhook`. */
  name?: string;
  /** 0 picks a free port; `port` tells which after start. */
  port: number;
  /** Default: all interfaces. */
  host?: string;
  certFile: string;
  keyFile: string;
  /** Default: JSON lines on stderr. */
  logger?: WebhookLogger;
  /** How often to re-read the certificate files (and the client CA) besides watching them. Default 10 s. */
  certPollIntervalMs?: number;
  /** Counts failed certificate reloads (`runtime_retries_total{component="webhook/certificates"}`): pass a manager's `metrics.retries`. */
  metrics?: RetryMetrics;
  /** Largest AdmissionReview accepted, in bytes; larger ones get 413 unread. Default 8 MiB. */
  maxBodyBytes?: number;
  /** Reviews read or answered at once; more get 429 at once. Default 32. */
  maxInFlight?: number;
  /**
   * Body bytes held by the reviews in flight (a body without a length counts as `maxBodyBytes`); a review that would
   * pass it gets 429 unless it is the only one. Default 16 MiB: with JSON parsing, a few times that in memory.
   */
  maxInFlightBytes?: number;
  /**
   * Counts every refusal (WebhookRefusal) in `quorum_webhook_requests_refused_total{webhook, reason}`: pass a manager's
   * `metrics`. A warn line per reason at most every 10 s tells them, with their number, whether given or not.
   */
  refusalMetrics?: RefusalMetrics;
  /** Told of every refusal too (the path is empty for a failed TLS handshake). */
  onRefused?: (reason: WebhookRefusal, path: string) => void;
  /** Serve only callers with a client certificate of this CA (the API server): see WebhookClientAuth. */
  clientAuth?: WebhookClientAuth;
}

/**
 * Who may call: the API server, proven by the client certificate it presents to admission webhooks when its
 * administrator gives it one (`--admission-control-config-file`, a WebhookAdmissionConfiguration whose
 * kubeconfig names a client certificate for `*.svc`). A caller without a certificate signed by the CA is
 * refused in the TLS handshake; one whose certificate's common name is not allowed gets 403.
 */
export interface WebhookClientAuth {
  /**
   * PEM file of the CA (or CAs) that sign the API server's client certificate: must hold one at start, then is
   * followed like the serving certificate (a ConfigMap or Secret volume updated in place takes effect without a
   * restart; a version that holds no certificate is not taken, and the current CA keeps serving).
   */
  caFile: string;
  /** Common names accepted (e.g. `kube-apiserver-webhook-client`); empty or unset: any certificate the CA signed. */
  allowedNames?: readonly string[];
}

/** Well above any object the API server accepts (about 3 MiB, twice in an UPDATE's review), so only garbage is refused. */
const MAX_BODY_BYTES = 8 * 1024 * 1024;
/**
 * The API server calls with a bounded number of connections, but anything that can reach the port can call too:
 * without bounds, 64 concurrent 8 MiB bodies held and parsed at once grow the heap by gigabytes and the pod is
 * killed, taking every webhook (and for a fail-closed one, every write of its kind) with it.
 */
const MAX_IN_FLIGHT = 32;
const MAX_IN_FLIGHT_BYTES = 16 * 1024 * 1024;
/** The API server gives up on a webhook after at most 30 s; a request open longer is stuck. */
const REQUEST_TIMEOUT_MS = 35_000;
/** How long stop() lets in-flight reviews finish before cutting their connections. */
const DRAIN_MS = 5_000;

const stderrLogger: WebhookLogger = (msg, fields, level = 'info') => process.stderr.write(`${JSON.stringify({ time: new Date().toISOString(), level, msg, ...fields })}\n`);

export class WebhookServer {
  readonly #options: WebhookServerOptions;
  readonly #log: WebhookLogger;
  readonly #reviewers = new Map<string, AdmissionReviewer>();
  #server: Server | undefined;
  #reloader: CertificateReloader | undefined;
  #port: number | undefined;
  #stopping: Promise<void> | undefined;
  #abort: { signal: AbortSignal; listener: () => void } | undefined;
  #inFlight = 0;
  #inFlightBytes = 0;
  #refusals: RefusalTally | undefined;
  #clientAuth: WebhookClientAuth | undefined;

  constructor(options: WebhookServerOptions) {
    this.#options = options;
    this.#log = options.logger ?? stderrLogger;
    this.#clientAuth = options.clientAuth;
  }

  /** Like the `clientAuth` option, for code that registers handlers on a server it did not construct; before start(). */
  requireClientCertificates(auth: WebhookClientAuth): void {
    if (this.#server) throw new Error('client certificates must be required before the webhook server starts');
    this.#clientAuth = auth;
  }

  /** The port being listened on; throws before start. */
  get port(): number {
    if (this.#port === undefined) throw new Error('the webhook server has not started');
    return this.#port;
  }

  registerValidating<T = KubeObject>(path: string, handler: ValidatingHandler<T>): void {
    this.#register(path, validatingReviewer(handler));
  }

  registerMutating<T = KubeObject>(path: string, handler: MutatingHandler<T>): void {
    this.#register(path, mutatingReviewer(handler));
  }

  #register(path: string, reviewer: AdmissionReviewer): void {
    if (!path.startsWith('/')) throw new Error(`webhook path must start with '/': ${path}`);
    if (this.#reviewers.has(path)) throw new Error(`a webhook is already registered at ${path}`);
    this.#reviewers.set(path, reviewer);
  }

  /** Resolves once listening; stops when `signal` aborts. Fails if the certificate files are missing or unusable. */
  async start(signal?: AbortSignal): Promise<void> {
    if (this.#server) throw new Error('the webhook server has already started');
    signal?.throwIfAborted();
    const caFile = this.#clientAuth?.caFile;
    if (caFile !== undefined) await checkClientCA(caFile);
    const reloader = this.#certificateReloader(caFile);
    const clientTLS = caFile === undefined ? {} : { requestCert: true, rejectUnauthorized: true };
    const server = createServer({ ...(await reloader.load()), ...clientTLS, minVersion: 'TLSv1.2' }, (req, res) => {
      this.#serve(req, res).catch((err: unknown) => {
        this.#log('webhook: failed to answer', { path: req.url, error: err instanceof Error ? err.message : String(err) });
        if (!res.headersSent) sendText(res, 500, 'internal error');
        else res.destroy();
      });
    });
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    const refusals = (this.#refusals = this.#refusalTally());
    // Anything that reaches the port can fail handshakes as fast as it likes: counted and spaced like the rest.
    server.on('tlsClientError', (err) => refusals.refused('tls_handshake', '', { error: err.message.trim(), clientCertificates: this.#clientAuth ? 'required' : 'not asked for' }));
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#options.port, this.#options.host, () => {
        server.off('error', reject);
        resolve();
      });
    });
    this.#server = server;
    this.#reloader = reloader;
    this.#stopping = undefined;
    this.#port = (server.address() as AddressInfo).port;
    reloader.start();
    if (signal) {
      const listener = (): void => void this.stop();
      signal.addEventListener('abort', listener, { once: true });
      this.#abort = { signal, listener };
    }
    this.#log('webhook: listening', { host: this.#options.host ?? '*', port: this.#port, paths: [...this.#reviewers.keys()], clientCertificates: this.#clientAuth ? 'required' : 'not asked for' });
  }

  /** Follows the certificate files, and the client CA when one is required. */
  #certificateReloader(caFile: string | undefined): CertificateReloader {
    return new CertificateReloader({
      certFile: this.#options.certFile,
      keyFile: this.#options.keyFile,
      caFile,
      logger: this.#log,
      pollIntervalMs: this.#options.certPollIntervalMs ?? 10_000,
      metrics: this.#options.metrics,
      // Changes are only reported after reloader.start(), by which time the server is listening.
      onChange: (files) => {
        // A new context replaces the whole old one: certificate, key and client CA together.
        this.#server?.setSecureContext({ ...files, minVersion: 'TLSv1.2' });
        this.#log('webhook: serving rotated certificate files', { certFile: this.#options.certFile, ...(caFile ? { clientCAFile: caFile } : {}) });
      },
    });
  }

  #refusalTally(): RefusalTally {
    return new RefusalTally({
      webhook: this.#options.name ?? 'webhook',
      log: this.#log,
      metrics: this.#options.refusalMetrics,
      onRefused: this.#options.onRefused,
      // A name refusal only where names are given: no series that can never move.
      reasons: this.#clientAuth?.allowedNames?.length ? WEBHOOK_REFUSALS : WEBHOOK_REFUSALS.filter((r) => r !== 'client_certificate_name'),
    });
  }

  /** Stops accepting connections and resolves when in-flight reviews have been answered (or cut after a few seconds). */
  stop(): Promise<void> {
    this.#stopping ??= this.#stop();
    return this.#stopping;
  }

  async #stop(): Promise<void> {
    const server = this.#server;
    if (!server) return;
    if (this.#abort) this.#abort.signal.removeEventListener('abort', this.#abort.listener);
    this.#abort = undefined;
    await this.#reloader?.stop();
    this.#refusals?.flush();
    const drained = setTimeout(() => server.closeAllConnections(), DRAIN_MS).unref();
    // close() also drops idle keep-alive connections, which the API server keeps open.
    await new Promise<void>((resolve) => server.close(() => resolve()));
    clearTimeout(drained);
    this.#server = undefined;
    this.#reloader = undefined;
    this.#port = undefined;
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = new URL(req.url ?? '/', 'https://webhook').pathname;
    const reviewer = this.#reviewers.get(path);
    if (!reviewer) return sendText(res, 404, `no webhook at ${path}`);
    const unauthorized = this.#unauthorizedCaller(req);
    if (unauthorized) return this.#refuse(req, res, 'client_certificate_name', path, 403, unauthorized);
    if (req.method !== 'POST') {
      res.setHeader('allow', 'POST');
      return sendText(res, 405, 'admission reviews are POSTed');
    }
    const maxBody = this.#options.maxBodyBytes ?? MAX_BODY_BYTES;
    const declared = Number(req.headers['content-length'] ?? Number.NaN);
    if (declared > maxBody) return this.#refuse(req, res, 'body_too_large', path, 413, `the body exceeds ${maxBody} bytes`);
    const cost = Number.isFinite(declared) ? declared : maxBody;
    const overloaded = this.#admit(cost);
    if (overloaded) return this.#refuse(req, res, overloaded, path, 429, 'too many admission reviews in flight; try again');
    try {
      await this.#review(req, res, reviewer, path, maxBody);
    } finally {
      this.#inFlight -= 1;
      this.#inFlightBytes -= cost;
    }
  }

  /** Why the caller may not call, when client certificates are required and its name is not allowed. */
  #unauthorizedCaller(req: IncomingMessage): string | undefined {
    const allowed = this.#clientAuth?.allowedNames ?? [];
    if (allowed.length === 0) return undefined;
    // The handshake already refused a caller without a certificate of the CA; this one has one.
    const name = (req.socket as TLSSocket).getPeerCertificate().subject?.CN;
    const names = Array.isArray(name) ? name : name === undefined ? [] : [name];
    if (names.length === 1 && allowed.includes(names[0]!)) return undefined;
    return `the client certificate's common name ${JSON.stringify(names.join(','))} is not one allowed to call this webhook`;
  }

  /** Takes a slot for a review of `cost` bytes, or says which bound is reached (one review is always let in). */
  #admit(cost: number): 'too_many_in_flight' | 'too_many_bytes_in_flight' | undefined {
    if (this.#inFlight > 0) {
      if (this.#inFlight >= (this.#options.maxInFlight ?? MAX_IN_FLIGHT)) return 'too_many_in_flight';
      if (this.#inFlightBytes + cost > (this.#options.maxInFlightBytes ?? MAX_IN_FLIGHT_BYTES)) return 'too_many_bytes_in_flight';
    }
    this.#inFlight += 1;
    this.#inFlightBytes += cost;
    return undefined;
  }

  /** Answers without reading the body (discarded, and the connection closed after), counted and warned about. */
  #refuse(req: IncomingMessage, res: ServerResponse, reason: WebhookRefusal, path: string, code: number, message: string): void {
    req.resume();
    if (code === 429) res.setHeader('retry-after', '1');
    sendText(res, code, message, true);
    this.#refusals?.refused(reason, path, { status: code, inFlight: this.#inFlight, inFlightBytes: this.#inFlightBytes });
  }

  async #review(req: IncomingMessage, res: ServerResponse, reviewer: AdmissionReviewer, path: string, maxBody: number): Promise<void> {
    const body = await readBody(req, maxBody);
    if (body === undefined) {
      // A body sent without a length (chunked) is refused once it passes the limit.
      sendText(res, 413, `the body exceeds ${maxBody} bytes`, true);
      return this.#refusals?.refused('body_too_large', path, { status: 413 });
    }
    const parsed = parseAdmissionReview(body);
    if ('error' in parsed) return sendText(res, 400, parsed.error);
    const { request } = parsed;
    let response: AdmissionResponse;
    try {
      response = await reviewer(request);
    } catch (err) {
      response = errorResponse(err);
      if (response.status?.code === 500) {
        this.#log('webhook: handler failed; denying', { path, uid: request.uid, operation: request.operation, namespace: request.namespace, name: request.name, error: response.status.message });
      }
    }
    const review = { apiVersion: ADMISSION_API_VERSION, kind: 'AdmissionReview', response: { uid: request.uid, ...response } };
    const json = JSON.stringify(review);
    res.writeHead(200, { 'content-type': 'application/json', 'content-length': Buffer.byteLength(json) });
    res.end(json);
  }
}

/** Fails start() with a clear word when the client CA is missing or empty (the reloader then follows it). */
async function checkClientCA(caFile: string): Promise<void> {
  const ca = await readFile(caFile, 'utf8').catch((err: Error) => {
    throw new Error(`the webhook's client CA ${caFile} cannot be read: ${err.message}`);
  });
  if (!ca.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`the webhook's client CA ${caFile} holds no PEM certificate`);
}

/** The body as text, or undefined when it is larger than `limit` (the rest is discarded). */
function readBody(req: IncomingMessage, limit: number): Promise<string | undefined> {
  return new Promise((resolve, reject) => {
    const chunks: Buffer[] = [];
    let size = 0;
    const onData = (chunk: Buffer): void => {
      size += chunk.length;
      if (size <= limit) return void chunks.push(chunk);
      // Drained rather than destroyed, so the 413 still reaches the client.
      req.off('data', onData);
      req.resume();
      resolve(undefined);
    };
    req.on('data', onData);
    req.on('end', () => resolve(Buffer.concat(chunks).toString('utf8')));
    req.on('error', reject);
  });
}

/** `unreadBody`: the connection may still carry bytes of a refused body, so it is not reused. */
function sendText(res: ServerResponse, code: number, message: string, unreadBody = false): void {
  res.writeHead(code, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(message), ...(unreadBody ? { connection: 'close' } : {}) });
  res.end(message);
}
