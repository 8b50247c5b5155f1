// coreos/etcd-operator v0.9.4 as the peers benchmark runs it on Kubernetes 1.34, unmodified:
// - a v1 CRD for etcdclusters.etcd.database.coreos.com (served version v1beta2, every field preserved, no
//   status subresource: the operator writes .status with a plain PUT of the whole object), since the
//   operator can only create a v1beta1 CRD, which Kubernetes removed in 1.22; it runs with -create-crd=false;
// - once, cluster-wide (-cluster-wide, each EtcdCluster annotated with the scope it asks for), in its own
//   namespace with its own ServiceAccount, as Quorum's operator is installed once for all namespaces;
// - MY_POD_NAMESPACE and MY_POD_NAME, which it requires (it looks up its own pod for its ServiceAccount);
// - each cluster's two Services created beforehand with publishNotReadyAddresses: the operator marks them
//   with the tolerate-unready-endpoints annotation, which EndpointSlices no longer honour, so a member that
//   is not Ready yet would get no DNS record and the others could not reach it. It ignores AlreadyExists.
// Its members run PEER_ETCD_IMAGE (images.ts), which has the shell, etcdctl and nslookup its pods need.
import type { V1ClusterRole, V1ClusterRoleBinding, V1CustomResourceDefinitionSpec, V1CustomResourceDefinitionVersion, V1DeploymentSpec, V1ServiceAccount, V1ServiceSpec } from '@kubernetes/client-node';
import type { KubeObject } from '@quorum/runtime';
import { COREOS_OPERATOR_IMAGE, PEER_ETCD_IMAGE, PEER_ETCD_REPOSITORY, PEER_ETCD_VERSION } from './images.ts';
import { PEER_RESOURCES, PEER_STORAGE_SIZE, preferredAntiAffinity } from './common.ts';

export const COREOS_GROUP = 'etcd.database.coreos.com';
export const COREOS_NAMESPACE = 'peers-coreos-system';
export const COREOS_NAME = 'coreos-etcd-operator';
/** The annotation a cluster-wide coreos operator manages clusters by (k8sutil.AnnotationScope). */
export const COREOS_SCOPE_ANNOTATION = `${COREOS_GROUP}/scope`;

type Manifest<S> = KubeObject & { apiVersion: string; kind: string; spec: S };

/**
 * The CRD spec as sent on the wire: @kubernetes/client-node's model names the schema extension
 * x_kubernetes_preserve_unknown_fields (its serializer renames it), and these objects are sent as plain JSON.
 */
export type CoreosCRDSpec = Omit<V1CustomResourceDefinitionSpec, 'versions'> & {
  versions: (Omit<V1CustomResourceDefinitionVersion, 'schema'> & { schema: { openAPIV3Schema: { type: 'object'; 'x-kubernetes-preserve-unknown-fields': true } } })[];
};

export function coreosCRD(): Manifest<CoreosCRDSpec> {
  return {
    apiVersion: 'apiextensions.k8s.io/v1',
    kind: 'CustomResourceDefinition',
    metadata: { name: `etcdclusters.${COREOS_GROUP}` },
    spec: {
      group: COREOS_GROUP,
      scope: 'Namespaced',
      // The names its v1beta1 CRD had (pkg/util/k8sutil/crd.go, cmd/operator): kind, plural, short name.
      names: { kind: 'EtcdCluster', listKind: 'EtcdClusterList', plural: 'etcdclusters', singular: 'etcdcluster', shortNames: ['etcd'] },
      versions: [
        {
          name: 'v1beta2',
          served: true,
          storage: true,
          // v1 requires a structural schema; the operator's types have none, so every field is kept as sent.
          schema: { openAPIV3Schema: { type: 'object', 'x-kubernetes-preserve-unknown-fields': true } },
        },
      ],
    },
  };
}

/** The operator's objects, in the order they are applied (the CRD first, then its namespace). */
export function coreosOperatorObjects(): KubeObject[] {
  const labels = { 'app.kubernetes.io/name': COREOS_NAME };
  const ns = COREOS_NAMESPACE;
  const serviceAccount: V1ServiceAccount & KubeObject = { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: COREOS_NAME, namespace: ns } };
  // What v0.9.4 calls with -cluster-wide and -create-crd=false (example/rbac/cluster-role-template.yaml, less
  // the CRD and Deployment rules: it creates no CRD here and runs no backup operator).
  const clusterRole: V1ClusterRole & KubeObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: COREOS_NAME },
    rules: [
      { apiGroups: [COREOS_GROUP], resources: ['etcdclusters', 'etcdbackups', 'etcdrestores'], verbs: ['*'] },
      { apiGroups: [''], resources: ['pods', 'services', 'endpoints', 'persistentvolumeclaims', 'events'], verbs: ['*'] },
      { apiGroups: [''], resources: ['secrets'], verbs: ['get'] },
    ],
  };
  const binding: V1ClusterRoleBinding & KubeObject = {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: COREOS_NAME },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: COREOS_NAME },
    subjects: [{ kind: 'ServiceAccount', name: COREOS_NAME, namespace: ns }],
  };
  const deployment: Manifest<V1DeploymentSpec> = {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: COREOS_NAME, namespace: ns, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: labels },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: COREOS_NAME,
          containers: [
            {
              name: 'etcd-operator',
              image: COREOS_OPERATOR_IMAGE,
              imagePullPolicy: 'IfNotPresent',
              args: ['-create-crd=false', '-cluster-wide'],
              env: [
                { name: 'MY_POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                { name: 'MY_POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
              ],
              ports: [{ name: 'http', containerPort: 8080 }],
              // Ready once it leads and its controller has started (pkg/util/probe, /readyz).
              readinessProbe: { httpGet: { path: '/readyz', port: 8080 }, periodSeconds: 2 },
            },
          ],
        },
      },
    },
  };
  return [coreosCRD(), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } }, serviceAccount, clusterRole, binding, deployment];
}

/** The Services the operator would create for `cluster` (k8sutil.CreatePeerService / CreateClientService), publishing not-ready addresses. */
export function coreosServices(cluster: string, namespace: string): Manifest<V1ServiceSpec>[] {
  const selector = coreosClusterLabels(cluster);
  const base = { metadata: { namespace, labels: selector }, apiVersion: 'v1', kind: 'Service' } as const;
  return [
    {
      ...base,
      metadata: { ...base.metadata, name: cluster },
      spec: {
        clusterIP: 'None',
        publishNotReadyAddresses: true,
        selector,
        ports: [
          { name: 'client', port: 2379, targetPort: 2379, protocol: 'TCP' },
          { name: 'peer', port: 2380, targetPort: 2380, protocol: 'TCP' },
        ],
      },
    },
    {
      ...base,
      metadata: { ...base.metadata, name: `${cluster}-client` },
      // The annotation meant the same on both of its Services.
      spec: { publishNotReadyAddresses: true, selector, ports: [{ name: 'client', port: 2379, targetPort: 2379, protocol: 'TCP' }] },
    },
  ];
}

/** The labels the operator puts on a cluster's pods and Services (k8sutil.LabelsForCluster). */
export function coreosClusterLabels(cluster: string): Record<string, string> {
  return { app: 'etcd', etcd_cluster: cluster };
}

/**
 * An EtcdCluster of `size` members: etcd PEER_ETCD_VERSION from PEER_ETCD_IMAGE, the same image as the DNS
 * wait's, Quorum's default requests and volume size on the default StorageClass (v0.9.4 gives every member
 * but the seed a PVC; the seed always has an emptyDir), and Quorum's default preferred anti-affinity. Not
 * `antiAffinity: true`: that is required anti-affinity, and 5 members would not fit on 3 nodes.
 */
export function coreosCluster(cluster: string, namespace: string, size: number): KubeObject & { spec: Record<string, unknown> } {
  return {
    apiVersion: `${COREOS_GROUP}/v1beta2`,
    kind: 'EtcdCluster',
    metadata: { name: cluster, namespace, annotations: { [COREOS_SCOPE_ANNOTATION]: 'clusterwide' } },
    spec: {
      size,
      repository: PEER_ETCD_REPOSITORY,
      version: PEER_ETCD_VERSION,
      pod: {
        busyboxImage: PEER_ETCD_IMAGE,
        resources: PEER_RESOURCES,
        affinity: preferredAntiAffinity(coreosClusterLabels(cluster)),
        persistentVolumeClaimSpec: { accessModes: ['ReadWriteOnce'], resources: { requests: { storage: PEER_STORAGE_SIZE } } },
      },
    },
  };
}
