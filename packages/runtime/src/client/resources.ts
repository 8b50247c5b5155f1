// Where each kind lives in the API: its group/version, plural and scope. A `ResourceType<T>` also carries
// the TypeScript type of its objects, so `client.get(Pods, key)` is typed without casts at call sites.
import type {
  ClusterRole,
  ClusterRoleBinding,
  ConfigMap,
  Deployment,
  EndpointsObject,
  EventObject,
  Job,
  Lease,
  MutatingWebhookConfiguration,
  Namespace,
  NetworkPolicy,
  Node,
  PersistentVolume,
  PersistentVolumeClaim,
  Pod,
  PodDisruptionBudget,
  ReplicaSet,
  Role,
  RoleBinding,
  Secret,
  Service,
  ServiceAccount,
  StatefulSet,
  SubjectAccessReview,
  ValidatingWebhookConfiguration,
} from '../builtin.ts';
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

/** An object of any kind, typed loosely: KubeObject plus whatever its kind has (discovery's resources, kinds read generically). */
export type OpenObject = KubeObject & Record<string, unknown>;

// The built-in kinds operators use, each typed by its client-node model (builtin.ts). Those objects are
// OpenObjects too, so code that handles any kind loosely takes them.
export const Pods = resource<Pod>('v1', 'Pod', 'pods', true);
export const Services = resource<Service>('v1', 'Service', 'services', true);
export const ConfigMaps = resource<ConfigMap>('v1', 'ConfigMap', 'configmaps', true);
export const Secrets = resource<Secret>('v1', 'Secret', 'secrets', true);
export const ServiceAccounts = resource<ServiceAccount>('v1', 'ServiceAccount', 'serviceaccounts', true);
export const PersistentVolumeClaims = resource<PersistentVolumeClaim>('v1', 'PersistentVolumeClaim', 'persistentvolumeclaims', true);
export const PersistentVolumes = resource<PersistentVolume>('v1', 'PersistentVolume', 'persistentvolumes', false);
export const Namespaces = resource<Namespace>('v1', 'Namespace', 'namespaces', false);
export const Nodes = resource<Node>('v1', 'Node', 'nodes', false);
export const Endpoints = resource<EndpointsObject>('v1', 'Endpoints', 'endpoints', true);
export const Deployments = resource<Deployment>('apps/v1', 'Deployment', 'deployments', true);
export const ReplicaSets = resource<ReplicaSet>('apps/v1', 'ReplicaSet', 'replicasets', true);
export const StatefulSets = resource<StatefulSet>('apps/v1', 'StatefulSet', 'statefulsets', true);
export const Jobs = resource<Job>('batch/v1', 'Job', 'jobs', true);
export const Leases = resource<Lease>('coordination.k8s.io/v1', 'Lease', 'leases', true);
export const Events = resource<EventObject>('events.k8s.io/v1', 'Event', 'events', true);
export const PodDisruptionBudgets = resource<PodDisruptionBudget>('policy/v1', 'PodDisruptionBudget', 'poddisruptionbudgets', true);
export const NetworkPolicies = resource<NetworkPolicy>('networking.k8s.io/v1', 'NetworkPolicy', 'networkpolicies', true);
// Open, not client-node's model: it names the schema's fields as identifiers (x_kubernetes_preserve_unknown_fields,
// ref for $ref, _default), not as the API server's JSON spells them.
export const CustomResourceDefinitions = resource<OpenObject>('apiextensions.k8s.io/v1', 'CustomResourceDefinition', 'customresourcedefinitions', false);
export const ValidatingWebhookConfigurations = resource<ValidatingWebhookConfiguration>('admissionregistration.k8s.io/v1', 'ValidatingWebhookConfiguration', 'validatingwebhookconfigurations', false);
export const MutatingWebhookConfigurations = resource<MutatingWebhookConfiguration>('admissionregistration.k8s.io/v1', 'MutatingWebhookConfiguration', 'mutatingwebhookconfigurations', false);
export const Roles = resource<Role>('rbac.authorization.k8s.io/v1', 'Role', 'roles', true);
export const RoleBindings = resource<RoleBinding>('rbac.authorization.k8s.io/v1', 'RoleBinding', 'rolebindings', true);
export const ClusterRoles = resource<ClusterRole>('rbac.authorization.k8s.io/v1', 'ClusterRole', 'clusterroles', false);
export const ClusterRoleBindings = resource<ClusterRoleBinding>('rbac.authorization.k8s.io/v1', 'ClusterRoleBinding', 'clusterrolebindings', false);
/** Created (never read back, not stored): the API server answers in the created object's status. */
export const SubjectAccessReviews = resource<SubjectAccessReview>('authorization.k8s.io/v1', 'SubjectAccessReview', 'subjectaccessreviews', false);

export type { LeaseSpec } from '../builtin.ts';
