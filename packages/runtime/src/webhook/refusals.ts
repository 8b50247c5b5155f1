// What a webhook server refuses before a handler sees it, counted and told: every refusal goes into
// `quorum_webhook_requests_refused_total{webhook, reason}` of the operator's registry, and a warn line per reason
// at most every 10 s carries how many there were since the previous one. A flood of refused reviews (anything
// that reaches the port can send them) must show on a dashboard, and must not become a flood of log lines.
import type { RuntimeMetrics } from '../manager/metrics.ts';
import type { WebhookLogger } from './cert-reloader.ts';

/** The counter every refusal goes into, labelled `webhook` (the server's name) and `reason` (a WebhookRefusal). */
export const WEBHOOK_REFUSED_METRIC = 'quorum_webhook_requests_refused_total';

/**
 * Why a request was refused before its handler saw it:
 * - `body_too_large`: 413, the body (declared or read) is larger than `maxBodyBytes`;
 * - `too_many_in_flight`: 429, `maxInFlight` reviews are being read or answered;
 * - `too_many_bytes_in_flight`: 429, the reviews in flight hold `maxInFlightBytes` of bodies;
 * - `client_certificate_name`: 403, a client certificate of the CA whose common name is not allowed;
 * - `tls_handshake`: the TLS handshake failed. With client certificates required this is mostly a caller without a
 *   certificate of the CA (the server cannot tell that from a caller that gave up: OpenSSL reports both as a reset).
 */
export type WebhookRefusal = 'body_too_large' | 'too_many_in_flight' | 'too_many_bytes_in_flight' | 'client_certificate_name' | 'tls_handshake';

/** Every WebhookRefusal, in the order the server checks. */
export const WEBHOOK_REFUSALS: readonly WebhookRefusal[] = ['body_too_large', 'too_many_in_flight', 'too_many_bytes_in_flight', 'client_certificate_name', 'tls_handshake'];

/** At most one warn line per reason per this long; the refusals in between are counted into the next. */
export const REFUSAL_WARN_INTERVAL_MS = 10_000;

/** Where refusals are counted: a manager's `metrics` (RuntimeMetrics), or anything with its `counter()`. */
export type RefusalMetrics = Pick<RuntimeMetrics, 'counter'>;

export interface RefusalTallyOptions {
  /** The `webhook` label and log field: which server of the operator refused. */
  webhook: string;
  log: WebhookLogger;
  metrics?: RefusalMetrics | undefined;
  onRefused?: ((reason: WebhookRefusal, path: string) => void) | undefined;
  /** Reasons whose series start at 0 (a rate over a series that appears only with its first refusal misses it). */
  reasons?: readonly WebhookRefusal[];
  intervalMs?: number;
  now?: () => number;
}

interface Spacing {
  lastWarnMs: number;
  held: number;
  fields: Record<string, unknown>;
  timer: NodeJS.Timeout | undefined;
}

export class RefusalTally {
  readonly #options: RefusalTallyOptions;
  readonly #counter: ReturnType<RefusalMetrics['counter']> | undefined;
  readonly #spacing = new Map<WebhookRefusal, Spacing>();

  constructor(options: RefusalTallyOptions) {
    this.#options = options;
    this.#counter = options.metrics?.counter(WEBHOOK_REFUSED_METRIC, 'Requests a webhook server refused before its handlers saw them, by server and reason', ['webhook', 'reason']);
    for (const reason of options.reasons ?? []) this.#counter?.inc({ webhook: options.webhook, reason }, 0);
  }

  /** Counts one refusal; `fields` (path, bounds, the TLS error) go into the warn line about it. */
  refused(reason: WebhookRefusal, path: string, fields: Record<string, unknown> = {}): void {
    this.#counter?.inc({ webhook: this.#options.webhook, reason });
    this.#options.onRefused?.(reason, path);
    const now = this.#now();
    const interval = this.#options.intervalMs ?? REFUSAL_WARN_INTERVAL_MS;
    let spacing = this.#spacing.get(reason);
    if (!spacing) this.#spacing.set(reason, (spacing = { lastWarnMs: Number.NEGATIVE_INFINITY, held: 0, fields: {}, timer: undefined }));
    spacing.fields = { ...(path ? { path } : {}), ...fields };
    if (!spacing.timer && now - spacing.lastWarnMs >= interval) return this.#warn(reason, spacing, 1);
    spacing.held += 1;
    // The last of a burst is told once its interval ends, not at the next refusal, which may never come.
    spacing.timer ??= setTimeout(() => this.#warn(reason, spacing, spacing.held), Math.max(0, spacing.lastWarnMs + interval - now)).unref();
  }

  /** Tells what is held back at once (a server that stops) and stops the timers. */
  flush(): void {
    for (const [reason, spacing] of this.#spacing) if (spacing.timer) this.#warn(reason, spacing, spacing.held);
  }

  #warn(reason: WebhookRefusal, spacing: Spacing, count: number): void {
    clearTimeout(spacing.timer);
    spacing.timer = undefined;
    spacing.held = 0;
    spacing.lastWarnMs = this.#now();
    const interval = this.#options.intervalMs ?? REFUSAL_WARN_INTERVAL_MS;
    this.#options.log(`${this.#options.webhook}: refused requests (${reason})`, { webhook: this.#options.webhook, reason, refused: count, withinSeconds: interval / 1000, ...spacing.fields }, 'warn');
  }

  #now(): number {
    return this.#options.now?.() ?? Date.now();
  }
}
