// A watcher: an async iterator over one kind's objects that never dies silently. It lists (in pages), then
// watches from the list's resourceVersion with bookmarks; on 410 Gone it relists and reports the objects that
// vanished meanwhile as deleted; on any other failure it reconnects with jittered backoff and resumes from
// the last resourceVersion it saw; a watchdog drops connections that go silent. Every retry has a voice: the
// optional RetryReporter hears each failure (with the server's own words) and each recovery, so a watch that
// cannot be re-established shows up in the log, in metrics and, through the informer, in /readyz.
import type { Client, ListOptions, RawWatchEvent } from '../client/client.ts';
import { ApiError, GoneError } from '../client/errors.ts';
import type { ResourceType } from '../client/resources.ts';
import type { KubeList, KubeObject } from '../object.ts';
import { sleep } from '../timers.ts';
import { Backoff, type BackoffOptions } from './backoff.ts';
import type { RetryReporter } from './retry-reporter.ts';

export type WatcherEvent<T extends KubeObject> =
  | { type: 'added' | 'modified'; object: T }
  /** For deletes the watcher inferred from a relist, `object` is the last version it knew (metadata only). */
  | { type: 'deleted'; object: T }
  /** A complete (re)list has been delivered: what was emitted so far is the whole current state. */
  | { type: 'synced'; resourceVersion: string };

export interface WatcherOptions {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
  /** Page size of lists (default LIST_PAGE_SIZE). */
  pageSize?: number;
  /** Reconnect when a watch connection delivers nothing (not even a bookmark) for this long. */
  watchdogMs?: number;
  backoff?: BackoffOptions;
  signal: AbortSignal;
  /** Told about every failure the watcher recovers from (for logs and metrics). */
  onError?: (err: unknown, action: 'relist' | 'reconnect') => void;
  /** Hears every failure, relist and recovery, and speaks for them (rate-limited logs, metrics, `failing()`). */
  reporter?: RetryReporter;
  /**
   * A watch connection counts as healthy, ending a run of failures, once it delivers an event or has stayed
   * open this long. Not at once on open: the API server accepts a watch and then reports 410 Gone in it.
   */
  healthyAfterMs?: number;
}

/**
 * What the consumer of a watcher holds of what it was told (an informer's store), read to tell a relist's changes
 * and deletes (watchInto). It must reflect every event the watcher yielded by the time the watcher is resumed.
 */
export interface ToldObjects {
  /** The resourceVersion of the object the consumer holds at `obj`'s namespace and name ('' if it has none), or undefined. */
  resourceVersion(obj: KubeObject): string | undefined;
  /** Every object the consumer holds. */
  list(): Iterable<KubeObject>;
}

/**
 * Objects per list page. Small enough that a page's parsed objects (with their managedFields) die in V8's young
 * generation, even at the operator images' 1 MiB semi-space, once the consumer has taken its copy: at 500 they
 * were promoted and left old space fragmented (10,000 ConfigMaps of 1 KiB, out of cluster: heap committed 33 →
 * 29 MiB at 100, 31.5 at 250). More requests cost little: 1,000 objects listed in 10 pages are still reconciled
 * in a fifth of controller-runtime's time (runtime.compare.startup_ratio; issue 24).
 */
const LIST_PAGE_SIZE = 100;

/** A watch the server ends this soon, having sent nothing, is a failure: reconnecting at once could spin. */
export const SHORT_WATCH_MS = 1_000;

/** The server ended a watch at once without sending anything (a proxy closing it, say): client-go's "very short watch". */
export class ShortWatchError extends Error {
  override name = 'ShortWatch';
}

/** What the consumer has been told exists, enough to tell a relist's changes and deletes. */
interface Known {
  get(obj: KubeObject): string | undefined;
  set(obj: KubeObject): void;
  delete(obj: KubeObject): void;
  /** Forgets every entry `listed` lacks and returns them (for deletes). */
  removeAbsent(listed: KnownVersions): KubeObject[];
}

/**
 * The watcher's own record: namespace ('' when cluster-scoped) → name → resourceVersion. Kept by namespace
 * then name, with the strings the objects already hold, so it costs no key string or record per object.
 */
class KnownVersions implements Known {
  readonly #byNamespace = new Map<string, Map<string, string>>();

  get(obj: KubeObject): string | undefined {
    return this.#byNamespace.get(obj.metadata.namespace ?? '')?.get(obj.metadata.name ?? '');
  }

  set(obj: KubeObject): void {
    const namespace = obj.metadata.namespace ?? '';
    let names = this.#byNamespace.get(namespace);
    if (!names) this.#byNamespace.set(namespace, (names = new Map<string, string>()));
    names.set(obj.metadata.name ?? '', obj.metadata.resourceVersion ?? '');
  }

  delete(obj: KubeObject): void {
    const namespace = obj.metadata.namespace ?? '';
    const names = this.#byNamespace.get(namespace);
    names?.delete(obj.metadata.name ?? '');
    if (names?.size === 0) this.#byNamespace.delete(namespace);
  }

  /** Removes every entry `listed` lacks and returns them, each as the metadata of the version last known. */
  removeAbsent(listed: KnownVersions): KubeObject[] {
    const gone: KubeObject[] = [];
    for (const [namespace, names] of this.#byNamespace) {
      for (const [name, resourceVersion] of names) {
        const stub = { metadata: { name, namespace: namespace || undefined, resourceVersion } };
        if (listed.get(stub) === undefined) gone.push(stub);
      }
    }
    for (const stub of gone) this.delete(stub);
    return gone;
  }
}

/** The consumer's record read through (ToldObjects): it applies each event itself, so nothing is written here. */
class ToldByConsumer implements Known {
  readonly #told: ToldObjects;
  constructor(told: ToldObjects) {
    this.#told = told;
  }
  get(obj: KubeObject): string | undefined {
    return this.#told.resourceVersion(obj);
  }
  set(): void {}
  delete(): void {}
  removeAbsent(listed: KnownVersions): KubeObject[] {
    const gone: KubeObject[] = [];
    for (const obj of this.#told.list()) if (listed.get(obj) === undefined) gone.push(obj);
    return gone;
  }
}

export function watcher<T extends KubeObject>(client: Client, type: ResourceType<T>, options: WatcherOptions): AsyncGenerator<WatcherEvent<T>> {
  return watchInto(client, type, options, undefined);
}

/**
 * The watcher, reading what its consumer holds (`told`, an informer's store) instead of keeping its own record of
 * what it told: namespace → name → resourceVersion, a second map beside the consumer's, 0.45 MiB of heap at
 * 10,000 objects (issue 24). Without `told` it keeps that record itself, as `watcher` does. Not exported from the
 * package: the contract (the consumer applies each event before it resumes the watcher) is the informer's.
 */
export async function* watchInto<T extends KubeObject>(client: Client, type: ResourceType<T>, options: WatcherOptions, told: ToldObjects | undefined): AsyncGenerator<WatcherEvent<T>> {
  const { signal } = options;
  const selectors = { namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  const backoff = new Backoff(options.backoff);
  const reporter = options.reporter;
  const healthyAfterMs = options.healthyAfterMs ?? SHORT_WATCH_MS;
  // When the last list completed. A 410 Gone long after it is routine (compaction passed our resourceVersion)
  // and relists at once; one within SHORT_WATCH_MS of it would relist in a hot loop (a server that keeps
  // refusing the version it just listed at), so it backs off like any other failure.
  let listedAt = -Infinity;
  const known: Known = told ? new ToldByConsumer(told) : new KnownVersions();
  let resourceVersion: string | undefined;

  while (!signal.aborted) {
    try {
      if (resourceVersion === undefined) {
        // Page by page, so a big list is never held whole, raw, beside the consumer's copy of it.
        resourceVersion = yield* listChanges(client, type, { ...selectors, signal }, options.pageSize ?? LIST_PAGE_SIZE, known, (err) =>
          reporter?.retried('ExpiredContinue', err, `${type.plural}: the list's continue token expired; listing again in one request`),
        );
        listedAt = performance.now();
        yield { type: 'synced', resourceVersion };
      }

      // Let the server end each watch after 5–10 minutes, as client-go does, so no connection lives forever.
      const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
      const connection = new AbortController();
      const connectionSignal = AbortSignal.any([signal, connection.signal]);
      const watchdogMs = options.watchdogMs ?? 5 * 60_000;
      let silent: NodeJS.Timeout | undefined;
      let healthy: NodeJS.Timeout | undefined;
      let timedOut = false;
      let delivered = false;
      const openedAt = performance.now();
      const pet = (): void => {
        clearTimeout(silent);
        silent = setTimeout(() => {
          timedOut = true;
          connection.abort();
        }, watchdogMs);
      };
      pet();
      try {
        const onOpen = (): void => {
          healthy = setTimeout(() => reporter?.succeeded(), healthyAfterMs);
        };
        const events = client.watch(type, { ...selectors, resourceVersion, allowWatchBookmarks: true, timeoutSeconds, signal: connectionSignal, onActivity: pet, onOpen });
        for await (const raw of events) {
          const event = raw as RawWatchEvent & { object: T };
          if (event.type === 'ERROR') throw statusError(event.object);
          delivered = true;
          reporter?.succeeded();
          const rv = event.object.metadata?.resourceVersion;
          if (event.type === 'BOOKMARK') {
            if (rv) resourceVersion = rv;
            continue;
          }
          if (event.type === 'DELETED') {
            known.delete(event.object);
            yield { type: 'deleted', object: event.object };
          } else {
            const existed = known.get(event.object) !== undefined;
            known.set(event.object);
            yield { type: existed ? 'modified' : 'added', object: event.object };
          }
          if (rv) resourceVersion = rv;
          backoff.reset();
        }
        if (timedOut) throw new Error('watchdog'); // reported below as a silent connection
        const lasted = performance.now() - openedAt;
        if (!delivered && lasted < SHORT_WATCH_MS && !signal.aborted) {
          throw new ShortWatchError(`watch of ${type.plural} ended by the server after ${Math.round(lasted)} ms with no events`);
        }
        // The server ended the watch at its timeout, as asked: a healthy connection.
        reporter?.succeeded();
      } catch (err) {
        if (signal.aborted) return;
        if (!timedOut) throw err;
        const silentError = new Error(`watch of ${type.plural} delivered nothing (not even a bookmark) for ${watchdogMs} ms; reconnecting`);
        options.onError?.(silentError, 'reconnect');
        reporter?.failed(silentError, { reason: 'Silent', retryInMs: 0 });
      } finally {
        clearTimeout(silent);
        clearTimeout(healthy);
        connection.abort();
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof GoneError) {
        // Our resourceVersion was compacted away: only a fresh list can tell what changed.
        options.onError?.(err, 'relist');
        const fromWatch = resourceVersion !== undefined;
        resourceVersion = undefined;
        if (fromWatch && performance.now() - listedAt >= SHORT_WATCH_MS) {
          reporter?.retried('Gone', err, `${type.plural}: resourceVersion too old; relisting`);
          continue;
        }
      } else {
        options.onError?.(err, 'reconnect');
      }
      const delay = backoff.next();
      reporter?.failed(err, { retryInMs: delay });
      await sleep(delay, signal);
    }
  }
}

/**
 * Lists in pages, telling each listed object as it arrives (added, or modified when its resourceVersion is not
 * the one `known` has) and, once the list is whole, every object `known` has that it lacks as deleted; returns
 * the list's resourceVersion. When a continue token expires mid-list (the list took longer than compaction
 * allows), lists once more in a single request, as client-go's pager does: starting the paged list over could
 * expire the same way every time, forever. `known` is kept current as objects are told, so a list that fails
 * half way leaves it saying what the consumer heard.
 */
async function* listChanges<T extends KubeObject>(
  client: Client,
  type: ResourceType<T>,
  options: ListOptions,
  pageSize: number,
  known: Known,
  onExpired: (err: GoneError) => void,
): AsyncGenerator<WatcherEvent<T>, string> {
  let listed = new KnownVersions();
  let cont: string | undefined;
  let resourceVersion = '';
  let whole = false;
  for (;;) {
    let page: KubeList<T>;
    try {
      page = await client.list(type, whole ? options : { ...options, limit: pageSize, continue: cont });
    } catch (err) {
      if (whole || !(err instanceof GoneError) || cont === undefined) throw err;
      onExpired(err);
      whole = true;
      listed = new KnownVersions();
      continue;
    }
    cont = whole ? undefined : page.metadata.continue || undefined;
    resourceVersion = page.metadata.resourceVersion ?? '';
    for (const item of page.items) {
      const obj = { ...item, apiVersion: item.apiVersion ?? type.apiVersion, kind: item.kind ?? type.kind };
      const before = known.get(obj);
      listed.set(obj);
      known.set(obj);
      if (before === undefined) yield { type: 'added', object: obj };
      else if (before !== (obj.metadata.resourceVersion ?? '')) yield { type: 'modified', object: obj };
    }
    if (!cont) break;
  }
  for (const gone of known.removeAbsent(listed)) yield { type: 'deleted', object: gone as T };
  return resourceVersion;
}

function statusError(status: unknown): ApiError {
  const s = (status ?? {}) as { code?: number; reason?: string; message?: string };
  const code = s.code ?? 500;
  return code === 410 ? new GoneError('WATCH', '', 410, s) : new ApiError('WATCH', '', code, s);
}
