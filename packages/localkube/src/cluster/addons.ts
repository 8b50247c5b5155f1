// What a cluster has besides its processes: cluster DNS (CoreDNS as a real Deployment behind the kube-dns
// Service) and the default `local` StorageClass. Applied with server-side apply, so re-applying is a no-op.
import type { KubeClient } from '../client/kube.ts';
import { corednsImage } from '../images/catalog.ts';
import { NETWORK_POLICY_USER } from './pki.ts';
import { PROVISIONER_NAME, STORAGE_CLASS } from './provisioner.ts';
import { CLUSTER_DOMAIN, DNS_SERVICE_IP } from './topology.ts';

// No `forward`: names outside the cluster get no answer, because nothing may be asked of the outside.
// ttl 5 is the plugin's own default (kubeadm raises it to 30): a pod's record appears only once the pod has
// an IP, and a lower TTL keeps a negative answer cached before then from delaying it long.
const COREFILE = `.:53 {
    errors
    health {
        lameduck 5s
    }
    ready
    kubernetes ${CLUSTER_DOMAIN} in-addr.arpa ip6.arpa {
        pods insecure
        fallthrough in-addr.arpa ip6.arpa
        ttl 5
    }
    prometheus :9153
    cache 30
    reload
    loadbalance
}
`;

const labels = { 'k8s-app': 'kube-dns' };

export async function applyAddons(client: KubeClient): Promise<void> {
  const ns = '/api/v1/namespaces/kube-system';
  await client.apply('/apis/storage.k8s.io/v1/storageclasses/' + STORAGE_CLASS, {
    apiVersion: 'storage.k8s.io/v1',
    kind: 'StorageClass',
    metadata: { name: STORAGE_CLASS, annotations: { 'storageclass.kubernetes.io/is-default-class': 'true' } },
    provisioner: PROVISIONER_NAME,
    volumeBindingMode: 'WaitForFirstConsumer',
    reclaimPolicy: 'Delete',
  });
  await client.apply(`${ns}/serviceaccounts/coredns`, { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: 'coredns', namespace: 'kube-system' } });
  await client.apply('/apis/rbac.authorization.k8s.io/v1/clusterroles/system:coredns', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name: 'system:coredns' },
    rules: [
      { apiGroups: [''], resources: ['endpoints', 'services', 'pods', 'namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: ['discovery.k8s.io'], resources: ['endpointslices'], verbs: ['list', 'watch'] },
    ],
  });
  await client.apply('/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/system:coredns', {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name: 'system:coredns' },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: 'system:coredns' },
    subjects: [{ kind: 'ServiceAccount', name: 'coredns', namespace: 'kube-system' }],
  });
  await client.apply(`${ns}/configmaps/coredns`, { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'coredns', namespace: 'kube-system' }, data: { Corefile: COREFILE } });
  await client.apply('/apis/apps/v1/namespaces/kube-system/deployments/coredns', {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: 'coredns', namespace: 'kube-system', labels },
    spec: {
      replicas: 2,
      selector: { matchLabels: labels },
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 1 } },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: 'coredns',
          priorityClassName: 'system-cluster-critical',
          dnsPolicy: 'Default',
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [
                { weight: 100, podAffinityTerm: { labelSelector: { matchLabels: labels }, topologyKey: 'kubernetes.io/hostname' } },
              ],
            },
          },
          tolerations: [{ key: 'CriticalAddonsOnly', operator: 'Exists' }],
          containers: [
            {
              name: 'coredns',
              image: corednsImage,
              imagePullPolicy: 'IfNotPresent',
              args: ['-conf', '/etc/coredns/Corefile'],
              resources: { requests: { cpu: '50m', memory: '70Mi' }, limits: { memory: '170Mi' } },
              volumeMounts: [{ name: 'config', mountPath: '/etc/coredns', readOnly: true }],
              ports: [
                { name: 'dns', containerPort: 53, protocol: 'UDP' },
                { name: 'dns-tcp', containerPort: 53, protocol: 'TCP' },
                { name: 'metrics', containerPort: 9153, protocol: 'TCP' },
              ],
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { add: ['NET_BIND_SERVICE'], drop: ['ALL'] } },
              livenessProbe: { httpGet: { path: '/health', port: 8080 }, initialDelaySeconds: 10, periodSeconds: 10, failureThreshold: 5 },
              readinessProbe: { httpGet: { path: '/ready', port: 8181 }, periodSeconds: 2 },
            },
          ],
          volumes: [{ name: 'config', configMap: { name: 'coredns', items: [{ key: 'Corefile', path: 'Corefile' }] } }],
        },
      },
    },
  });
  await client.apply(`${ns}/services/kube-dns`, {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name: 'kube-dns', namespace: 'kube-system', labels: { ...labels, 'kubernetes.io/name': 'CoreDNS' } },
    spec: {
      selector: labels,
      clusterIP: DNS_SERVICE_IP,
      ports: [
        { name: 'dns', port: 53, protocol: 'UDP' },
        { name: 'dns-tcp', port: 53, protocol: 'TCP' },
        { name: 'metrics', port: 9153, protocol: 'TCP' },
      ],
    },
  });
}

/** What kube-router's network policy controller reads: its node, and the pods, namespaces and policies it watches. */
export async function applyNetworkPolicyAgentRbac(client: KubeClient): Promise<void> {
  const name = NETWORK_POLICY_USER;
  await client.apply(`/apis/rbac.authorization.k8s.io/v1/clusterroles/${name}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRole',
    metadata: { name },
    rules: [
      { apiGroups: [''], resources: ['nodes'], verbs: ['get'] },
      { apiGroups: [''], resources: ['pods', 'namespaces'], verbs: ['list', 'watch'] },
      { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['list', 'watch'] },
    ],
  });
  await client.apply(`/apis/rbac.authorization.k8s.io/v1/clusterrolebindings/${name}`, {
    apiVersion: 'rbac.authorization.k8s.io/v1',
    kind: 'ClusterRoleBinding',
    metadata: { name },
    roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name },
    subjects: [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'User', name }],
  });
}

/** True when every CoreDNS replica is available. */
export async function addonsReady(client: KubeClient): Promise<boolean> {
  const deployment = await client.get<{ spec: { replicas: number }; status?: { availableReplicas?: number } }>(
    '/apis/apps/v1/namespaces/kube-system/deployments/coredns',
  );
  return (deployment.status?.availableReplicas ?? 0) >= deployment.spec.replicas;
}
