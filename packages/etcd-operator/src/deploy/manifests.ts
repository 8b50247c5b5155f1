// Everything needed to run the operator, generated from code: the CRD, a namespace, a ServiceAccount with
// least-privilege RBAC (exactly what the controllers and webhooks call), a 2-replica Deployment with leader
// election and its PodDisruptionBudget, the webhook Service and configurations. `quorum manifests` prints them; the Helm chart and
// `quorum install` use the same objects.
import { DEFAULT_TENANT_NAMESPACES, RESTRICTED_NAMESPACE_LABELS, restrictedContainerSecurity, restrictedPodSecurity, tenantNamespaces as checkedTenantNamespaces } from '@quorum/kit';
import type { KubeObject } from '@quorum/runtime';
import { etcdBackupCRD, etcdBackupScheduleCRD, etcdClusterCRD, etcdRestoreCRD } from '../api/crd.ts';
import { OPERATOR_SELECTOR } from '../names.ts';
import { GROUP } from '../resources.ts';
import { DEFAULT_CLUSTER_DOMAIN } from '../tls/issue.ts';
import { DEFAULT_CA_ROTATION_OVERLAP_SECONDS, DEFAULT_CRASHLOOP_GRACE_SECONDS, DEFAULT_METRICS_NAMESPACES, DEFAULT_OPERATOR_NAMESPACE, OPERATOR_VERSION, OPERATOR_IMAGE, PEER_WAIT_IMAGE, NAME, WEBHOOK_SERVICE, CERT_SECRET, VALIDATING_WEBHOOK, MUTATING_WEBHOOK, MUTATING_WEBHOOK_NAME, VALIDATING_WEBHOOKS } from './constants.ts';

// Defined in the leaf module the operator process imports instead of this one (./constants.ts).
export { DEFAULT_CA_ROTATION_OVERLAP_SECONDS, DEFAULT_CRASHLOOP_GRACE_SECONDS, DEFAULT_METRICS_NAMESPACES, DEFAULT_OPERATOR_NAMESPACE, OPERATOR_VERSION, OPERATOR_IMAGE, PEER_WAIT_IMAGE, NAME, WEBHOOK_SERVICE, CERT_SECRET, VALIDATING_WEBHOOK, MUTATING_WEBHOOK, MUTATING_WEBHOOK_NAME, VALIDATING_WEBHOOK_NAME, VALIDATING_WEBHOOKS } from './constants.ts';

export interface ManifestOptions {
  namespace?: string;
  image?: string;
  /** The peer-wait init container image the operator puts in member pods (default PEER_WAIT_IMAGE). */
  peerWaitImage?: string;
  replicas?: number;
  /** Register the admission webhooks (default true). */
  webhooks?: boolean;
  /** Seconds a member may crash-loop before it is replaced (default 60). */
  crashLoopGraceSeconds?: number;
  /** Seconds a step may make no progress before the cluster is Degraded (StepStalled); default 120. */
  stepDeadlineSeconds?: number;
  /** Seconds the old CA stays trusted after an operator-managed CA rotation moved signing to the new one (default 7 days). */
  caRotationOverlapSeconds?: number;
  logLevel?: string;
  /** The Kubernetes cluster domain, which member certificates name in full (default cluster.local). */
  clusterDomain?: string;
  /**
   * The tenant namespaces: the operator manages the EtcdClusters (and backups, schedules, restores) of these
   * only, under a Role and RoleBinding in each (default: `default`, where the examples go). The webhook
   * configurations select only them. Each must exist before the install; kube-system is refused.
   */
  namespaces?: readonly string[];
  /** Every namespace, under a ClusterRole (instead of `namespaces`; default false). */
  clusterWide?: boolean;
  /**
   * The namespaces whose pods may scrape the members' metrics port (2381) through each cluster's NetworkPolicy
   * (default `monitoring`; [] for none).
   */
  metricsNamespaces?: readonly string[];
}

/** Where an install without `namespaces` or `clusterWide` manages clusters: the examples' namespace. */
export const DEFAULT_NAMESPACES: readonly string[] = DEFAULT_TENANT_NAMESPACES;

/**
 * The tenant namespaces an install's options ask for, checked, without repeats; undefined for a cluster-wide
 * install. kube-system is refused: the operator creates pods with its own identity, and no etcd cluster of
 * Quorum's belongs beside the control plane's (the kit's check, shared with the Redis operator).
 */
export function tenantNamespaces(options: Pick<ManifestOptions, 'namespaces' | 'clusterWide'>): readonly string[] | undefined {
  return checkedTenantNamespaces(options, 'its etcd clusters');
}

type Obj = KubeObject & Record<string, unknown>;

const labels = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'operator', 'app.kubernetes.io/version': OPERATOR_VERSION };
// Declared with the names (monitoring/ selects the operator's pods too); chaos/faults.ts reads it here.

// The kit's restricted pod security without fsGroup: the operator shares no volume with another user, and its
// pod has never had one (an operator upgrade changes nothing here).
const { fsGroup: _noSharedVolumes, ...OPERATOR_POD_SECURITY } = restrictedPodSecurity();

// The operator's namespace admits only pods that meet the restricted Pod Security Standard, which the operator's
// own pods do; the kit holds the labels every operator's namespace carries. Re-exported for the tests' namespaces.
export { RESTRICTED_NAMESPACE_LABELS };

/** A rule and why the operator needs it: the rule goes in the manifests, both in docs/security.md (rbac-doc.ts). */
export interface Grant {
  rule: Record<string, unknown>;
  why: string;
}

const rule = (apiGroup: string, resource: string, verbs: string[], why: string, resourceNames?: string[]): Grant => ({
  rule: { apiGroups: [apiGroup], resources: [resource], ...(resourceNames ? { resourceNames } : {}), verbs },
  why,
});

/**
 * The rules of what the operator does to EtcdClusters and what it makes for them: exactly the calls it makes
 * (cluster/, backup/, schedule/, restore/, webhooks/, and the runtime's informers and events), one line per
 * resource; test/unit/rbac.test.ts scans the operator's sources for every call and fails on a call without a
 * rule or a verb without a call. Reads go to the informers' caches (list, watch), so most kinds have no `get`.
 * All but the last three (the webhooks', in a ClusterRole of their own) are a Role in each tenant namespace,
 * or a ClusterRole when cluster-wide.
 */
export const CLUSTER_GRANTS: readonly Grant[] = [
  rule(GROUP, 'etcdclusters', ['list', 'watch', 'create'], 'the clusters; create: an EtcdRestore creates the cluster it restores into'),
  rule(GROUP, 'etcdclusters/status', ['patch'], 'status: one merge patch, only when it changed'),
  rule(GROUP, 'etcdbackups', ['list', 'watch', 'create', 'delete'], 'backups; create and delete: a schedule makes its backups and deletes expired ones'),
  rule(GROUP, 'etcdbackups/status', ['patch'], 'status'),
  rule(GROUP, 'etcdbackupschedules', ['list', 'watch'], 'schedules'),
  rule(GROUP, 'etcdbackupschedules/status', ['patch'], 'status'),
  rule(GROUP, 'etcdrestores', ['list', 'watch'], 'restores'),
  rule(GROUP, 'etcdrestores/status', ['patch'], 'status'),
  rule('batch', 'jobs', ['list', 'watch', 'create', 'delete'], "backup Jobs and deletions of expired stored backups: they mount the credentials Secret themselves, the operator never reads its data"),
  rule('', 'secrets', ['get', 'list', 'watch', 'create', 'update', 'delete'], "TLS clusters' CAs and certificates: issued, renewed, watched (label managed-by=quorum), a former member's deleted; a user's spec.tls Secret read by name to check it; a backup credentials Secret's labels read (metadata only). RBAC has no label selectors"),
  rule('', 'pods', ['get', 'list', 'watch', 'create', 'delete'], "member pods; get: when a create is refused as existing, whose pod has that name (another's is not adopted)"),
  rule('', 'pods/eviction', ['create'], 'members restarted through the eviction API, which honours the PodDisruptionBudget'),
  rule('', 'persistentvolumeclaims', ['list', 'watch', 'create', 'delete'], "members' volumes; delete: a removed member's, and a deleted cluster's with reclaimPolicy Delete"),
  rule('', 'services', ['list', 'watch', 'create', 'patch'], 'the peer and client Services, by server-side apply (patch, and create when absent)'),
  rule('policy', 'poddisruptionbudgets', ['list', 'watch', 'create', 'patch', 'delete'], "each cluster's PodDisruptionBudget, by server-side apply"),
  rule('networking.k8s.io', 'networkpolicies', ['list', 'watch', 'create', 'patch', 'delete'], "each cluster's NetworkPolicy, by server-side apply; delete: once spec.network.policy is false"),
  rule('events.k8s.io', 'events', ['create', 'patch'], 'events (a repeated one is patched into a series)'),
  rule('admissionregistration.k8s.io', 'validatingwebhookconfigurations', ['get', 'patch'], 'the CA bundle published into its own webhook configuration, by name', [VALIDATING_WEBHOOK]),
  rule('admissionregistration.k8s.io', 'mutatingwebhookconfigurations', ['get', 'patch'], 'the same, mutating', [MUTATING_WEBHOOK]),
  rule('authorization.k8s.io', 'subjectaccessreviews', ['create'], 'the validating webhooks ask whether the requesting user may get the credentials Secret an object names; /metrics asks whether its caller may get it'),
  rule('authentication.k8s.io', 'tokenreviews', ['create'], "/metrics (HTTPS) checks its caller's bearer token"),
];

export function clusterRules(): Record<string, unknown>[] {
  return CLUSTER_GRANTS.map((g) => structuredClone(g.rule));
}

/** The rules in the operator's own namespace: leader election and the webhooks' serving certificate. */
export const NAMESPACE_GRANTS: readonly Grant[] = [
  rule('coordination.k8s.io', 'leases', ['create'], 'the leader-election Lease, created once (a create cannot be limited by name)'),
  rule('coordination.k8s.io', 'leases', ['get', 'update'], 'then read and renewed, by name', [NAME]),
  rule('', 'secrets', ['create'], "the webhooks' serving certificate Secret, created by the first replica"),
  rule('', 'secrets', ['get', 'update'], 'then read by every replica, by name, and renewed in place by one of them once a third of its life is left', [CERT_SECRET]),
];

export function namespaceRules(): Record<string, unknown>[] {
  return NAMESPACE_GRANTS.map((g) => structuredClone(g.rule));
}

/** The Role (and its binding) in each tenant namespace, and what name it has: the operator's own namespace has a Role too. */
export const WATCH_ROLE = `${NAME}-watch`;
/** The webhooks' ClusterRole: the webhook configurations and access reviews are cluster-scoped, whatever the install. */
export const WEBHOOK_CLUSTER_ROLE = `${NAME}-webhooks`;
/** The access reviews /metrics makes of its callers: cluster-scoped, whatever the install. */
export const METRICS_AUTH_CLUSTER_ROLE = `${NAME}-metrics-auth`;
/** What a scraper (Prometheus' service account) is bound to, to read the operator's /metrics. */
export const METRICS_READER_CLUSTER_ROLE = `${NAME}-metrics-reader`;
/** The operator's HTTPS /metrics port (METRICS_PORT). */
export const OPERATOR_METRICS_PORT = 8443;

// The webhooks' cluster-scoped calls: their configurations, and the access reviews of credentials Secrets.
const isWebhookConfigurationRule = (rule: Record<string, unknown>): boolean => Array.isArray(rule['apiGroups']) && (rule['apiGroups'].includes('admissionregistration.k8s.io') || rule['apiGroups'].includes('authorization.k8s.io'));
const isAccessReviewRule = (rule: Record<string, unknown>): boolean => Array.isArray(rule['apiGroups']) && (rule['apiGroups'].includes('authentication.k8s.io') || rule['apiGroups'].includes('authorization.k8s.io'));

/**
 * What the operator may do to EtcdClusters and what it creates for them: in each tenant namespace through a
 * Role there, or everywhere through a ClusterRole. The webhooks' rules are cluster-wide whatever the scope (the
 * operator publishes the configurations' CA bundle; the access reviews are cluster-scoped), which a Role
 * cannot grant: they come in a ClusterRole of their own, the configurations limited by resourceNames, and
 * only with webhooks on.
 */
export function accessObjects(ns: string, namespaces: readonly string[] | undefined, webhooks: boolean): Obj[] {
  const subjects = [{ kind: 'ServiceAccount', name: NAME, namespace: ns }];
  const role = (kind: 'Role' | 'ClusterRole', name: string, namespace: string | undefined, rules: Record<string, unknown>[]): Obj[] => [
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind, metadata: { name, ...(namespace ? { namespace } : {}), labels }, rules },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: `${kind}Binding`,
      metadata: { name, ...(namespace ? { namespace } : {}), labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind, name },
      subjects,
    },
  ];
  const tenantRules = (): Record<string, unknown>[] => clusterRules().filter((r) => !isWebhookConfigurationRule(r) && !isAccessReviewRule(r));
  return [
    ...(namespaces ? namespaces.flatMap((tenant) => role('Role', WATCH_ROLE, tenant, tenantRules())) : role('ClusterRole', NAME, undefined, tenantRules())),
    ...(webhooks ? role('ClusterRole', WEBHOOK_CLUSTER_ROLE, undefined, clusterRules().filter(isWebhookConfigurationRule)) : []),
  ];
}

/**
 * The access reviews (both kinds: the metrics server's always, the webhooks' too when they are on; cluster-scoped
 * whatever the install) bound to the operator, and the metrics-reader ClusterRole, bound to nothing: bind a
 * scraper's service account to it to let it read the operator's /metrics.
 */
export function metricsAccessObjects(ns: string): Obj[] {
  const rbac = 'rbac.authorization.k8s.io/v1';
  return [
    { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: METRICS_AUTH_CLUSTER_ROLE, labels }, rules: clusterRules().filter(isAccessReviewRule) },
    {
      apiVersion: rbac,
      kind: 'ClusterRoleBinding',
      metadata: { name: METRICS_AUTH_CLUSTER_ROLE, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'ClusterRole', name: METRICS_AUTH_CLUSTER_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: NAME, namespace: ns }],
    },
    { apiVersion: rbac, kind: 'ClusterRole', metadata: { name: METRICS_READER_CLUSTER_ROLE, labels }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
  ];
}

/**
 * The operator's own pods, kept at one of two through voluntary disruptions (a node drain, a cluster
 * upgrade): the webhooks, though failurePolicy Ignore, should answer, and leader election hands over
 * faster to a standby that is already running. Only with two replicas or more: with one, minAvailable 1
 * would block every drain of its node.
 */
export function disruptionBudget(ns: string): Obj {
  return {
    apiVersion: 'policy/v1',
    kind: 'PodDisruptionBudget',
    metadata: { name: NAME, namespace: ns, labels },
    spec: { minAvailable: 1, selector: { matchLabels: OPERATOR_SELECTOR } },
  };
}

export function operatorManifests(options: ManifestOptions = {}): Obj[] {
  const ns = options.namespace ?? DEFAULT_OPERATOR_NAMESPACE;
  const webhooks = options.webhooks ?? true;
  const namespaces = tenantNamespaces(options);
  const objects: Obj[] = [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { ...labels, ...RESTRICTED_NAMESPACE_LABELS } } },
    etcdClusterCRD(),
    etcdBackupCRD(),
    etcdBackupScheduleCRD(),
    etcdRestoreCRD(),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NAME, namespace: ns, labels } },
    ...accessObjects(ns, namespaces, webhooks),
    ...metricsAccessObjects(ns),
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: { name: NAME, namespace: ns, labels }, rules: namespaceRules() },
    {
      apiVersion: 'rbac.authorization.k8s.io/v1',
      kind: 'RoleBinding',
      metadata: { name: NAME, namespace: ns, labels },
      roleRef: { apiGroup: 'rbac.authorization.k8s.io', kind: 'Role', name: NAME },
      subjects: [{ kind: 'ServiceAccount', name: NAME, namespace: ns }],
    },
    deployment(ns, options, namespaces, webhooks),
  ];
  if ((options.replicas ?? 2) > 1) objects.push(disruptionBudget(ns));
  if (webhooks) objects.push(...webhookObjects(ns, namespaces));
  return objects;
}

function deployment(ns: string, options: ManifestOptions, namespaces: readonly string[] | undefined, webhooks: boolean): Obj {
  const selector = OPERATOR_SELECTOR;
  const env = (name: string, value: string): Record<string, unknown> => ({ name, value });
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace: ns, labels },
    spec: {
      replicas: options.replicas ?? 2,
      // A new replica is ready (webhook serving) before an old one goes, so that warnings and defaulting by
      // the webhooks (failurePolicy Ignore) are not skipped during an upgrade.
      strategy: { type: 'RollingUpdate', rollingUpdate: { maxUnavailable: 0, maxSurge: 1 } },
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...labels, ...selector } },
        spec: {
          serviceAccountName: NAME,
          securityContext: OPERATOR_POD_SECURITY,
          affinity: {
            podAntiAffinity: {
              preferredDuringSchedulingIgnoredDuringExecution: [{ weight: 100, podAffinityTerm: { labelSelector: { matchLabels: selector }, topologyKey: 'kubernetes.io/hostname' } }],
            },
          },
          containers: [
            {
              name: 'operator',
              image: options.image ?? OPERATOR_IMAGE,
              imagePullPolicy: 'IfNotPresent',
              env: [
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                // The tenant namespaces, comma-separated; empty: every namespace (cluster-wide). Always set, so
                // that the chart has one place to template it.
                env('WATCH_NAMESPACES', namespaces?.join(',') ?? ''),
                env('WEBHOOKS', String(webhooks)),
                env('WEBHOOK_SERVICE', WEBHOOK_SERVICE),
                env('CERT_DIR', '/tmp/webhook-certs'),
                env('PEER_WAIT_IMAGE', options.peerWaitImage ?? PEER_WAIT_IMAGE),
                // Backup Jobs and restore init containers run the agent from the operator's own image.
                env('AGENT_IMAGE', options.image ?? OPERATOR_IMAGE),
                env('CRASHLOOP_GRACE_SECONDS', String(options.crashLoopGraceSeconds ?? DEFAULT_CRASHLOOP_GRACE_SECONDS)),
                env('STEP_DEADLINE_SECONDS', String(options.stepDeadlineSeconds ?? 120)),
                env('CA_ROTATION_OVERLAP_SECONDS', String(options.caRotationOverlapSeconds ?? DEFAULT_CA_ROTATION_OVERLAP_SECONDS)),
                env('CLUSTER_DOMAIN', options.clusterDomain ?? DEFAULT_CLUSTER_DOMAIN),
                // Whose pods each cluster's NetworkPolicy lets scrape the members' metrics port.
                env('METRICS_NAMESPACES', (options.metricsNamespaces ?? DEFAULT_METRICS_NAMESPACES).join(',')),
                env('METRICS_PORT', String(OPERATOR_METRICS_PORT)),
                env('LOG_LEVEL', options.logLevel ?? 'info'),
              ],
              ports: [
                { name: 'probes', containerPort: 8081 },
                // /metrics over HTTPS, for bearer tokens bound to the metrics-reader ClusterRole (the probes serve no metrics).
                { name: 'metrics', containerPort: OPERATOR_METRICS_PORT },
                { name: 'webhook', containerPort: 9443 },
              ],
              livenessProbe: { httpGet: { path: '/healthz', port: 'probes' }, periodSeconds: 10, failureThreshold: 3 },
              readinessProbe: { httpGet: { path: '/readyz', port: 'probes' }, periodSeconds: 2 },
              resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '512Mi' } },
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [{ name: 'tmp', mountPath: '/tmp' }],
            },
          ],
          volumes: [{ name: 'tmp', emptyDir: { sizeLimit: '16Mi' } }],
        },
      },
    },
  };
}

/**
 * The webhooks are failurePolicy Ignore: while the operator is down (crashed, scaled to 0, being upgraded),
 * a Fail policy would refuse every edit of every EtcdCluster, including the `paused` or `replicas` change a
 * person needs to recover. Nothing is lost by skipping them: the validating webhook checks exactly the CRD
 * schema and its CEL rules (api/defaults.ts mirrors them), which the API server enforces anyway, and the
 * mutating one applies the schema's own defaults. Only what CEL cannot express is skipped: the admission
 * warnings (a single member, even replicas, emptyDir, antiAffinity None), which is why the webhooks stay; the
 * operator still reports even replicas as the EvenReplicas condition. The backup kinds' validating webhooks
 * check what the CRD cannot (a cron expression, a name too long for the label it becomes); skipped, those are
 * reported by the controllers, as before (a schedule's Ready=False, InvalidSchedule), or fail the backup.
 */
function webhookObjects(ns: string, namespaces: readonly string[] | undefined): Obj[] {
  const selector = OPERATOR_SELECTOR;
  // A namespace-scoped operator answers for its tenant namespaces only: objects elsewhere are another
  // install's business (or nobody's), and must not be defaulted or judged by this one.
  const namespaceSelector = (): Record<string, unknown> =>
    namespaces ? { namespaceSelector: { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: [...namespaces] }] } } : {};
  const clientConfig = (path: string): Record<string, unknown> => ({ service: { name: WEBHOOK_SERVICE, namespace: ns, path, port: 443 } });
  const rulesFor = (resource: string, operations: readonly string[]): Record<string, unknown>[] => [{ apiGroups: [GROUP], apiVersions: ['v1alpha1'], operations: [...operations], resources: [resource], scope: 'Namespaced' }];
  const rules = rulesFor('etcdclusters', ['CREATE', 'UPDATE']);
  const validating = Object.entries(VALIDATING_WEBHOOKS).map(([resource, w]) => ({
    name: w.name,
    clientConfig: clientConfig(w.path),
    rules: rulesFor(resource, w.operations),
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Ignore',
    timeoutSeconds: 5,
    ...namespaceSelector(),
  }));
  return [
    { apiVersion: 'v1', kind: 'Service', metadata: { name: WEBHOOK_SERVICE, namespace: ns, labels }, spec: { selector, ports: [{ name: 'webhook', port: 443, targetPort: 'webhook' }] } },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'MutatingWebhookConfiguration',
      metadata: { name: MUTATING_WEBHOOK, labels },
      webhooks: [{ name: MUTATING_WEBHOOK_NAME, clientConfig: clientConfig('/default-etcdcluster'), rules, sideEffects: 'None', admissionReviewVersions: ['v1'], failurePolicy: 'Ignore', timeoutSeconds: 5, reinvocationPolicy: 'Never', ...namespaceSelector() }],
    },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: VALIDATING_WEBHOOK, labels },
      webhooks: validating,
    },
  ];
}
