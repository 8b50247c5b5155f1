// Declaring a controller, in the spirit of controller-runtime's builder:
//
//   manager.controller('etcdcluster')
//     .for(EtcdClusters, { predicates: [generationChanged] })
//     .owns(Pods)
//     .watches(Nodes, (node) => clustersOn(node))
//     .withOptions({ maxConcurrentReconciles: 4 })
//     .complete(reconcile);
//
// Every source only enqueues keys: the primary object's own key, the controlling owner's key for owned
// objects, or whatever a map function returns.
import type { Logger } from 'pino';
import type { Informer } from '../cache/informer.ts';
import { groupOf, type ResourceType } from '../client/resources.ts';
import { keyOf, type KubeObject, type ObjectKey } from '../object.ts';
import type { RuntimeMetrics } from '../manager/metrics.ts';
import { Controller, type ControllerOptions } from './controller.ts';
import type { ObjectEvent, Predicate } from './predicates.ts';
import type { Reconciler } from './reconciler.ts';

export interface InformerScope {
  namespace?: string;
  labelSelector?: string;
  fieldSelector?: string;
}

/** What the builder needs from its manager. */
export interface ControllerHost {
  informer<T extends KubeObject>(type: ResourceType<T>, scope?: InformerScope): Informer<T>;
  register(controller: Controller, informers: Informer<KubeObject>[]): void;
  readonly log: Logger;
  readonly metrics: RuntimeMetrics;
}

export interface SourceOptions<T extends KubeObject> extends InformerScope {
  predicates?: Predicate<T>[];
}

interface Source {
  informer: Informer<KubeObject>;
  toRequests: (obj: KubeObject) => ObjectKey[];
  predicates: Predicate[];
}

export class ControllerBuilder {
  readonly #host: ControllerHost;
  readonly #name: string;
  #primary?: ResourceType;
  readonly #sources: Source[] = [];
  #options: ControllerOptions = {};

  constructor(host: ControllerHost, name: string) {
    this.#host = host;
    this.#name = name;
  }

  /** The kind this controller reconciles: its own events enqueue its own key. */
  for<T extends KubeObject>(type: ResourceType<T>, options: SourceOptions<T> = {}): this {
    if (this.#primary) throw new Error(`controller ${this.#name}: for() may be called once`);
    this.#primary = type;
    return this.#source(type, options, (obj) => [keyOf(obj)]);
  }

  /** Objects this controller creates and controls: their events enqueue the controlling owner's key. */
  owns<T extends KubeObject>(type: ResourceType<T>, options: SourceOptions<T> = {}): this {
    const primary = this.#primary;
    if (!primary) throw new Error(`controller ${this.#name}: call for() before owns()`);
    const group = groupOf(primary.apiVersion);
    return this.#source(type, options, (obj) => {
      const owner = obj.metadata.ownerReferences?.find((o) => o.controller && o.kind === primary.kind && groupOf(o.apiVersion) === group);
      return owner ? [{ namespace: primary.namespaced ? (obj.metadata.namespace ?? '') : '', name: owner.name }] : [];
    });
  }

  /** Any other kind: `map` turns each of its objects into the keys to reconcile. */
  watches<T extends KubeObject>(type: ResourceType<T>, map: (obj: T) => ObjectKey[], options: SourceOptions<T> = {}): this {
    return this.#source(type, options, map);
  }

  withOptions(options: ControllerOptions): this {
    this.#options = { ...this.#options, ...options };
    return this;
  }

  complete(reconcile: Reconciler): Controller {
    if (!this.#primary) throw new Error(`controller ${this.#name}: for() is required`);
    const controller = new Controller(this.#name, reconcile, this.#host.log, this.#host.metrics, this.#options);
    for (const source of this.#sources) {
      const enqueue = (event: ObjectEvent): void => {
        if (!source.predicates.every((p) => p(event))) return;
        for (const request of source.toRequests(event.object)) controller.enqueue(request);
        // An owner change moves an object between parents: the old parent must hear of it too.
        if (event.type === 'update') for (const request of source.toRequests(event.oldObject)) controller.enqueue(request);
      };
      source.informer.addHandler({
        onAdd: (object) => enqueue({ type: 'create', object }),
        onUpdate: (oldObject, object) => enqueue({ type: 'update', object, oldObject }),
        onDelete: (object) => enqueue({ type: 'delete', object }),
      });
    }
    this.#host.register(controller, this.#sources.map((s) => s.informer));
    return controller;
  }

  #source<T extends KubeObject>(type: ResourceType<T>, options: SourceOptions<T>, toRequests: (obj: T) => ObjectKey[]): this {
    const { predicates = [], ...scope } = options;
    this.#sources.push({
      informer: this.#host.informer(type, scope) as unknown as Informer<KubeObject>,
      toRequests: toRequests as (obj: KubeObject) => ObjectKey[],
      predicates: predicates as Predicate[],
    });
    return this;
  }
}
