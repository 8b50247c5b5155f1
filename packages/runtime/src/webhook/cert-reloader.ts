// Follows a certificate and key on disk so a server can swap them in without restarting. Watches the
// directories rather than the files: Secret volumes rotate by swapping a `..data` symlink and writers
// rename new files into place, and a watch on the old file's inode sees neither. The periodic poll covers
// filesystems where fs.watch reports nothing (network mounts, some container overlays). The poll is a retry
// loop: while the files cannot be read or do not form a usable pair, the current pair keeps serving and the
// reloader says so (warn at most every 30 s, with the error and for how long; info when a check succeeds
// again; `runtime_retries_total{component="webhook/certificates"}` when given metrics). A CA file beside the pair
// (the CA client certificates must be signed by) is followed the same way, so it too changes without a restart.
// Used by the webhook server (its certificate and its client CA) and the secure metrics server (its certificate).
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { dirname } from 'node:path';
import { RetryReporter, retryReason, type RetryLog, type RetryMetrics } from '../watch/retry-reporter.ts';

export interface KeyPair {
  cert: string;
  key: string;
  /** The CA file's PEM, when the reloader follows one. */
  ca?: string;
}

export type WebhookLogLevel = 'debug' | 'info' | 'warn' | 'error';

/** A log line; `level` is told for lines that are not plain information (loggers written before it may ignore it). */
export type WebhookLogger = (msg: string, fields?: Record<string, unknown>, level?: WebhookLogLevel) => void;

/**
 * A RetryLog over a WebhookLogger. Debug lines are dropped: a logger that ignores levels would print each
 * of them at info, every poll, which is the noise the reporter's spacing exists to avoid.
 */
export function webhookRetryLog(logger: WebhookLogger): RetryLog {
  return { debug: () => undefined, info: (fields, msg) => logger(msg, fields, 'info'), warn: (fields, msg) => logger(msg, fields, 'warn') };
}

export interface CertificateReloaderOptions {
  certFile: string;
  keyFile: string;
  /** A CA (PEM) to follow with the pair, e.g. the one client certificates must be signed by. */
  caFile?: string | undefined;
  /** Called with each new pair (and CA) that forms a usable TLS context. */
  onChange: (pair: KeyPair) => void;
  logger: WebhookLogger;
  pollIntervalMs: number;
  metrics?: RetryMetrics | undefined;
  /** The retry component, and the prefix of log lines (`<name>: …`). Default `webhook`: `webhook/certificates`. */
  name?: string;
  /** Injectable clock for the reporter (tests). */
  now?: () => number;
}

/** Coalesces the burst of events one rotation produces (several files, temp files, renames). */
const SETTLE_MS = 100;

export class CertificateReloader {
  readonly #options: CertificateReloaderOptions;
  #current: KeyPair | undefined;
  readonly #reporter: RetryReporter;
  #watchers: FSWatcher[] = [];
  #poll: NodeJS.Timeout | undefined;
  #settle: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  #checkAgain = false;
  #stopped = false;

  constructor(options: CertificateReloaderOptions) {
    this.#options = options;
    this.#reporter = new RetryReporter({
      component: `${options.name ?? 'webhook'}/certificates`,
      log: webhookRetryLog(options.logger),
      metrics: options.metrics,
      fields: { certFile: options.certFile, keyFile: options.keyFile, ...(options.caFile ? { caFile: options.caFile } : {}) },
      now: options.now,
    });
  }

  /** Failed checks under way (the files unreadable or unusable), or undefined while the files are fine. */
  failing(): ReturnType<RetryReporter['failing']> {
    return this.#reporter.failing();
  }

  /** Reads the pair for the first time; throws if it is missing or unusable. */
  async load(): Promise<KeyPair> {
    const pair = await this.#read();
    usable(pair, this.#options.caFile);
    this.#current = pair;
    return pair;
  }

  start(): void {
    const files = [this.#options.certFile, this.#options.keyFile, ...(this.#options.caFile ? [this.#options.caFile] : [])];
    for (const dir of new Set(files.map((f) => dirname(f)))) {
      try {
        const watcher = watch(dir, { persistent: false }, () => this.#scheduleCheck());
        watcher.on('error', (err) => {
          this.#options.logger(`${this.#options.name ?? 'webhook'}: stopped watching certificate directory; polling only`, { dir, error: err.message }, 'warn');
          watcher.close();
        });
        this.#watchers.push(watcher);
      } catch (err) {
        this.#options.logger(`${this.#options.name ?? 'webhook'}: cannot watch certificate directory; polling only`, { dir, error: (err as Error).message }, 'warn');
      }
    }
    this.#poll = setInterval(() => void this.check(), this.#options.pollIntervalMs).unref();
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    for (const watcher of this.#watchers) watcher.close();
    this.#watchers = [];
    clearInterval(this.#poll);
    clearTimeout(this.#settle);
    await this.#checking;
  }

  /** Reads the files and hands a changed, usable pair to onChange. Concurrent calls share one read. */
  async check(): Promise<void> {
    if (this.#stopped) return;
    if (this.#checking) {
      this.#checkAgain = true;
      return this.#checking;
    }
    this.#checking = this.#checkOnce().finally(() => {
      this.#checking = undefined;
      if (this.#checkAgain) {
        this.#checkAgain = false;
        void this.check();
      }
    });
    return this.#checking;
  }

  #scheduleCheck(): void {
    clearTimeout(this.#settle);
    this.#settle = setTimeout(() => void this.check(), SETTLE_MS).unref();
  }

  async #checkOnce(): Promise<void> {
    let pair: KeyPair;
    try {
      pair = await this.#read();
    } catch (err) {
      // Mid-rotation a file can be briefly missing; the next event or poll will see the finished state.
      this.#refuse('cannot read certificate files; keeping the current ones', err);
      return;
    }
    if (this.#current && pair.cert === this.#current.cert && pair.key === this.#current.key && pair.ca === this.#current.ca) return this.#reporter.succeeded();
    try {
      // Also catches a new certificate whose key has not been written yet: their keys do not match.
      usable(pair, this.#options.caFile);
    } catch (err) {
      this.#refuse('new certificate files are not usable yet; keeping the current ones', err);
      return;
    }
    this.#current = pair;
    this.#reporter.succeeded();
    this.#options.onChange(pair);
  }

  #refuse(what: string, err: unknown): void {
    this.#reporter.failed(new Error(`${what}: ${err instanceof Error ? err.message : String(err)}`), { reason: retryReason(err), retryInMs: this.#options.pollIntervalMs });
  }

  #read(): Promise<KeyPair> {
    const { certFile, keyFile, caFile } = this.#options;
    return Promise.all([readFile(certFile, 'utf8'), readFile(keyFile, 'utf8'), caFile ? readFile(caFile, 'utf8') : undefined]).then(([cert, key, ca]) => ({ cert, key, ...(ca === undefined ? {} : { ca }) }));
  }
}

/** Throws unless the files form a TLS context: a certificate and its key, and a certificate in the CA file. */
function usable(pair: KeyPair, caFile: string | undefined): void {
  // createSecureContext takes an empty certificate or key (a file caught mid-write) as none given, and the server
  // would then fail every handshake; an empty CA would make it trust nothing, refusing every caller.
  if (!pair.cert.includes('-----BEGIN CERTIFICATE-----')) throw new Error('the certificate file holds no PEM certificate');
  if (!pair.key.includes('PRIVATE KEY-----')) throw new Error('the key file holds no PEM private key');
  if (caFile && !pair.ca?.includes('-----BEGIN CERTIFICATE-----')) throw new Error(`${caFile} holds no PEM certificate`);
  createSecureContext(pair);
}
