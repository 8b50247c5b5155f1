// The context one reconcile gets, made as it is read: a reconcile that logs nothing builds no child logger, and
// one that never reads its signal arms no timer. The signal is one AbortController whose timer and shutdown
// listener go when the reconcile ends. It used to be AbortSignal.any([shutdown, AbortSignal.timeout(60 s)])
// per reconcile, which left a 60 s timer, two signals and weak references behind each one: 10,000 reconciles
// held about 4 MiB for a minute, and those signals and a pino child (with its redaction) were a fifth of the
// CPU an update event cost (issue 24).
import type { Logger } from 'pino';
import type { ReconcileContext, Request } from './reconciler.ts';

export class ReconcileScope implements ReconcileContext {
  readonly retries: number;
  readonly #parentLog: Logger;
  readonly #request: Request;
  readonly #shutdown: AbortSignal;
  readonly #timeoutMs: number;
  readonly #startedAt = performance.now();
  #log: Logger | undefined;
  #abort: AbortController | undefined;
  #timer: NodeJS.Timeout | undefined;
  #onShutdown: (() => void) | undefined;
  #ended = false;
  #timerFired = false;

  constructor(log: Logger, request: Request, shutdown: AbortSignal, timeoutMs: number, retries: number) {
    this.#parentLog = log;
    this.#request = request;
    this.#shutdown = shutdown;
    this.#timeoutMs = timeoutMs;
    this.retries = retries;
  }

  /** Every line carries the request's key and an ID of this reconcile. */
  get log(): Logger {
    this.#log ??= this.#parentLog.child({ namespace: this.#request.namespace || undefined, name: this.#request.name, reconcileID: crypto.randomUUID().slice(0, 8) });
    return this.#log;
  }

  /** Aborts at shutdown (with its reason) or once the timeout has passed (a TimeoutError, as AbortSignal.timeout's). */
  get signal(): AbortSignal {
    if (!this.#abort) this.#arm((this.#abort = new AbortController()));
    return this.#abort.signal;
  }

  /** The reconcile has run past its timeout. */
  get timedOut(): boolean {
    // The timer may fire a fraction of a millisecond before the clock says so.
    return this.#timerFired || performance.now() - this.#startedAt >= this.#timeoutMs;
  }

  /** The reconcile is over: its timer and shutdown listener go (a signal handed out stays as it is). */
  end(): void {
    this.#ended = true;
    clearTimeout(this.#timer);
    if (this.#onShutdown) this.#shutdown.removeEventListener('abort', this.#onShutdown);
  }

  #arm(abort: AbortController): void {
    if (this.#shutdown.aborted) return abort.abort(this.#shutdown.reason);
    const left = this.#timeoutMs - (performance.now() - this.#startedAt);
    if (left <= 0) return abort.abort(timeoutReason());
    // Read after the reconcile ended (a promise it left behind): nothing to time any more.
    if (this.#ended) return;
    this.#timer = setTimeout(() => {
      this.#timerFired = true;
      abort.abort(timeoutReason());
    }, left);
    this.#timer.unref();
    this.#onShutdown = () => abort.abort(this.#shutdown.reason);
    this.#shutdown.addEventListener('abort', this.#onShutdown, { once: true });
  }
}

function timeoutReason(): DOMException {
  return new DOMException('The operation was aborted due to timeout', 'TimeoutError');
}
