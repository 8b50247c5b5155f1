// A stand-in for the API server's list and watch, enough for the runtime's informers: objects by resource,
// a resourceVersion counter, and watch streams that deliver each change after it is made. Tests drive it
// with create/update/remove, as kubectl would, and can stop the stream to play a recorder that is down.
import { randomBytes } from 'node:crypto';
import type { RedactionKeySource } from '../../src/store/redaction-keys.ts';
import type { Client, KubeList, OpenObject, RawWatchEvent, ResourceType } from '@quorum/runtime';

type Listener = (event: RawWatchEvent) => void;

export class FakeApi {
  readonly #objects = new Map<string, Map<string, OpenObject>>();
  readonly #listeners = new Map<string, Set<{ namespace?: string; listener: Listener }>>();
  /** Every change, so a watch from a resourceVersion first replays what came after it, as the API server does. */
  readonly #history: { plural: string; revision: number; event: RawWatchEvent }[] = [];
  #revision = 100;

  /** The fake as the runtime's Client; informers call only list() and watch(). */
  asClient(): Client {
    return this as unknown as Client;
  }

  get revision(): number {
    return this.#revision;
  }

  create(type: ResourceType, obj: OpenObject): OpenObject {
    const stored = this.#stamp(type, obj);
    this.#emit(type, 'ADDED', stored);
    return stored;
  }

  update(type: ResourceType, obj: OpenObject): OpenObject {
    const stored = this.#stamp(type, obj);
    this.#emit(type, 'MODIFIED', stored);
    return stored;
  }

  remove(type: ResourceType, namespace: string, name: string): void {
    const objects = this.#bucket(type);
    const key = `${namespace}/${name}`;
    const last = objects.get(key);
    if (!last) throw new Error(`no ${type.kind} ${key}`);
    objects.delete(key);
    this.#revision++;
    this.#emit(type, 'DELETED', { ...last, metadata: { ...last.metadata, resourceVersion: String(this.#revision) } });
  }

  get(type: ResourceType, namespace: string, name: string): OpenObject | undefined {
    return this.#bucket(type).get(`${namespace}/${name}`);
  }

  /** Lists like the API server, with namespace and equality-based label selectors (`a=b,c=d`). */
  list<T>(type: ResourceType, options: { namespace?: string; labelSelector?: string } = {}): Promise<KubeList<T & OpenObject>> {
    const wanted = (options.labelSelector ?? '').split(',').filter(Boolean).map((pair) => pair.split('='));
    if (wanted.some((pair) => pair.length !== 2)) return Promise.reject(new Error(`the fake API reads only k=v selectors, not ${options.labelSelector}`));
    const items = [...this.#bucket(type).values()].filter(
      (o) => (!options.namespace || o.metadata.namespace === options.namespace) && wanted.every(([k, v]) => o.metadata.labels?.[k!] === v),
    );
    return Promise.resolve({ metadata: { resourceVersion: String(this.#revision) }, items: structuredClone(items) as (T & OpenObject)[] });
  }

  async *watch(type: ResourceType, options: { namespace?: string; resourceVersion: string; signal: AbortSignal; onOpen?: () => void }): AsyncGenerator<RawWatchEvent> {
    const from = Number(options.resourceVersion);
    const queue: RawWatchEvent[] = this.#history
      .filter((h) => h.plural === type.plural && h.revision > from && (!options.namespace || (h.event.object as OpenObject).metadata.namespace === options.namespace))
      .map((h) => structuredClone(h.event));
    let wake: (() => void) | undefined;
    const entry = {
      namespace: options.namespace,
      listener: (event: RawWatchEvent): void => {
        queue.push(event);
        wake?.();
      },
    };
    let listeners = this.#listeners.get(type.plural);
    if (!listeners) this.#listeners.set(type.plural, (listeners = new Set()));
    listeners.add(entry);
    options.onOpen?.();
    const aborted = new Promise<void>((resolve) => options.signal.addEventListener('abort', () => resolve(), { once: true }));
    try {
      while (!options.signal.aborted) {
        const event = queue.shift();
        if (event) {
          yield event;
          continue;
        }
        await Promise.race([new Promise<void>((resolve) => (wake = resolve)), aborted]);
      }
    } finally {
      listeners.delete(entry);
    }
  }

  /**
   * Forgets the history of events, as the API server's etcd compaction does: a test that measures the memory
   * of what watches this fake leaves the fake's own history out. Watches then resume only from a new list.
   */
  compact(): void {
    this.#history.length = 0;
  }

  #bucket(type: ResourceType): Map<string, OpenObject> {
    let objects = this.#objects.get(type.plural);
    if (!objects) this.#objects.set(type.plural, (objects = new Map<string, OpenObject>()));
    return objects;
  }

  #stamp(type: ResourceType, obj: OpenObject): OpenObject {
    this.#revision++;
    const stored = structuredClone({ ...obj, apiVersion: type.apiVersion, kind: type.kind, metadata: { ...obj.metadata, resourceVersion: String(this.#revision) } });
    this.#bucket(type).set(`${stored.metadata.namespace ?? ''}/${stored.metadata.name ?? ''}`, stored);
    return stored;
  }

  #emit(type: ResourceType, kind: RawWatchEvent['type'], object: OpenObject): void {
    this.#history.push({ plural: type.plural, revision: this.#revision, event: { type: kind, object: structuredClone(object) } });
    for (const { namespace, listener } of this.#listeners.get(type.plural) ?? []) {
      if (!namespace || object.metadata.namespace === namespace) listener({ type: kind, object: structuredClone(object) });
    }
  }
}

/**
 * Polls `condition` until it holds (or fails after `timeoutMs`), for what the informers deliver asynchronously.
 * The bound is generous (30 s) because it only matters when the signal never comes: under a loaded suite a
 * watch took more than 5 s to go live (hung-bucket.test.ts failed so in a warm run at 4f62301).
 */
export async function until<T>(what: string, condition: () => T | undefined | false | Promise<T | undefined | false>, timeoutMs = 30_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await condition();
    if (value !== undefined && value !== false) return value;
    if (Date.now() > deadline) throw new Error(`timed out waiting for ${what}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

/** Redaction keys kept in memory, as the recorder's Secret keeps them: one per store id, a legacy key adopted. */
export class MemoryRedactionKeys implements RedactionKeySource {
  readonly description = 'the test\'s memory';
  readonly kept = new Map<string, Uint8Array>();

  key(storeId: string, legacy: Uint8Array | undefined): Promise<Uint8Array> {
    const key = this.kept.get(storeId) ?? legacy ?? randomBytes(32);
    this.kept.set(storeId, key);
    return Promise.resolve(key);
  }
}

