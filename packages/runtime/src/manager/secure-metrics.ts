// /metrics over HTTPS for callers allowed to read it (metrics-auth.ts), on a port of its own: the probes stay
// plain HTTP for the kubelet, which sends no token. As controller-runtime's metrics server with SecureServing.
//
// The certificate is the files given (a Secret's tls.crt/tls.key, e.g. from cert-manager), followed as they
// rotate (webhook/cert-reloader.ts, as the webhook server's: a renewed Secret is served without a restart, and a
// half-written one is not taken), or else a self-signed one issued at start in a short-lived child process (webhook/certs.ts: the X.509 code's
// memory is not kept). Prometheus then scrapes with insecure_skip_verify: the bearer token, not the server's
// identity, is what protects the metrics, and a scraper that trusted a CA would need one it could not get.
import { createServer, type Server } from 'node:https';
import type { IncomingMessage, ServerResponse } from 'node:http';
import { hostname } from 'node:os';
import type { Registry } from 'prom-client';
import type { Logger } from 'pino';
import type { Client } from '../client/client.ts';
import type { RetryMetrics } from '../watch/retry-reporter.ts';
import { CertificateReloader, type KeyPair } from '../webhook/cert-reloader.ts';
import { generateCertificates } from '../webhook/certs.ts';
import { MetricsAuthorizer } from './metrics-auth.ts';

export interface SecureMetricsOptions {
  /** 0 picks a free port; SecureMetricsServer.port tells which. */
  port: number;
  /** Default: all interfaces. */
  host?: string;
  /** PEM certificate and key files; both or neither. Default: a self-signed certificate issued at start. */
  certFile?: string;
  keyFile?: string;
  /** How often the files are read again besides watching their directories. Default 10 s. */
  certPollIntervalMs?: number;
  /** DNS names of the self-signed certificate. Default `localhost` and the host name (the pod's name). */
  dnsNames?: string[];
  /** How long an allowed or refused token is remembered. Default 10 s. */
  cacheTtlMs?: number;
  /** Tokens remembered at most. Default 1,000. */
  cacheMaxEntries?: number;
  /** Requests served at once; more get 429 at once. Default 8 (a scrape renders the registry once). */
  maxInFlight?: number;
}

/** A scrape that takes longer is stuck: Prometheus' own timeout is at most its interval. */
const REQUEST_TIMEOUT_MS = 30_000;
/** A GET needs no body; the headers carry a token of a few KiB. */
const MAX_HEADER_BYTES = 16 * 1024;

export class SecureMetricsServer {
  readonly #registry: Registry;
  readonly #authorizer: MetricsAuthorizer;
  readonly #options: SecureMetricsOptions;
  readonly #log: Logger;
  readonly #retries: RetryMetrics | undefined;
  #server: Server | undefined;
  #reloader: CertificateReloader | undefined;
  #inFlight = 0;

  /** `retries`: failed reloads of the certificate files count in `runtime_retries_total{component="metrics/certificates"}`. */
  constructor(client: Client, registry: Registry, options: SecureMetricsOptions, log: Logger, retries?: RetryMetrics) {
    if ((options.certFile === undefined) !== (options.keyFile === undefined)) throw new Error('secure metrics: give certFile and keyFile together, or neither');
    this.#registry = registry;
    this.#options = options;
    this.#log = log;
    this.#retries = retries;
    this.#authorizer = new MetricsAuthorizer(client, { ttlMs: options.cacheTtlMs, maxEntries: options.cacheMaxEntries });
  }

  get port(): number {
    const address = this.#server?.address();
    return typeof address === 'object' && address ? address.port : 0;
  }

  async listen(): Promise<void> {
    const server = createServer({ ...(await this.#keyPair()), minVersion: 'TLSv1.2', maxHeaderSize: MAX_HEADER_BYTES }, (req, res) => void this.#serve(req, res));
    server.requestTimeout = REQUEST_TIMEOUT_MS;
    server.headersTimeout = 10_000;
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(this.#options.port, this.#options.host ?? '0.0.0.0', resolve);
    });
    this.#server = server;
    this.#reloader?.start();
  }

  async close(): Promise<void> {
    await this.#reloader?.stop();
    this.#reloader = undefined;
    const server = this.#server;
    if (!server) return;
    await new Promise<void>((resolve) => {
      server.close(() => resolve());
      server.closeAllConnections();
    });
  }

  async #keyPair(): Promise<KeyPair> {
    const { certFile, keyFile } = this.#options;
    if (certFile !== undefined && keyFile !== undefined) {
      this.#reloader = new CertificateReloader({
        name: 'metrics',
        certFile,
        keyFile,
        pollIntervalMs: this.#options.certPollIntervalMs ?? 10_000,
        metrics: this.#retries,
        logger: (msg, fields, level) => this.#log[level ?? 'info'](fields ?? {}, msg),
        // Reported only after listen() started the reloader, with the server in place.
        onChange: (pair) => {
          this.#server?.setSecureContext({ ...pair, minVersion: 'TLSv1.2' });
          this.#log.info({ certFile }, 'metrics: serving rotated certificate');
        },
      });
      return this.#reloader.load();
    }
    const issued = await generateCertificates({ dnsNames: this.#options.dnsNames ?? ['localhost', hostname()], ipAddresses: ['127.0.0.1'] });
    return { cert: `${issued.cert}${issued.caCert}`, key: issued.key };
  }

  async #serve(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const path = (req.url ?? '/').split('?')[0];
    if (path !== '/metrics') return void res.writeHead(404, { 'content-type': 'text/plain' }).end('not found\n');
    if (req.method !== 'GET') return void res.writeHead(405, { allow: 'GET', 'content-type': 'text/plain' }).end('method not allowed\n');
    if (this.#inFlight >= (this.#options.maxInFlight ?? 8)) return void res.writeHead(429, { 'retry-after': '1', 'content-type': 'text/plain' }).end('too many requests\n');
    this.#inFlight++;
    try {
      const decision = await this.#authorizer.decide(req.headers.authorization);
      if (decision === 'unauthenticated') return void res.writeHead(401, { 'www-authenticate': 'Bearer', 'content-type': 'text/plain' }).end('Unauthorized\n');
      if (decision === 'forbidden') return void res.writeHead(403, { 'content-type': 'text/plain' }).end('Forbidden: get on /metrics is not allowed\n');
      res.writeHead(200, { 'content-type': this.#registry.contentType }).end(await this.#registry.metrics());
    } catch (err) {
      this.#log.warn({ err }, 'metrics: could not review the caller');
      if (!res.headersSent) res.writeHead(500, { 'content-type': 'text/plain' }).end('could not review the caller\n');
    } finally {
      this.#inFlight--;
    }
  }
}
