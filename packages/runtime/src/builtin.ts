// Built-in kinds typed field by field, for the kinds a controller most often owns: a Deployment and a Service.
// The shapes are @kubernetes/client-node's models (imported as types only: nothing of that package is loaded),
// with the runtime's metadata and with timestamps as the RFC 3339 strings the API server sends (the models
// type them as Date, which only client-node's own deserialiser produces). The open resource types
// (`Deployments`, `Services`: any fields) stay for code that reads a few fields loosely.
// The models' own files, not the package's index: its declarations reach `ws`, whose types a consumer
// without @types/ws (and without skipLibCheck) cannot resolve; the models' closure is self-contained.
import type { V1Deployment } from '@kubernetes/client-node/dist/gen/models/V1Deployment.js';
import type { V1Service } from '@kubernetes/client-node/dist/gen/models/V1Service.js';
import { resource } from './client/resources.ts';
import type { KubeObject } from './object.ts';

/** `T` as JSON carries it: every Date a string, at any depth. */
export type JsonOf<T> = T extends Date
  ? string
  : T extends readonly (infer E)[]
    ? JsonOf<E>[]
    : T extends object
      ? { [K in keyof T]: JsonOf<T[K]> }
      : T;

/** A built-in object as the API server sends and takes it: a client-node model `T` with the runtime's metadata. */
export type BuiltinObject<T> = KubeObject & JsonOf<Omit<T, 'apiVersion' | 'kind' | 'metadata'>>;

/** An apps/v1 Deployment: `spec.selector` and `spec.template` required, `status.readyReplicas` and the rest typed. */
export type Deployment = BuiltinObject<V1Deployment>;
/** A core/v1 Service. */
export type Service = BuiltinObject<V1Service>;

/** apps/v1 Deployments, typed (`Deployment`): what the client, informers and `owns()` give and take. */
export const AppsV1Deployments = resource<Deployment>('apps/v1', 'Deployment', 'deployments', true);
/** core/v1 Services, typed (`Service`). */
export const CoreV1Services = resource<Service>('v1', 'Service', 'services', true);
