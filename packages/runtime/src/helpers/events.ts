// An events.k8s.io/v1 recorder with the aggregation of client-go's events library: a repeated event becomes
// one Event whose `series` counts the repeats, and series updates are spaced out per event, so a controller
// stuck in a hot loop costs the API server one write per event every few seconds, not one per occurrence.
// Events are best effort: nothing here throws at the caller; failures go to `onError` and, given `log` or
// `metrics`, to a RetryReporter (component `events`): a warn line with the API server's words at most every
// 30 s while writes fail, an info line when they succeed again, and `runtime_retries_total`. A failed series
// update is retried with the next occurrence (at most every 5 s per Event, for as long as the series window);
// a failed create is not retried: the next occurrence creates the Event afresh.
import { randomBytes } from 'node:crypto';
import type { Client } from '../client/client.ts';
import { isNotFound } from '../client/errors.ts';
import { Events, resource } from '../client/resources.ts';
import type { KubeObject } from '../object.ts';
import { RetryReporter, type RetryLog, type RetryMetrics } from '../watch/retry-reporter.ts';

/** The client methods the recorder uses, so tests can pass a fake. */
export type EventClient = Pick<Client, 'create' | 'mergePatch'>;

export interface ObjectReference {
  apiVersion?: string;
  kind?: string;
  name?: string;
  namespace?: string;
  uid?: string;
  resourceVersion?: string;
}

export interface EventSeries {
  /** Occurrences so far, the first included (the API requires at least 2). */
  count: number;
  lastObservedTime: string;
}

/** An events.k8s.io/v1 Event, as the recorder writes it. */
export type KubeEvent = KubeObject & {
  eventTime: string;
  reportingController: string;
  reportingInstance: string;
  type: 'Normal' | 'Warning';
  reason: string;
  action: string;
  note: string;
  regarding: ObjectReference;
  related?: ObjectReference;
  series?: EventSeries;
};

export interface EventInput {
  type: 'Normal' | 'Warning';
  /** Why the action was taken, UpperCamelCase (`ScaledUp`); at most 128 characters. */
  reason: string;
  /** What was done or failed (`Scale`); at most 128 characters. */
  action: string;
  /** Human-readable detail; cut to the API's 1 KiB limit. */
  note: string;
  related?: KubeObject;
}

export interface EventRecorderOptions {
  /** reportingController, e.g. `quorum.dev/etcd-operator`. */
  controller: string;
  /** reportingInstance, e.g. the pod name; at most 128 characters. */
  instance: string;
  /** Called with every failed write. Without it (and without `log`) the first failure is reported as a process warning. */
  onError?: (error: unknown) => void;
  /** Voices failed writes: warn at most every 30 s while they fail, info when they work again. */
  log?: RetryLog;
  /** Counts failed writes as `runtime_retries_total{component="events"}`. */
  metrics?: RetryMetrics;
  /** Injectable clock for tests. */
  now?: () => Date;
}

/** Repeats of an event this long after its last occurrence start a new Event rather than extend the series. */
export const EVENT_SERIES_WINDOW_MS = 10 * 60_000;
/** Minimum spacing of series updates to one Event; repeats in between are counted in memory. */
export const EVENT_SERIES_UPDATE_INTERVAL_MS = 5_000;
// Events, typed with what the recorder writes.
const EventResource = resource<KubeEvent>(Events.apiVersion, Events.kind, Events.plural, Events.namespaced);
const NOTE_LIMIT_BYTES = 1024;
const MAX_NAME_LENGTH = 253;
// Bounds memory when events are keyed by many distinct objects or notes; the least recently seen go first.
const MAX_TRACKED_EVENTS = 4096;
const SWEEP_INTERVAL_MS = 60_000;

/** One Event on the server and the repeats of it not yet written to its series. */
interface Tracked {
  readonly key: string;
  readonly namespace: string;
  readonly name: string;
  /** Occurrences the server has recorded: 1 once created, then the last series count written. */
  written: number;
  pending: number;
  lastObserved: Date;
  lastWriteMs: number;
  /** The write under way, if any; writes to one Event never overlap, so a patch never precedes the create. */
  writing: Promise<void> | undefined;
}

export class EventRecorder {
  readonly #client: EventClient;
  readonly #controller: string;
  readonly #instance: string;
  readonly #onError: (error: unknown) => void;
  readonly #reporter: RetryReporter | undefined;
  readonly #now: () => Date;
  /** By event key, least recently observed first. */
  readonly #tracked = new Map<string, Tracked>();
  readonly #pending = new Set<Tracked>();
  readonly #inFlight = new Set<Promise<void>>();
  #lastSweepMs = 0;

  constructor(client: EventClient, options: EventRecorderOptions) {
    if (!options.controller) throw new Error('EventRecorder: options.controller (reportingController) is required');
    if (!options.instance) throw new Error('EventRecorder: options.instance (reportingInstance) is required');
    this.#client = client;
    this.#controller = options.controller;
    this.#instance = options.instance;
    this.#now = options.now ?? (() => new Date());
    this.#onError = options.onError ?? (options.log ? () => undefined : warnOnce());
    this.#reporter = options.log || options.metrics ? new RetryReporter({ component: 'events', log: options.log, metrics: options.metrics, now: () => this.#now().getTime() }) : undefined;
  }

  /** Records an occurrence; returns at once, writing in the background. Never throws. */
  record(regarding: KubeObject, input: EventInput): void {
    try {
      const now = this.#now();
      const nowMs = now.getTime();
      this.#sweep(nowMs);
      const note = truncateNote(input.note);
      const key = JSON.stringify([identity(regarding), input.type, input.reason, input.action, note]);
      const tracked = this.#tracked.get(key);
      if (tracked && nowMs - tracked.lastObserved.getTime() < EVENT_SERIES_WINDOW_MS) {
        tracked.pending++;
        tracked.lastObserved = now;
        this.#pending.add(tracked);
        this.#tracked.delete(key);
        this.#tracked.set(key, tracked);
      } else {
        this.#create(key, regarding, { ...input, note }, now);
      }
      this.#writeDueSeries(nowMs);
    } catch (error) {
      this.#report(error);
    }
  }

  /** Waits for writes under way, then writes every pending series count regardless of spacing. Never rejects. */
  async flush(): Promise<void> {
    await this.#settle();
    for (const tracked of [...this.#pending]) if (!tracked.writing && tracked.written > 0) this.#writeSeries(tracked);
    await this.#settle();
  }

  #create(key: string, regarding: KubeObject, input: EventInput, now: Date): void {
    const namespace = regarding.metadata.namespace || 'default';
    const tracked: Tracked = { key, namespace, name: eventName(regarding), written: 0, pending: 0, lastObserved: now, lastWriteMs: now.getTime(), writing: undefined };
    this.#tracked.delete(key);
    this.#tracked.set(key, tracked);
    this.#evictOverflow();
    const event: KubeEvent = {
      apiVersion: Events.apiVersion,
      kind: Events.kind,
      metadata: { name: tracked.name, namespace },
      eventTime: microTime(now),
      reportingController: this.#controller,
      reportingInstance: this.#instance,
      type: input.type,
      reason: input.reason,
      action: input.action,
      note: input.note,
      regarding: reference(regarding),
    };
    if (input.related) event.related = reference(input.related);
    this.#track(
      tracked,
      () => this.#client.create(EventResource, event),
      () => (tracked.written = 1),
      (error) => {
        // Forget it, so the next occurrence creates the Event afresh instead of patching one that is not there.
        this.#forget(tracked);
        this.#report(error);
      },
    );
  }

  #writeSeries(tracked: Tracked): void {
    const sending = tracked.pending;
    tracked.pending = 0;
    this.#pending.delete(tracked);
    tracked.lastWriteMs = this.#now().getTime();
    const count = tracked.written + sending;
    const series: EventSeries = { count, lastObservedTime: microTime(tracked.lastObserved) };
    this.#track(
      tracked,
      () => this.#client.mergePatch(EventResource, { namespace: tracked.namespace, name: tracked.name }, { series }),
      () => (tracked.written = count),
      (error) => {
        if (isNotFound(error)) {
          // Deleted, or expired by the API server's event TTL: the next occurrence starts a new Event.
          this.#forget(tracked);
        } else {
          tracked.pending += sending;
          this.#pending.add(tracked);
        }
        this.#report(error);
      },
    );
  }

  #track(tracked: Tracked, write: () => Promise<unknown>, onSuccess: () => void, onFailure: (error: unknown) => void): void {
    const done: Promise<void> = attempt(write)
      .then(
        () => {
          this.#reporter?.succeeded();
          onSuccess();
        },
        (error: unknown) => {
          this.#reporter?.failed(error);
          onFailure(error);
        },
      )
      .catch((error: unknown) => this.#report(error))
      .finally(() => {
        tracked.writing = undefined;
        this.#inFlight.delete(done);
      });
    tracked.writing = done;
    this.#inFlight.add(done);
  }

  // Lazily, on each record: there is no timer to keep alive or stop.
  #writeDueSeries(nowMs: number): void {
    for (const tracked of [...this.#pending]) {
      if (!tracked.writing && tracked.written > 0 && nowMs - tracked.lastWriteMs >= EVENT_SERIES_UPDATE_INTERVAL_MS) this.#writeSeries(tracked);
    }
  }

  #sweep(nowMs: number): void {
    if (nowMs - this.#lastSweepMs < SWEEP_INTERVAL_MS) return;
    this.#lastSweepMs = nowMs;
    for (const tracked of [...this.#tracked.values()]) {
      if (nowMs - tracked.lastObserved.getTime() < EVENT_SERIES_WINDOW_MS) break; // the rest were observed later
      if (!tracked.writing && tracked.pending === 0) this.#tracked.delete(tracked.key);
    }
  }

  #evictOverflow(): void {
    for (const tracked of this.#tracked.values()) {
      if (this.#tracked.size <= MAX_TRACKED_EVENTS) return;
      // Its pending count, if any, is still written: #pending holds it until then.
      this.#tracked.delete(tracked.key);
    }
  }

  #forget(tracked: Tracked): void {
    if (this.#tracked.get(tracked.key) === tracked) this.#tracked.delete(tracked.key);
    this.#pending.delete(tracked);
  }

  async #settle(): Promise<void> {
    while (this.#inFlight.size > 0) await Promise.all(this.#inFlight);
  }

  #report(error: unknown): void {
    try {
      this.#onError(error);
    } catch {
      // A failing error handler must not turn a best-effort event into a crash.
    }
  }
}

/** MicroTime, as the API requires for eventTime: `2026-01-01T00:00:00.000000Z`. */
export function microTime(date: Date): string {
  return `${date.toISOString().slice(0, 23)}000Z`;
}

function reference(obj: KubeObject): ObjectReference {
  const { name, namespace, uid, resourceVersion } = obj.metadata;
  const ref: ObjectReference = {};
  // Only fields that are set: the API rejects none of them being empty, but stray empty strings read badly.
  if (obj.apiVersion) ref.apiVersion = obj.apiVersion;
  if (obj.kind) ref.kind = obj.kind;
  if (name) ref.name = name;
  if (namespace) ref.namespace = namespace;
  if (uid) ref.uid = uid;
  if (resourceVersion) ref.resourceVersion = resourceVersion;
  return ref;
}

/** What makes two occurrences about the same object: its uid, or where it is when it has none yet. */
function identity(obj: KubeObject): string {
  return obj.metadata.uid ?? `${obj.apiVersion ?? ''}/${obj.kind ?? ''}/${obj.metadata.namespace ?? ''}/${obj.metadata.name ?? ''}`;
}

/** `<regarding name>.<16 hex>`, the regarding name cut so the whole stays a valid DNS subdomain. */
function eventName(regarding: KubeObject): string {
  const suffix = randomBytes(8).toString('hex');
  const base = (regarding.metadata.name || regarding.kind?.toLowerCase() || 'object').slice(0, MAX_NAME_LENGTH - suffix.length - 1).replace(/[-.]+$/, '');
  return `${base}.${suffix}`;
}

function truncateNote(note: string): string {
  if (Buffer.byteLength(note) <= NOTE_LIMIT_BYTES) return note;
  const marker = '...';
  // encodeInto writes whole characters only, so the cut never splits a UTF-8 sequence or surrogate pair.
  const { read } = new TextEncoder().encodeInto(note, new Uint8Array(NOTE_LIMIT_BYTES - marker.length));
  return note.slice(0, read) + marker;
}

function attempt(write: () => Promise<unknown>): Promise<unknown> {
  try {
    return write();
  } catch (error) {
    return Promise.reject(error instanceof Error ? error : new Error(String(error)));
  }
}

function warnOnce(): (error: unknown) => void {
  let warned = false;
  return (error) => {
    if (warned) return;
    warned = true;
    process.emitWarning(`recording a Kubernetes event failed (later failures are not reported; pass onError to see them): ${String(error)}`);
  };
}
