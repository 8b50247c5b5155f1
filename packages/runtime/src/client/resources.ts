// Where each kind lives in the API: its group/version, plural and scope. A `ResourceType<T>` also carries
// the TypeScript type of its objects, so `client.get(Pods, key)` is typed without casts at call sites.
import type { KubeObject } from '../object.ts';

export interface ResourceType<T extends KubeObject = KubeObject> {
  readonly apiVersion: string;
  readonly kind: string;
  readonly plural: string;
  readonly namespaced: boolean;
  /** Phantom: never set; only carries T. */
  readonly _type?: T;
}

export function resource<T extends KubeObject = KubeObject>(apiVersion: string, kind: string, plural: string, namespaced: boolean): ResourceType<T> {
  return { apiVersion, kind, plural, namespaced };
}

export function groupOf(apiVersion: string): string {
  return apiVersion.includes('/') ? apiVersion.slice(0, apiVersion.indexOf('/')) : '';
}

/** The collection URL: `/api/v1/namespaces/ns/pods`, `/apis/apps/v1/deployments` (all namespaces), … */
export function collectionPath(type: ResourceType, namespace?: string): string {
  const base = type.apiVersion.includes('/') ? `/apis/${type.apiVersion}` : `/api/${type.apiVersion}`;
  if (type.namespaced && namespace) return `${base}/namespaces/${encodeURIComponent(namespace)}/${type.plural}`;
  return `${base}/${type.plural}`;
}

export function objectPath(type: ResourceType, namespace: string | undefined, name: string, subresource?: string): string {
  if (type.namespaced && !namespace) throw new Error(`${type.kind} ${name}: a namespace is required`);
  return `${collectionPath(type, namespace)}/${encodeURIComponent(name)}${subresource ? `/${subresource}` : ''}`;
}

// The built-in kinds operators use most. Object types are left open (KubeObject plus anything) on purpose:
// @kubernetes/client-node's models (V1Pod, …) can be used as T where exact types help.
/** A built-in object, typed loosely: KubeObject plus whatever its kind has. */
export type OpenObject = KubeObject & Record<string, unknown>;
type Open = OpenObject;
export const Pods = resource<Open>('v1', 'Pod', 'pods', true);
export const Services = resource<Open>('v1', 'Service', 'services', true);
export const ConfigMaps = resource<Open & { data?: Record<string, string> }>('v1', 'ConfigMap', 'configmaps', true);
export const Secrets = resource<Open & { data?: Record<string, string>; stringData?: Record<string, string> }>('v1', 'Secret', 'secrets', true);
export const ServiceAccounts = resource<Open>('v1', 'ServiceAccount', 'serviceaccounts', true);
export const PersistentVolumeClaims = resource<Open>('v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true);
export const PersistentVolumes = resource<Open>('v1', 'PersistentVolume', 'persistentvolumes', false);
export const Namespaces = resource<Open>('v1', 'Namespace', 'namespaces', false);
export const Nodes = resource<Open>('v1', 'Node', 'nodes', false);
export const Endpoints = resource<Open>('v1', 'Endpoints', 'endpoints', true);
export const Deployments = resource<Open>('apps/v1', 'Deployment', 'deployments', true);
export const ReplicaSets = resource<Open>('apps/v1', 'ReplicaSet', 'replicasets', true);
export const StatefulSets = resource<Open>('apps/v1', 'StatefulSet', 'statefulsets', true);
export const Leases = resource<Open & { spec?: LeaseSpec }>('coordination.k8s.io/v1', 'Lease', 'leases', true);
export const Events = resource<Open>('events.k8s.io/v1', 'Event', 'events', true);
export const PodDisruptionBudgets = resource<Open>('policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true);
export const CustomResourceDefinitions = resource<Open>('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'customresourcedefinitions', false);
export const ValidatingWebhookConfigurations = resource<Open>('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false);
export const MutatingWebhookConfigurations = resource<Open>('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false);
export const Roles = resource<Open>('rbac.authorization.k8s.io/v1', 'Role', 'roles', true);
export const RoleBindings = resource<Open>('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings', true);
export const ClusterRoles = resource<Open>('rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false);
export const ClusterRoleBindings = resource<Open>('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', false);

export interface LeaseSpec {
  holderIdentity?: string | null;
  leaseDurationSeconds?: number;
  acquireTime?: string | null;
  renewTime?: string | null;
  leaseTransitions?: number;
}
