// Follows a certificate and key on disk so a server can swap them in without restarting. Watches the
// directories rather than the files: Secret volumes rotate by swapping a `..data` symlink and writers
// rename new files into place, and a watch on the old file's inode sees neither. The periodic poll covers
// filesystems where fs.watch reports nothing (network mounts, some container overlays).
import { watch, type FSWatcher } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { createSecureContext } from 'node:tls';
import { dirname } from 'node:path';

export interface KeyPair {
  cert: string;
  key: string;
}

export type WebhookLogger = (msg: string, fields?: Record<string, unknown>) => void;

export interface CertificateReloaderOptions {
  certFile: string;
  keyFile: string;
  /** Called with each new pair that forms a usable TLS context. */
  onChange: (pair: KeyPair) => void;
  logger: WebhookLogger;
  pollIntervalMs: number;
}

/** Coalesces the burst of events one rotation produces (several files, temp files, renames). */
const SETTLE_MS = 100;

export class CertificateReloader {
  readonly #options: CertificateReloaderOptions;
  #current: KeyPair | undefined;
  /** The last pair refused, so a broken pair is logged once rather than on every poll. */
  #refused = '';
  #watchers: FSWatcher[] = [];
  #poll: NodeJS.Timeout | undefined;
  #settle: NodeJS.Timeout | undefined;
  #checking: Promise<void> | undefined;
  #checkAgain = false;
  #stopped = false;

  constructor(options: CertificateReloaderOptions) {
    this.#options = options;
  }

  /** Reads the pair for the first time; throws if it is missing or unusable. */
  async load(): Promise<KeyPair> {
    const pair = await this.#read();
    createSecureContext(pair);
    this.#current = pair;
    return pair;
  }

  start(): void {
    for (const dir of new Set([dirname(this.#options.certFile), dirname(this.#options.keyFile)])) {
      try {
        const watcher = watch(dir, { persistent: false }, () => this.#scheduleCheck());
        watcher.on('error', (err) => {
          this.#options.logger('webhook: stopped watching certificate directory; polling only', { dir, error: err.message });
          watcher.close();
        });
        this.#watchers.push(watcher);
      } catch (err) {
        this.#options.logger('webhook: cannot watch certificate directory; polling only', { dir, error: (err as Error).message });
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
      this.#refuse(`read: ${(err as Error).message}`, 'webhook: cannot read certificate files; keeping the current ones', err);
      return;
    }
    if (this.#current && pair.cert === this.#current.cert && pair.key === this.#current.key) return;
    try {
      // Also catches a new certificate whose key has not been written yet: their keys do not match.
      createSecureContext(pair);
    } catch (err) {
      this.#refuse(pair.cert + pair.key, 'webhook: new certificate files are not usable yet; keeping the current ones', err);
      return;
    }
    this.#current = pair;
    this.#refused = '';
    this.#options.onChange(pair);
  }

  #refuse(signature: string, msg: string, err: unknown): void {
    if (signature === this.#refused) return;
    this.#refused = signature;
    this.#options.logger(msg, { certFile: this.#options.certFile, keyFile: this.#options.keyFile, error: err instanceof Error ? err.message : String(err) });
  }

  #read(): Promise<KeyPair> {
    return Promise.all([readFile(this.#options.certFile, 'utf8'), readFile(this.#options.keyFile, 'utf8')]).then(([cert, key]) => ({ cert, key }));
  }
}
