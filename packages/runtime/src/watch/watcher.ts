// A watcher: an async iterator over one kind's objects that never dies silently. It lists (in pages), then
// watches from the list's resourceVersion with bookmarks; on 410 Gone it relists and reports the objects that
// vanished meanwhile as deleted; on any other failure it reconnects with jittered backoff and resumes from
// the last resourceVersion it saw; a watchdog drops connections that go silent.
import type { Client, ListOptions, RawWatchEvent } from '../client/client.ts';
import { ApiError, GoneError } from '../client/errors.ts';
import type { ResourceType } from '../client/resources.ts';
import { objectKeyString, type KubeObject } from '../object.ts';
import { Backoff, sleep, type BackoffOptions } from './backoff.ts';

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
  /** Page size of lists. */
  pageSize?: number;
  /** Reconnect when a watch connection delivers nothing (not even a bookmark) for this long. */
  watchdogMs?: number;
  backoff?: BackoffOptions;
  signal: AbortSignal;
  /** Told about every failure the watcher recovers from (for logs and metrics). */
  onError?: (err: unknown, action: 'relist' | 'reconnect') => void;
}

interface Known {
  resourceVersion: string;
  name: string;
  namespace?: string;
}

export async function* watcher<T extends KubeObject>(client: Client, type: ResourceType<T>, options: WatcherOptions): AsyncGenerator<WatcherEvent<T>> {
  const { signal } = options;
  const selectors = { namespace: options.namespace, labelSelector: options.labelSelector, fieldSelector: options.fieldSelector };
  const backoff = new Backoff(options.backoff);
  // What the consumer has been told exists, by key: enough to emit deletes after a relist.
  let known = new Map<string, Known>();
  let resourceVersion: string | undefined;

  while (!signal.aborted) {
    try {
      if (resourceVersion === undefined) {
        const listed = await listAll(client, type, { ...selectors, signal }, options.pageSize ?? 500);
        const next = new Map<string, Known>();
        for (const obj of listed.items) {
          const key = objectKeyString(obj);
          const rv = obj.metadata.resourceVersion ?? '';
          next.set(key, { resourceVersion: rv, name: obj.metadata.name ?? '', namespace: obj.metadata.namespace });
          const before = known.get(key);
          if (!before) yield { type: 'added', object: obj };
          else if (before.resourceVersion !== rv) yield { type: 'modified', object: obj };
        }
        for (const [key, gone] of known) {
          if (!next.has(key)) yield { type: 'deleted', object: { metadata: { name: gone.name, namespace: gone.namespace, resourceVersion: gone.resourceVersion } } as T };
        }
        known = next;
        resourceVersion = listed.resourceVersion;
        yield { type: 'synced', resourceVersion };
      }

      // Let the server end each watch after 5–10 minutes, as client-go does, so no connection lives forever.
      const timeoutSeconds = 300 + Math.floor(Math.random() * 300);
      const connection = new AbortController();
      const connectionSignal = AbortSignal.any([signal, connection.signal]);
      const watchdogMs = options.watchdogMs ?? 5 * 60_000;
      let silent: NodeJS.Timeout | undefined;
      let timedOut = false;
      const pet = (): void => {
        clearTimeout(silent);
        silent = setTimeout(() => {
          timedOut = true;
          connection.abort();
        }, watchdogMs);
      };
      pet();
      try {
        const events = client.watch(type, { ...selectors, resourceVersion, allowWatchBookmarks: true, timeoutSeconds, signal: connectionSignal, onActivity: pet });
        for await (const raw of events) {
          const event = raw as RawWatchEvent & { object: T };
          if (event.type === 'ERROR') throw statusError(event.object);
          const rv = event.object.metadata?.resourceVersion;
          if (event.type === 'BOOKMARK') {
            if (rv) resourceVersion = rv;
            continue;
          }
          const key = objectKeyString(event.object);
          if (event.type === 'DELETED') {
            known.delete(key);
            yield { type: 'deleted', object: event.object };
          } else {
            const existed = known.has(key);
            known.set(key, { resourceVersion: rv ?? '', name: event.object.metadata.name ?? '', namespace: event.object.metadata.namespace });
            yield { type: existed ? 'modified' : 'added', object: event.object };
          }
          if (rv) resourceVersion = rv;
          backoff.reset();
        }
      } catch (err) {
        if (signal.aborted) return;
        if (!timedOut) throw err;
        options.onError?.(new Error(`watch of ${type.kind} silent for ${watchdogMs} ms`), 'reconnect');
      } finally {
        clearTimeout(silent);
        connection.abort();
      }
    } catch (err) {
      if (signal.aborted) return;
      if (err instanceof GoneError) {
        // Our resourceVersion was compacted away: only a fresh list can tell what changed.
        options.onError?.(err, 'relist');
        resourceVersion = undefined;
        continue;
      }
      options.onError?.(err, 'reconnect');
      await sleep(backoff.next(), signal);
    }
  }
}

async function listAll<T extends KubeObject>(client: Client, type: ResourceType<T>, options: ListOptions, pageSize: number): Promise<{ items: T[]; resourceVersion: string }> {
  for (;;) {
    const items: T[] = [];
    let cont: string | undefined;
    let resourceVersion = '';
    try {
      do {
        const page = await client.list(type, { ...options, limit: pageSize, continue: cont });
        for (const item of page.items) items.push({ ...item, apiVersion: item.apiVersion ?? type.apiVersion, kind: item.kind ?? type.kind });
        cont = page.metadata.continue || undefined;
        resourceVersion = page.metadata.resourceVersion ?? '';
      } while (cont);
      return { items, resourceVersion };
    } catch (err) {
      // A continue token that expired mid-list: start the list over.
      if (!(err instanceof GoneError) || cont === undefined) throw err;
    }
  }
}

function statusError(status: unknown): ApiError {
  const s = (status ?? {}) as { code?: number; reason?: string; message?: string };
  const code = s.code ?? 500;
  return code === 410 ? new GoneError('WATCH', '', 410, s) : new ApiError('WATCH', '', code, s);
}
