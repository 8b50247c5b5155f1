// What a controller asks of its user: reconcile one key, given a signal that aborts on timeout or shutdown.
import type { Logger } from 'pino';
import type { ObjectKey } from '../object.ts';

export type Request = ObjectKey;

export interface Result {
  /** Reconcile this key again after this many milliseconds (resets its backoff). */
  requeueAfter?: number;
  /** Reconcile again with backoff, without it being an error. */
  requeue?: boolean;
}

export interface ReconcileContext {
  /** Aborts when the reconcile times out or the controller shuts down: pass it to every call. */
  signal: AbortSignal;
  /** A logger whose every line carries the controller and the request's key. */
  log: Logger;
  /** How many times this key has been retried since its last success. */
  retries: number;
}

export type Reconciler = (request: Request, context: ReconcileContext) => Promise<Result | void>;

/**
 * An error that retrying cannot fix (an invalid spec, say): recorded in logs and metrics and not requeued.
 * The key is reconciled again only when a new event for it arrives.
 */
export class TerminalError extends Error {
  constructor(message: string, options?: ErrorOptions) {
    super(message, options);
    this.name = 'TerminalError';
  }
}
