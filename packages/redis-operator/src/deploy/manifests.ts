// Everything that runs the Redis operator, generated from code: the CRD, a ServiceAccount with least-privilege
// RBAC (a Role and RoleBinding in each tenant namespace, by default `default`; a ClusterRole only for a
// cluster-wide install; the Lease in its own namespace),
// a one-replica Deployment under the restricted Pod Security Standard, and the admission webhook (its Service,
// configuration and the RBAC of its serving certificate; webhooks/credentials.ts). The rules are the calls the
// reconciler makes (reconcile/act.ts, observe.ts, status writes, events) and the informers it runs.
import { restrictedContainerSecurity, restrictedPodSecurity, scopedRoles, tenantNamespaces, tenantNamespaceSelector } from '@quorum/kit';
import type { KubeObject } from '@quorum/runtime';
import { redisBackupCRD, redisBackupScheduleCRD, redisCRD } from '../api/crd.ts';
import { BACKUP_PLURAL } from '../api/backup.ts';
import { SCHEDULE_PLURAL } from '../api/schedule.ts';
import { GROUP, PLURAL } from '../api/redis.ts';
import { DEFAULT_CA_ROTATION_OVERLAP_SECONDS, DEFAULT_REDIS_REPOSITORY, METRICS_PORT, OPERATOR_IMAGE, WEBHOOK_CERT_SECRET, WEBHOOK_PORT, WEBHOOK_SERVICE } from '../operator/config.ts';
import { LEASE_NAME } from '../operator/operator.ts';
import { OPERATOR_POD_LABELS } from '../names.ts';
import { VALIDATING_WEBHOOK, VALIDATING_WEBHOOKS } from '../webhooks/credentials.ts';

export { OPERATOR_IMAGE, OPERATOR_VERSION } from '../operator/config.ts';
export const NAME = 'quorum-redis-operator';
/** What a scraper (Prometheus' service account) is bound to, to read the operator's /metrics. */
export const METRICS_READER_CLUSTER_ROLE = `${NAME}-metrics-reader`;
/**
 * /metrics (HTTPS) checks its caller's bearer token (TokenReview) and asks whether it may get /metrics
 * (SubjectAccessReview): both cluster-scoped, so a ClusterRole even for a namespace-scoped install.
 */
export const METRICS_AUTH_RULES = [
  { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
  { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
];
/**
 * Which nodes are cordoned (a drain under way): the primary moves off one before the drain's eviction reaches it.
 * Nodes are cluster-scoped, so a ClusterRole even for a namespace-scoped install; read only, and only the cordoned
 * ones are listed (a field selector), never changed.
 */
export const NODE_RULES = [{ apiGroups: [''], resources: ['nodes'], verbs: ['list', 'watch'] }];
const PROBE_PORT = 8081;

export interface ManifestOptions {
  namespace?: string;
  image?: string;
  /**
   * The tenant namespaces: the operator manages the Redises (and backups) of these only, under a Role and
   * RoleBinding in each (default: `default`, where the examples go); the webhook selects only them. Each must
   * exist before the install; kube-system is refused.
   */
  namespaces?: readonly string[];
  /** Every namespace, under a ClusterRole (instead of `namespaces`; default false). */
  clusterWide?: boolean;
  /** One tenant namespace: `namespaces: [watchNamespace]` (the former option, kept for its callers). */
  watchNamespace?: string;
  redisRepository?: string;
  /** Install the admission webhook (default true): the credentials check of RedisBackups and bootstraps. */
  webhooks?: boolean;
  /**
   * How long a CA rotation trusts both CAs before the servers present certificates of the new one: the time
   * clients have to read the two-CA `ca.crt` (CA_ROTATION_OVERLAP_SECONDS; default 7 days).
   */
  caRotationOverlapSeconds?: number;
}

/** The webhook's ClusterRole: its configuration is cluster-scoped, whatever the install's scope. */
export const WEBHOOK_CLUSTER_ROLE = `${NAME}-webhooks`;
/** Its serving certificate's Role, in the operator's namespace. */
export const WEBHOOK_CERT_ROLE = `${NAME}-webhook-certs`;

interface Rule {
  apiGroups: string[];
  resources: string[];
  verbs: string[];
}

/**
 * What the reconciler does with each kind (the informers list and watch; act creates, patches, deletes): exactly
 * the calls it makes, which test/unit/rbac.test.ts checks against the sources. Reads go to the informers' caches,
 * so most kinds have no `get`.
 */
export const RULES: readonly Rule[] = [
  { apiGroups: [GROUP], resources: [PLURAL], verbs: ['list', 'watch'] },
  { apiGroups: [GROUP], resources: [`${PLURAL}/status`], verbs: ['patch'] },
  // get: the webhook reads the RedisBackup a Redis's bootstrap names (the controllers read it from the cache).
  // create and delete: a RedisBackupSchedule's backups, made at their times and deleted by its retention.
  { apiGroups: [GROUP], resources: [BACKUP_PLURAL], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
  { apiGroups: [GROUP], resources: [`${BACKUP_PLURAL}/status`], verbs: ['patch'] },
  { apiGroups: [GROUP], resources: [SCHEDULE_PLURAL], verbs: ['list', 'watch'] },
  { apiGroups: [GROUP], resources: [`${SCHEDULE_PLURAL}/status`], verbs: ['patch'] },
  // One Job per backup attempt, never patched or deleted (each RedisBackup owns its Jobs: they go with it); a
  // schedule's prune Job (one per expired backup) is deleted to run again after it failed.
  { apiGroups: ['batch'], resources: ['jobs'], verbs: ['get', 'list', 'watch', 'create', 'delete'] },
  { apiGroups: [''], resources: ['pods'], verbs: ['list', 'watch', 'create', 'delete', 'patch'] },
  // Claims are deleted only on a scale-down with reclaimPolicy Delete.
  { apiGroups: [''], resources: ['persistentvolumeclaims'], verbs: ['list', 'watch', 'create', 'delete'] },
  { apiGroups: [''], resources: ['services'], verbs: ['list', 'watch', 'create'] },
  // Server-side apply of the ConfigMap is a patch (create included).
  { apiGroups: [''], resources: ['configmaps'], verbs: ['list', 'watch', 'create', 'patch'] },
  // The password: read (a user's Secret, or the generated one) and generated once; never listed or watched. A
  // backup's credentials Secret is read as metadata only (its label), never its data. TLS: the CA and the served
  // certificate are created, and the certificate replaced (update) when it is renewed; a user's TLS Secret is read.
  { apiGroups: [''], resources: ['secrets'], verbs: ['get', 'create', 'update'] },
  // Each Redis's NetworkPolicy: created (get: whose is the one at its name, when the create finds one), kept by
  // server-side apply, deleted once spec.network.policy is false.
  { apiGroups: ['networking.k8s.io'], resources: ['networkpolicies'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
  // Each Redis's PodDisruptionBudgets (primary, replicas, Sentinels), kept like its NetworkPolicy.
  { apiGroups: ['policy'], resources: ['poddisruptionbudgets'], verbs: ['get', 'list', 'watch', 'create', 'patch', 'delete'] },
  { apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] },
];

/**
 * The tenant namespaces an install's options ask for, checked (kube-system refused); undefined for a
 * cluster-wide install. `watchNamespace` is one tenant namespace, not to be given with the others.
 */
export function redisTenantNamespaces(options: Pick<ManifestOptions, 'namespaces' | 'clusterWide' | 'watchNamespace'>): readonly string[] | undefined {
  if (options.watchNamespace === undefined) return tenantNamespaces(options, 'its Redises');
  if (options.namespaces !== undefined || options.clusterWide) throw new Error('watchNamespace is one tenant namespace: give it, namespaces or clusterWide, not two of them');
  return tenantNamespaces({ namespaces: [options.watchNamespace] }, 'its Redises');
}

// The pod labels are what each Redis's NetworkPolicy admits as the operator's pods (OPERATOR_POD_LABELS).
const labels = { ...OPERATOR_POD_LABELS, 'app.kubernetes.io/part-of': 'quorum' };

export function operatorManifests(options: ManifestOptions = {}): KubeObject[] {
  const ns = options.namespace ?? 'quorum-system';
  const tenants = redisTenantNamespaces(options);
  const webhooks = options.webhooks ?? true;
  const meta = (name: string, namespace?: string): KubeObject['metadata'] => ({ name, ...(namespace ? { namespace } : {}), labels });
  const subject = [{ kind: 'ServiceAccount', name: NAME, namespace: ns }];
  const rbac = 'rbac.authorization.k8s.io/v1';
  return [
    // Shared with the other operators: no labels of ours on it.
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns } },
    redisCRD(),
    redisBackupCRD(),
    redisBackupScheduleCRD(),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(NAME, ns) },
    ...scopedRoles(tenants, { name: NAME, labels, rules: RULES, serviceAccount: { name: NAME, namespace: ns } }),
    { apiVersion: rbac, kind: 'Role', metadata: meta(`${NAME}-leader-election`, ns), rules: [{ apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] }, { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEASE_NAME], verbs: ['get', 'update'] }] } as KubeObject,
    { apiVersion: rbac, kind: 'RoleBinding', metadata: meta(`${NAME}-leader-election`, ns), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: `${NAME}-leader-election` }, subjects: subject } as KubeObject,
    { apiVersion: rbac, kind: 'ClusterRole', metadata: meta(`${NAME}-metrics-auth`), rules: METRICS_AUTH_RULES } as KubeObject,
    { apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: meta(`${NAME}-metrics-auth`), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${NAME}-metrics-auth` }, subjects: subject } as KubeObject,
    { apiVersion: rbac, kind: 'ClusterRole', metadata: meta(`${NAME}-nodes`), rules: NODE_RULES } as KubeObject,
    { apiVersion: rbac, kind: 'ClusterRoleBinding', metadata: meta(`${NAME}-nodes`), roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: `${NAME}-nodes` }, subjects: subject } as KubeObject,
    // Bound to nothing: bind a scraper's service account to it to let it read the operator's /metrics.
    { apiVersion: rbac, kind: 'ClusterRole', metadata: meta(METRICS_READER_CLUSTER_ROLE), rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] } as KubeObject,
    ...(webhooks ? webhookAccess(ns) : []),
    deployment(ns, options, tenants),
    // Last: the API server calls the webhook once the operator can answer it (failurePolicy Ignore until then).
    ...(webhooks ? webhookObjects(ns, tenants) : []),
  ];
}

/**
 * The webhook's RBAC: the CA published into its configuration (cluster-scoped, by name), and its serving
 * certificate's Secret in the operator's namespace (created by the first replica, then read and renewed by name).
 * The SubjectAccessReviews it makes are the metrics-auth ClusterRole's `create`.
 */
function webhookAccess(ns: string): KubeObject[] {
  const rbac = 'rbac.authorization.k8s.io/v1';
  const subjects = [{ kind: 'ServiceAccount', name: NAME, namespace: ns }];
  const role = (kind: 'Role' | 'ClusterRole', name: string, namespace: string | undefined, rules: object[]): KubeObject[] => [
    { apiVersion: rbac, kind, metadata: { name, ...(namespace ? { namespace } : {}), labels }, rules } as KubeObject,
    { apiVersion: rbac, kind: `${kind}Binding`, metadata: { name, ...(namespace ? { namespace } : {}), labels }, roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name }, subjects } as KubeObject,
  ];
  return [
    ...role('ClusterRole', WEBHOOK_CLUSTER_ROLE, undefined, [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: [VALIDATING_WEBHOOK], verbs: ['get', 'patch'] }]),
    ...role('Role', WEBHOOK_CERT_ROLE, ns, [
      // A create cannot be limited by name.
      { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
      { apiGroups: [''], resources: ['secrets'], resourceNames: [WEBHOOK_CERT_SECRET], verbs: ['get', 'update'] },
    ]),
  ];
}

/**
 * The webhook's Service and configuration: creates of RedisBackups and Redises (their backup is fixed at
 * creation), failurePolicy Ignore (the controllers check the Secret's label again), and for a namespace-scoped
 * install only the tenant namespaces': objects elsewhere are another install's business.
 */
function webhookObjects(ns: string, tenants: readonly string[] | undefined): KubeObject[] {
  const namespaceSelector = tenantNamespaceSelector(tenants);
  const webhooks = Object.entries(VALIDATING_WEBHOOKS).map(([resource, w]) => ({
    name: w.name,
    clientConfig: { service: { name: WEBHOOK_SERVICE, namespace: ns, path: w.path, port: 443 } },
    rules: [{ apiGroups: [GROUP], apiVersions: ['v1alpha1'], operations: ['CREATE'], resources: [resource], scope: 'Namespaced' }],
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Ignore',
    timeoutSeconds: 5,
    ...namespaceSelector,
  }));
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: WEBHOOK_SERVICE, namespace: ns, labels }, spec: { selector: { ...OPERATOR_POD_LABELS }, ports: [{ name: 'webhook', port: 443, targetPort: 'webhook' }] } } as KubeObject,
    { apiVersion: 'admissionregistration.k8s.io/v1', kind: 'ValidatingWebhookConfiguration', metadata: { name: VALIDATING_WEBHOOK, labels }, webhooks } as KubeObject,
  ];
}

function deployment(ns: string, options: ManifestOptions, tenants: readonly string[] | undefined): KubeObject {
  const env = [
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    // The tenant namespaces, comma-separated; empty: every namespace (cluster-wide).
    { name: 'WATCH_NAMESPACES', value: tenants?.join(',') ?? '' },
    { name: 'REDIS_REPOSITORY', value: options.redisRepository ?? DEFAULT_REDIS_REPOSITORY },
    { name: 'PROBE_PORT', value: String(PROBE_PORT) },
    { name: 'METRICS_PORT', value: String(METRICS_PORT) },
    // Backup Jobs and restore init containers run the operator's own image (it carries the agent).
    { name: 'OPERATOR_IMAGE', value: options.image ?? OPERATOR_IMAGE },
    { name: 'WEBHOOKS', value: String(options.webhooks ?? true) },
    { name: 'WEBHOOK_PORT', value: String(WEBHOOK_PORT) },
    { name: 'WEBHOOK_SERVICE', value: WEBHOOK_SERVICE },
    // The serving certificate is written there (the root filesystem is read-only).
    { name: 'CERT_DIR', value: '/tmp/webhook-certs' },
    { name: 'CA_ROTATION_OVERLAP_SECONDS', value: String(options.caRotationOverlapSeconds ?? DEFAULT_CA_ROTATION_OVERLAP_SECONDS) },
  ];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace: ns, labels },
    spec: {
      replicas: 1,
      selector: { matchLabels: { ...OPERATOR_POD_LABELS } },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: NAME,
          securityContext: restrictedPodSecurity(),
          containers: [
            {
              name: 'operator',
              image: options.image ?? OPERATOR_IMAGE,
              imagePullPolicy: 'IfNotPresent',
              env,
              // /metrics over HTTPS, for bearer tokens bound to the metrics-reader ClusterRole (the probes serve no metrics).
              ports: [{ name: 'probes', containerPort: PROBE_PORT }, { name: 'metrics', containerPort: METRICS_PORT }, { name: 'webhook', containerPort: WEBHOOK_PORT }],
              readinessProbe: { httpGet: { path: '/readyz', port: PROBE_PORT }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: '/healthz', port: PROBE_PORT }, periodSeconds: 10, failureThreshold: 6 },
              resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '256Mi' } },
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '16Mi' } }],
        },
      },
    },
  } as KubeObject;
}
