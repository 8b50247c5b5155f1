// The built-in kinds' objects, typed field by field: @kubernetes/client-node's models (imported as types only:
// nothing of that package is loaded), with the runtime's metadata and with timestamps as the RFC 3339 strings the
// API server sends (the models type them as Date, which only client-node's own deserialiser produces). The
// resource types built on them (`Pods`, `Deployments`, …) are in client/resources.ts.
// The models' own files, not the package's index: its declarations reach `ws`, whose types a consumer
// without @types/ws (and without skipLibCheck) cannot resolve; the models' closure is self-contained.
import type { EventsV1Event } from '@kubernetes/client-node/dist/gen/models/EventsV1Event.js';
import type { V1ClusterRole } from '@kubernetes/client-node/dist/gen/models/V1ClusterRole.js';
import type { V1ClusterRoleBinding } from '@kubernetes/client-node/dist/gen/models/V1ClusterRoleBinding.js';
import type { V1ConfigMap } from '@kubernetes/client-node/dist/gen/models/V1ConfigMap.js';
import type { V1Deployment } from '@kubernetes/client-node/dist/gen/models/V1Deployment.js';
import type { V1Endpoints } from '@kubernetes/client-node/dist/gen/models/V1Endpoints.js';
import type { V1Job } from '@kubernetes/client-node/dist/gen/models/V1Job.js';
import type { V1Lease } from '@kubernetes/client-node/dist/gen/models/V1Lease.js';
import type { V1MutatingWebhookConfiguration } from '@kubernetes/client-node/dist/gen/models/V1MutatingWebhookConfiguration.js';
import type { V1Namespace } from '@kubernetes/client-node/dist/gen/models/V1Namespace.js';
import type { V1NetworkPolicy } from '@kubernetes/client-node/dist/gen/models/V1NetworkPolicy.js';
import type { V1NetworkPolicyIngressRule } from '@kubernetes/client-node/dist/gen/models/V1NetworkPolicyIngressRule.js';
import type { V1NetworkPolicySpec } from '@kubernetes/client-node/dist/gen/models/V1NetworkPolicySpec.js';
import type { V1Node } from '@kubernetes/client-node/dist/gen/models/V1Node.js';
import type { V1PersistentVolume } from '@kubernetes/client-node/dist/gen/models/V1PersistentVolume.js';
import type { V1PersistentVolumeClaim } from '@kubernetes/client-node/dist/gen/models/V1PersistentVolumeClaim.js';
import type { V1Pod } from '@kubernetes/client-node/dist/gen/models/V1Pod.js';
import type { V1PodDisruptionBudget } from '@kubernetes/client-node/dist/gen/models/V1PodDisruptionBudget.js';
import type { V1ReplicaSet } from '@kubernetes/client-node/dist/gen/models/V1ReplicaSet.js';
import type { V1Role } from '@kubernetes/client-node/dist/gen/models/V1Role.js';
import type { V1RoleBinding } from '@kubernetes/client-node/dist/gen/models/V1RoleBinding.js';
import type { V1Secret } from '@kubernetes/client-node/dist/gen/models/V1Secret.js';
import type { V1Service } from '@kubernetes/client-node/dist/gen/models/V1Service.js';
import type { V1ServiceAccount } from '@kubernetes/client-node/dist/gen/models/V1ServiceAccount.js';
import type { V1StatefulSet } from '@kubernetes/client-node/dist/gen/models/V1StatefulSet.js';
import type { V1SubjectAccessReview } from '@kubernetes/client-node/dist/gen/models/V1SubjectAccessReview.js';
import type { V1ValidatingWebhookConfiguration } from '@kubernetes/client-node/dist/gen/models/V1ValidatingWebhookConfiguration.js';
import type { ObjectMeta } from './object.ts';

/** A Lease's spec as the API server sends it (client-node's model has Dates and no nulls; leader election writes nulls to release). */
export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}

/** Who made a request, as an AdmissionReview and a SubjectAccessReview carry it. */
export interface UserInfo {
  username?: string;
  uid?: string;
  groups?: string[];
  extra?: Record<string, string[]>;
}

/** `T` as JSON carries it: every Date a string, at any depth. */
export type JsonOf<T> = T extends Date
  ? string
  : T extends readonly (infer E)[]
    ? JsonOf<E>[]
    : T extends object
      ? { [K in keyof T]: JsonOf<T[K]> }
      : T;

/**
 * A built-in object as the API server sends and takes it: a client-node model `T` with the runtime's metadata.
 * A type alias of object types (not an interface), so that it is also an OpenObject: code that reads objects of
 * any kind loosely takes these too.
 */
export type BuiltinObject<T> = { apiVersion?: string; kind?: string; metadata: ObjectMeta } & JsonOf<Omit<T, 'apiVersion' | 'kind' | 'metadata'>>;

export type Pod = BuiltinObject<V1Pod>;
export type Service = BuiltinObject<V1Service>;
export type ConfigMap = BuiltinObject<V1ConfigMap>;
export type Secret = BuiltinObject<V1Secret>;
export type ServiceAccount = BuiltinObject<V1ServiceAccount>;
export type PersistentVolumeClaim = BuiltinObject<V1PersistentVolumeClaim>;
export type PersistentVolume = BuiltinObject<V1PersistentVolume>;
export type Namespace = BuiltinObject<V1Namespace>;
export type Node = BuiltinObject<V1Node>;
/** A core/v1 Endpoints object (one object of the kind, whose name is plural). */
export type EndpointsObject = BuiltinObject<V1Endpoints>;
export type Deployment = BuiltinObject<V1Deployment>;
export type ReplicaSet = BuiltinObject<V1ReplicaSet>;
export type StatefulSet = BuiltinObject<V1StatefulSet>;
export type Job = BuiltinObject<V1Job>;
/** A coordination.k8s.io/v1 Lease; its spec as the leader election writes it too (null clears a field). */
export type Lease = BuiltinObject<Omit<V1Lease, 'spec'>> & { spec?: LeaseSpec };
/** An events.k8s.io/v1 Event (not `Event`: the global of that name is the DOM's, in Node.js too). */
export type EventObject = BuiltinObject<EventsV1Event>;
export type PodDisruptionBudget = BuiltinObject<V1PodDisruptionBudget>;
/**
 * A networking.k8s.io/v1 NetworkPolicy. client-node's model calls an ingress rule's `from` `_from` (its
 * generator's name for a reserved word); the API server's JSON, typed here, says `from`.
 */
export type NetworkPolicy = BuiltinObject<
  Omit<V1NetworkPolicy, 'spec'> & {
    spec?: Omit<V1NetworkPolicySpec, 'ingress'> & { ingress?: (Omit<V1NetworkPolicyIngressRule, '_from'> & { from?: V1NetworkPolicyIngressRule['_from'] })[] };
  }
>;
export type ValidatingWebhookConfiguration = BuiltinObject<V1ValidatingWebhookConfiguration>;
export type MutatingWebhookConfiguration = BuiltinObject<V1MutatingWebhookConfiguration>;
export type Role = BuiltinObject<V1Role>;
export type RoleBinding = BuiltinObject<V1RoleBinding>;
export type ClusterRole = BuiltinObject<V1ClusterRole>;
export type ClusterRoleBinding = BuiltinObject<V1ClusterRoleBinding>;
/** An authorization.k8s.io/v1 SubjectAccessReview: created, never stored; its status is the answer. */
export type SubjectAccessReview = BuiltinObject<V1SubjectAccessReview>;

/** What a SubjectAccessReview asks about: a verb on a resource (its group, and a namespace and name where set). */
export type ResourceAttributes = NonNullable<NonNullable<SubjectAccessReview['spec']>['resourceAttributes']>;

/**
 * The SubjectAccessReview that asks whether `user` (as an admission request or a TokenReview names them: user,
 * uid, groups, extra) may do `attributes`; create it with `SubjectAccessReviews` and read `status.allowed`.
 */
export function subjectAccessReview(user: UserInfo, attributes: ResourceAttributes): SubjectAccessReview {
  return {
    apiVersion: 'authorization.k8s.io/v1',
    kind: 'SubjectAccessReview',
    metadata: {},
    spec: {
      ...(user.username !== undefined ? { user: user.username } : {}),
      ...(user.uid !== undefined ? { uid: user.uid } : {}),
      ...(user.groups ? { groups: user.groups } : {}),
      ...(user.extra ? { extra: user.extra } : {}),
      resourceAttributes: attributes,
    },
  };
}
