// Everything that runs the change recorder, generated from code like the etcd operator's: the CRD, a
// ServiceAccount with least-privilege RBAC, the volume its records live on, a one-replica Deployment (which
// mounts the credentials Secrets of the object stores ChangeRecorders write to), and the Service of its
// read-only history endpoint.
//
// RBAC is namespaced by default: list and watch on the kinds to record (the ChangeRecorders' spec.resources,
// or the defaults, which leave Secrets out) are granted by a Role and RoleBinding in each namespace the
// ChangeRecorders name (rbac.ts derives both), never in kube-system; only with clusterWide (asked for, and
// needed by a ChangeRecorder that chooses namespaces by selector or all) by a ClusterRole rule. The
// ClusterRole otherwise holds only the recorder's own calls (its ChangeRecorders, their status, the history
// endpoint's reviews) and cluster-scoped kinds a spec lists by name. Every rule is one call the code makes
// (test/unit/rbac-calls.test.ts compares them). Events about ChangeRecorders go to the `default` namespace
// (they are cluster-scoped), through a Role there. With usersWebhook, also the validating admission webhook
// that tells who made each change (attribution/webhook.ts), called for UPDATE and DELETE of the same kinds in
// the same namespaces, the RBAC for its certificate and CA, and a NetworkPolicy that admits its port only from
// the API server's addresses (where a policy agent enforces it; usersWebhookPolicy).
import { isIP } from 'node:net';
import { ingressPolicy, RESTRICTED_NAMESPACE_LABELS, restrictedContainerSecurity, restrictedPodSecurity, type IpBlockPeer } from '@quorum/kit';
import type { KubeObject } from '@quorum/runtime';
import { API_VERSION, DEFAULT_RESOURCES, KIND, OPTIONAL_DEFAULT_RESOURCES, type ChangeRecorder, type GroupKind } from '../api/changerecorder.ts';
import { applyDefaults } from '../api/defaults.ts';
import { changeRecorderCRD } from '../api/crd.ts';
import {
  USERS_WEBHOOK_CERT_SECRET,
  USERS_WEBHOOK_CONFIGURATION,
  USERS_WEBHOOK_NAME,
  USERS_WEBHOOK_PATH,
  WEBHOOK_CLIENT_CA_CONFIGMAP,
  WEBHOOK_PORT,
  WEBHOOK_PORT_NAME,
  WEBHOOK_SERVICE_PORT,
} from '../attribution/webhook.ts';
import { pluralOf } from '../kind-names.ts';
import { HISTORY_PORT, HISTORY_PORT_NAME, HISTORY_SERVICE } from '../history/protocol.ts';
import { DEFAULT_CREDENTIALS_ROOT, LEASE_NAME, METRICS_PORT } from '../operator/config.ts';
import { WATCH_VERBS } from '../recorder/discovery.ts';
import { REDACTION_KEYS_SECRET } from '../store/redaction-keys.ts';
import { credentialsSecretOf, storageTarget } from '../store/target.ts';

export const RECORDER_VERSION = '0.1.0';
export const RECORDER_IMAGE = `ghcr.io/quorum-dev/change-recorder:${RECORDER_VERSION}`;
export const NAME = 'quorum-recorder';
export const DATA_CLAIM = 'quorum-recorder-data';
export const STORAGE_ROOT = '/var/lib/quorum-recorder';
/** The Role (in EVENTS_NAMESPACE) that lets the recorder write Events about ChangeRecorders. */
export const EVENTS_ROLE = 'quorum-recorder-events';
/** What a scraper (Prometheus' service account) is bound to, to read the recorder's /metrics. */
export const METRICS_READER_CLUSTER_ROLE = `${NAME}-metrics-reader`;
/** The Role that lets callers reach the history endpoint through the API server's proxy. */
export const HISTORY_PROXY_ROLE = 'quorum-history-proxy';
/** The Role (and RoleBinding), in each recorded namespace, that lets the recorder list and watch the recorded kinds there. */
export const RECORDED_ROLE = 'quorum-recorder-recorded';
/** The namespace no ChangeRecorder may make the recorder read: the control plane's own objects and credentials. */
export const REFUSED_NAMESPACE = 'kube-system';
/** The label the API server puts on every namespace, with its name: what the users webhook's namespaceSelector matches. */
const NAMESPACE_NAME_LABEL = 'kubernetes.io/metadata.name';
/** The ClusterRole and Role of the users webhook: its CA in the configuration, its certificate Secret. */
export const USERS_WEBHOOK_ROLE = 'quorum-recorder-webhook';
/** The probes' port (/healthz, /readyz; config.ts's PROBE_PORT default, which the manifests leave as it is). */
export const PROBE_PORT = 8081;
/** Where the webhook's certificate files go: an emptyDir, the root filesystem being read-only. */
const CERT_DIR = '/tmp/webhook-certs';
/**
 * The API server gives up on the webhook after this long, then goes on (failurePolicy Ignore): the webhook
 * only remembers a name, so a slow answer means a recorder in trouble, and no write should wait for it.
 */
export const USERS_WEBHOOK_TIMEOUT_SECONDS = 2;

export interface RecorderManifestOptions {
  namespace?: string;
  image?: string;
  /**
   * Kinds to grant list and watch on; default the ChangeRecorder default kinds, Quorum's optional ones
   * included. A kind with `namespaced: false` (cluster-scoped, as discovery says) is granted cluster-wide,
   * there being no namespace to grant it in; the others in the recorded namespaces.
   */
  kinds?: readonly RecordedKind[];
  /**
   * The namespaces the recorder may list and watch the recorded kinds in, one Role and RoleBinding
   * (RECORDED_ROLE) each: the namespaces the ChangeRecorders name (rbac.ts derives them). Default: `default`,
   * the sample's. kube-system is refused. Unused with clusterWide.
   */
  recordedNamespaces?: readonly string[];
  /**
   * Grant the recorded kinds in every namespace, and Namespaces (for spec.namespaces.selector), by ClusterRole
   * rules instead of the Roles; default false. Needed by ChangeRecorders that choose namespaces by selector or
   * all, which are refused without it (clusterWideRequiredBy).
   */
  clusterWide?: boolean;
  /** The ChangeRecorders (described) that need clusterWide: the manifests are refused without it. */
  clusterWideRequiredBy?: readonly string[];
  /** Resource names of kinds whose plural is not the usual English one (`group/Kind` → plural). */
  plurals?: Readonly<Record<string, string>>;
  /** Size of the records' volume (default 1Gi). */
  storageSize?: string;
  storageClassName?: string;
  /**
   * Secrets in the recorder's namespace to mount for ChangeRecorders that write to object stores (their
   * spec.storage.{s3,gcs,azure}.credentialsSecret; storageSecretsOf() lists them), each read-only at
   * `<CREDENTIALS_ROOT>/<name>`. A pod can mount only what its spec names, so a Secret a ChangeRecorder names
   * later needs the manifests applied again with it (the Deployment then rolls). Each is optional: a Secret
   * created after the recorder appears in its folder within the kubelet's sync period.
   */
  storageSecrets?: readonly string[];
  /**
   * Who may reach the history endpoint through the API server (get on services/proxy for its Service); what
   * each caller sees is then decided per object by their own RBAC. Default: every authenticated user.
   */
  historyGroups?: readonly string[];
  /**
   * Register the validating admission webhook that tells records who made each change (for ChangeRecorders
   * with spec.attribution.users), on the same kinds as the role; default false. The Deployment, its webhook
   * port and the Service port are the same either way: the recorder serves the webhook only when told to.
   */
  usersWebhook?: boolean;
  /**
   * The CA (PEM) of the client certificate the API server presents to admission webhooks: the users webhook
   * then answers only callers with a certificate it signed (a pod's forged AdmissionReview fails the TLS
   * handshake). Kept in the ConfigMap WEBHOOK_CLIENT_CA_CONFIGMAP. Unset: any caller that reaches the port.
   */
  webhookClientCA?: string;
  /** The common names allowed among those certificates (e.g. localkube's `kube-apiserver-webhook-client`); default any. */
  webhookClientNames?: readonly string[];
  /**
   * The API server's addresses (CIDRs): with usersWebhook, the recorder's NetworkPolicy admits the webhook's
   * port from these only. Unset: from every address but podCIDRs'. Set it where pods share the nodes' subnets
   * (EKS's VPC CNI): there no CIDR tells a pod from the API server.
   */
  apiServerCIDRs?: readonly string[];
  /** The cluster's pod CIDRs, refused the webhook's port when apiServerCIDRs is unset (the install reads the Nodes' spec.podCIDRs). */
  podCIDRs?: readonly string[];
  logLevel?: string;
}

type Obj = KubeObject & Record<string, unknown>;

/**
 * The recorder's namespace admits only restricted pods (the recorder's is one: restrictedPodSecurity), and
 * warns and audits against the same level, whatever the cluster's default. The etcd operator labels its
 * namespace alike: an install of both into quorum-system writes the same values.
 */
export const POD_SECURITY_LABELS: Readonly<Record<string, string>> = RESTRICTED_NAMESPACE_LABELS;

/** A kind to record, and whether it lives in namespaces (unset: it does). */
export type RecordedKind = GroupKind & { namespaced?: boolean };

/** The verbs the recorder uses on a recorded kind: its informers list and watch (WATCH_VERBS), and nothing else reads them. */
export const RECORDED_VERBS: readonly string[] = WATCH_VERBS;

/** Where the recorded kinds are granted: every namespace, or these (sorted, kube-system refused). */
export interface RecordedScope {
  clusterWide: boolean;
  namespaces: string[];
}

/** The scope the options ask for; throws when a ChangeRecorder needs cluster-wide RBAC without it, or names kube-system. */
export function recordedScope(options: Pick<RecorderManifestOptions, 'recordedNamespaces' | 'clusterWide' | 'clusterWideRequiredBy'> = {}): RecordedScope {
  const clusterWide = options.clusterWide === true;
  const needing = options.clusterWideRequiredBy ?? [];
  if (!clusterWide && needing.length > 0) {
    throw new Error(`the recorder's RBAC is namespaced, and these ChangeRecorders choose namespaces that are not known at install time: ${needing.join('; ')}. Name the namespaces (spec.namespaces.names), or install it cluster-wide (quorum history install --cluster-wide, Helm rbac.clusterWide)`);
  }
  const namespaces = [...new Set(options.recordedNamespaces ?? [EVENTS_NAMESPACE])].sort();
  if (namespaces.includes(REFUSED_NAMESPACE)) throw new Error(`the recorder is never granted namespace ${REFUSED_NAMESPACE} (the control plane's objects and credentials): take it out of spec.namespaces.names`);
  return { clusterWide, namespaces };
}

const labels = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'change-recorder', 'app.kubernetes.io/version': RECORDER_VERSION };
const selector = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'change-recorder' };

/** list and watch on each kind to record, one rule per API group. */
export function recordedKindRules(kinds: readonly GroupKind[], plurals: Readonly<Record<string, string>> = {}): Record<string, unknown>[] {
  const byGroup = new Map<string, Set<string>>();
  for (const { group, kind } of kinds) {
    let resources = byGroup.get(group);
    if (!resources) byGroup.set(group, (resources = new Set()));
    resources.add(plurals[`${group}/${kind}`] ?? pluralOf(kind));
  }
  return [...byGroup.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({ apiGroups: [group], resources: [...resources].sort(), verbs: [...RECORDED_VERBS] }));
}

/** The kinds a ChangeRecorder without spec.resources may record: the defaults, and Quorum's own where served. */
export const ALL_DEFAULT_RESOURCES: readonly GroupKind[] = [...DEFAULT_RESOURCES, ...OPTIONAL_DEFAULT_RESOURCES];

/** The namespace the Events about ChangeRecorders go to: they are cluster-scoped, and Events are not. */
export const EVENTS_NAMESPACE = 'default';

/** The recorder's own cluster-wide calls, one rule each, whatever it records. */
export function ownClusterRules(): Record<string, unknown>[] {
  return [
    // The controller's informer, and the history endpoint's list of the object stores ChangeRecorders name.
    { apiGroups: ['history.quorum.dev'], resources: ['changerecorders'], verbs: ['list', 'watch'] },
    // writeStatus: one merge patch to /status.
    { apiGroups: ['history.quorum.dev'], resources: ['changerecorders/status'], verbs: ['patch'] },
    // The history endpoint and /metrics (HTTPS): who a caller is, and whether they may read an object or get
    // /metrics (system:auth-delegator's rules).
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ];
}

/** spec.namespaces.selector: the namespaces whose labels match are listed and watched (cluster-wide only). */
export const NAMESPACE_SELECTOR_RULE: Readonly<Record<string, unknown>> = { apiGroups: [''], resources: ['namespaces'], verbs: [...RECORDED_VERBS] };

/**
 * The ClusterRole's rules: the recorder's own calls; then, cluster-wide, Namespaces and every recorded kind,
 * else only the recorded kinds that are cluster-scoped (the namespaced ones are in each namespace's Role).
 */
export function clusterRules(kinds: readonly RecordedKind[] = ALL_DEFAULT_RESOURCES, plurals?: Readonly<Record<string, string>>, clusterWide = false): Record<string, unknown>[] {
  if (clusterWide) return [...ownClusterRules(), { ...NAMESPACE_SELECTOR_RULE }, ...recordedKindRules(kinds, plurals)];
  return [...ownClusterRules(), ...recordedKindRules(kinds.filter((k) => k.namespaced === false), plurals)];
}

/** The rules of each recorded namespace's Role: list and watch on the namespaced kinds to record. */
export function namespacedRecordedRules(kinds: readonly RecordedKind[] = ALL_DEFAULT_RESOURCES, plurals?: Readonly<Record<string, string>>): Record<string, unknown>[] {
  return recordedKindRules(kinds.filter((k) => k.namespaced !== false), plurals);
}

/** Events about ChangeRecorders (an unknown kind), in EVENTS_NAMESPACE only. */
export function eventRules(): Record<string, unknown>[] {
  return [{ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] }];
}

/** The recorder's own namespace: its Lease, and the Secret of the stores' redaction keys (redaction-keys.ts). */
export function namespaceRules(): Record<string, unknown>[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEASE_NAME], verbs: ['get', 'update'] },
    // The recorder makes the keys' Secret when it first needs it; create cannot be limited to a name.
    { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: [REDACTION_KEYS_SECRET], verbs: ['get', 'patch'] },
  ];
}

/**
 * What the webhook is called for: UPDATE and DELETE (the changes records are taken for) of the recorded kinds,
 * in every version and scope, whole objects only (a status write never names the user of a record).
 */
export function usersWebhookRules(kinds: readonly GroupKind[], plurals: Readonly<Record<string, string>> = {}): Record<string, unknown>[] {
  return recordedKindRules(kinds, plurals).map((rule) => ({ apiGroups: rule['apiGroups'], apiVersions: ['*'], operations: ['UPDATE', 'DELETE'], resources: rule['resources'], scope: '*' }));
}

/**
 * Which namespaces' requests the API server sends the webhook: the recorded ones (by the name label the API
 * server sets on every namespace), or, cluster-wide, all but kube-system. Cluster-scoped objects are sent
 * whatever the selector says, as the API server does.
 */
export function usersWebhookNamespaceSelector(scope: RecordedScope): Record<string, unknown> {
  return scope.clusterWide
    ? { matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: 'NotIn', values: [REFUSED_NAMESPACE] }] }
    : { matchExpressions: [{ key: NAMESPACE_NAME_LABEL, operator: 'In', values: [...scope.namespaces] }] };
}

/**
 * The users webhook's configuration and the RBAC it needs, apart from the recorder's own so that an install
 * without it grants nothing for it. failurePolicy Ignore: the webhook only listens, and a recorder that is
 * down, slow or unreachable must never block or refuse a write (those changes' records say NotSeen).
 * sideEffects NoneOnDryRun: dry runs still reach it, and it ignores them. The CA is patched in by the recorder.
 */
export function usersWebhookObjects(ns: string, kinds: readonly GroupKind[] = ALL_DEFAULT_RESOURCES, plurals?: Readonly<Record<string, string>>, scope: RecordedScope = recordedScope()): Obj[] {
  const rbac = 'rbac.authorization.k8s.io';
  const subjects = [{ kind: 'ServiceAccount', name: NAME, namespace: ns }];
  return [
    {
      apiVersion: `${rbac}/v1`,
      kind: 'ClusterRole',
      metadata: { name: USERS_WEBHOOK_ROLE, labels },
      rules: [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: [USERS_WEBHOOK_CONFIGURATION], verbs: ['get', 'patch'] }],
    },
    { apiVersion: `${rbac}/v1`, kind: 'ClusterRoleBinding', metadata: { name: USERS_WEBHOOK_ROLE, labels }, roleRef: { apiGroup: rbac, kind: 'ClusterRole', name: USERS_WEBHOOK_ROLE }, subjects },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'Role',
      metadata: { name: USERS_WEBHOOK_ROLE, namespace: ns, labels },
      rules: [
        // The first recorder to start makes the certificate Secret; create cannot be limited to a name.
        { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
        // update: the serving certificate is renewed in place once a third of its life is left (ensureServingCertificate).
        { apiGroups: [''], resources: ['secrets'], resourceNames: [USERS_WEBHOOK_CERT_SECRET], verbs: ['get', 'update'] },
      ],
    },
    { apiVersion: `${rbac}/v1`, kind: 'RoleBinding', metadata: { name: USERS_WEBHOOK_ROLE, namespace: ns, labels }, roleRef: { apiGroup: rbac, kind: 'Role', name: USERS_WEBHOOK_ROLE }, subjects },
    {
      apiVersion: 'admissionregistration.k8s.io/v1',
      kind: 'ValidatingWebhookConfiguration',
      metadata: { name: USERS_WEBHOOK_CONFIGURATION, labels },
      webhooks: [
        {
          name: USERS_WEBHOOK_NAME,
          clientConfig: { service: { name: HISTORY_SERVICE, namespace: ns, path: USERS_WEBHOOK_PATH, port: WEBHOOK_SERVICE_PORT } },
          rules: usersWebhookRules(kinds, plurals),
          namespaceSelector: usersWebhookNamespaceSelector(scope),
          failurePolicy: 'Ignore',
          sideEffects: 'NoneOnDryRun',
          timeoutSeconds: USERS_WEBHOOK_TIMEOUT_SECONDS,
          admissionReviewVersions: ['v1'],
          matchPolicy: 'Equivalent',
        },
      ],
    },
  ];
}

/** A CIDR (`address/prefix`, IPv4 or IPv6) as written; throws, naming the option, when it is not one. */
function checkedCIDR(cidr: string, option: string): string {
  const [address = '', prefix, ...rest] = cidr.trim().split('/');
  const family = isIP(address);
  const bits = Number(prefix);
  if (family === 0 || rest.length > 0 || prefix === undefined || !/^\d+$/.test(prefix) || bits > (family === 4 ? 32 : 128)) {
    throw new Error(`${option}: ${JSON.stringify(cidr)} is not a CIDR (an address and a prefix length, e.g. 10.0.0.0/28 or fd00::/64)`);
  }
  return cidr.trim();
}

const uniqueSorted = (values: readonly string[]): string[] => [...new Set(values)].sort();

/**
 * Who may call the users webhook's port: the API server's CIDRs when given; otherwise every address but the
 * pods' (each family with pod CIDRs: its whole range less them; with none known, both ranges whole, which
 * admits every caller, as without a policy: the install warns).
 */
export function webhookCallerPeers(callers: Pick<RecorderManifestOptions, 'apiServerCIDRs' | 'podCIDRs'> = {}): IpBlockPeer[] {
  if (callers.apiServerCIDRs?.length) return uniqueSorted(callers.apiServerCIDRs.map((c) => checkedCIDR(c, 'apiServerCIDRs'))).map((cidr) => ({ ipBlock: { cidr } }));
  const pods = uniqueSorted((callers.podCIDRs ?? []).map((c) => checkedCIDR(c, 'podCIDRs')));
  const [v4, v6] = [pods.filter((c) => !c.includes(':')), pods.filter((c) => c.includes(':'))];
  const everyBut = (cidr: string, except: string[]): IpBlockPeer => ({ ipBlock: { cidr, ...(except.length ? { except } : {}) } });
  return [...(v4.length || !pods.length ? [everyBut('0.0.0.0/0', v4)] : []), ...(v6.length || !pods.length ? [everyBut('::/0', v6)] : [])];
}

/**
 * The recorder pod's ingress, with the users webhook: its port from the API server's addresses only
 * (webhookCallerPeers), so that no pod can post a forged AdmissionReview where a policy agent enforces it; the
 * history endpoint, /metrics and the probes from every source, as without a policy (the history endpoint and
 * /metrics authenticate each caller; the kubelet probes from the node).
 */
export function usersWebhookPolicy(ns: string, callers: Pick<RecorderManifestOptions, 'apiServerCIDRs' | 'podCIDRs'> = {}): Obj {
  return ingressPolicy({
    name: NAME,
    namespace: ns,
    labels,
    podLabels: selector,
    ingress: [{ ports: [HISTORY_PORT, METRICS_PORT, PROBE_PORT] }, { ports: [WEBHOOK_PORT], from: webhookCallerPeers(callers) }],
  });
}

/** A Role and RoleBinding in each recorded namespace: list and watch on the namespaced kinds, nothing when cluster-wide. */
export function recordedNamespaceObjects(ns: string, scope: RecordedScope, kinds: readonly RecordedKind[] = ALL_DEFAULT_RESOURCES, plurals?: Readonly<Record<string, string>>): Obj[] {
  const rules = namespacedRecordedRules(kinds, plurals);
  if (scope.clusterWide || rules.length === 0) return [];
  const rbac = 'rbac.authorization.k8s.io';
  return scope.namespaces.flatMap((namespace): Obj[] => [
    { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: RECORDED_ROLE, namespace, labels }, rules },
    {
      apiVersion: `${rbac}/v1`,
      kind: 'RoleBinding',
      metadata: { name: RECORDED_ROLE, namespace, labels },
      roleRef: { apiGroup: rbac, kind: 'Role', name: RECORDED_ROLE },
      subjects: [{ kind: 'ServiceAccount', name: NAME, namespace: ns }],
    },
  ]);
}

export function recorderManifests(options: RecorderManifestOptions = {}): Obj[] {
  const ns = options.namespace ?? 'quorum-system';
  if (options.webhookClientCA !== undefined && !options.webhookClientCA.includes('-----BEGIN CERTIFICATE-----')) {
    throw new Error("webhookClientCA must be a PEM certificate: the CA of the API server's client certificate for admission webhooks");
  }
  const rbac = 'rbac.authorization.k8s.io';
  const binding = (kind: 'ClusterRoleBinding' | 'RoleBinding', name: string, roleKind: 'ClusterRole' | 'Role', subjects: Record<string, unknown>[], namespace = ns): Obj => ({
    apiVersion: `${rbac}/v1`,
    kind,
    metadata: { name, ...(kind === 'RoleBinding' ? { namespace } : {}), labels },
    roleRef: { apiGroup: rbac, kind: roleKind, name },
    subjects,
  });
  const self = [{ kind: 'ServiceAccount', name: NAME, namespace: ns }];
  const scope = recordedScope(options);
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels: { ...labels, ...POD_SECURITY_LABELS } } },
    changeRecorderCRD(),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NAME, namespace: ns, labels } },
    { apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: { name: NAME, labels }, rules: clusterRules(options.kinds, options.plurals, scope.clusterWide) },
    binding('ClusterRoleBinding', NAME, 'ClusterRole', self),
    // Bound to nothing: bind a scraper's service account to it to let it read the recorder's /metrics.
    { apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: { name: METRICS_READER_CLUSTER_ROLE, labels }, rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
    { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: NAME, namespace: ns, labels }, rules: namespaceRules() },
    binding('RoleBinding', NAME, 'Role', self),
    ...recordedNamespaceObjects(ns, scope, options.kinds, options.plurals),
    { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: EVENTS_ROLE, namespace: EVENTS_NAMESPACE, labels }, rules: eventRules() },
    binding('RoleBinding', EVENTS_ROLE, 'Role', self, EVENTS_NAMESPACE),
    {
      apiVersion: `${rbac}/v1`,
      kind: 'Role',
      metadata: { name: HISTORY_PROXY_ROLE, namespace: ns, labels },
      // The proxy's name for the Service is scheme:name:port, and RBAC matches it exactly.
      rules: [{ apiGroups: [''], resources: ['services/proxy'], resourceNames: [`https:${HISTORY_SERVICE}:${HISTORY_PORT_NAME}`], verbs: ['get'] }],
    },
    binding('RoleBinding', HISTORY_PROXY_ROLE, 'Role', (options.historyGroups ?? ['system:authenticated']).map((name) => ({ apiGroup: rbac, kind: 'Group', name }))),
    {
      apiVersion: 'v1',
      kind: 'PersistentVolumeClaim',
      metadata: { name: DATA_CLAIM, namespace: ns, labels },
      spec: {
        accessModes: ['ReadWriteOnce'],
        resources: { requests: { storage: options.storageSize ?? '1Gi' } },
        ...(options.storageClassName ? { storageClassName: options.storageClassName } : {}),
      },
    },
    // Before the Deployment, whose pod mounts it.
    ...(options.webhookClientCA !== undefined ? [webhookClientCAConfigMap(ns, options.webhookClientCA)] : []),
    // Before the Deployment too: its pod never serves the webhook unguarded.
    ...(options.usersWebhook ? [usersWebhookPolicy(ns, options)] : []),
    deployment(ns, options),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: { name: HISTORY_SERVICE, namespace: ns, labels },
      spec: {
        selector,
        ports: [
          { name: HISTORY_PORT_NAME, port: HISTORY_PORT, targetPort: HISTORY_PORT_NAME },
          { name: WEBHOOK_PORT_NAME, port: WEBHOOK_SERVICE_PORT, targetPort: WEBHOOK_PORT_NAME },
        ],
      },
    },
    ...(options.usersWebhook ? usersWebhookObjects(ns, options.kinds, options.plurals, scope) : []),
  ];
}

/** Where the Deployment mounts the ConfigMap of the API server's client CA. */
export const WEBHOOK_CLIENT_CA_DIR = '/etc/quorum-recorder/webhook-client-ca'; // in the container

/** The ConfigMap of the API server's client CA (uninstallRecorder names it with no data to delete it). */
export function webhookClientCAConfigMap(ns: string, pem: string): Obj {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: WEBHOOK_CLIENT_CA_CONFIGMAP, namespace: ns, labels }, data: { 'ca.crt': pem } };
}

function deployment(ns: string, options: RecorderManifestOptions): Obj {
  const env = (name: string, value: string): Record<string, unknown> => ({ name, value });
  const secrets = [...new Set(options.storageSecrets ?? [])].sort();
  // Volume names are DNS labels, Secret names may be longer subdomains: the volume is numbered, its folder named after the Secret.
  const secretVolumes = secrets.map((secretName, i) => ({ name: `credentials-${i}`, secret: { secretName, optional: true, defaultMode: 0o440 } }));
  const secretMounts = secrets.map((secretName, i) => ({ name: `credentials-${i}`, mountPath: `${DEFAULT_CREDENTIALS_ROOT}/${secretName}`, readOnly: true }));
  const clientCA = options.webhookClientCA !== undefined;
  const clientCAVolumes = clientCA ? [{ name: 'webhook-client-ca', configMap: { name: WEBHOOK_CLIENT_CA_CONFIGMAP } }] : [];
  const clientCAMounts = clientCA ? [{ name: 'webhook-client-ca', mountPath: WEBHOOK_CLIENT_CA_DIR, readOnly: true }] : [];
  const clientCAEnv = clientCA
    ? [env('WEBHOOK_CLIENT_CA_FILE', `${WEBHOOK_CLIENT_CA_DIR}/ca.crt`), ...(options.webhookClientNames?.length ? [env('WEBHOOK_CLIENT_NAMES', options.webhookClientNames.join(','))] : [])]
    : [];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace: ns, labels },
    spec: {
      // One writer per volume: the records' volume is ReadWriteOnce, and two recorders must never write one
      // store. Recreate stops the old pod before the new one starts (the Lease guards the rest).
      replicas: 1,
      strategy: { type: 'Recreate' },
      selector: { matchLabels: selector },
      template: {
        metadata: { labels: { ...labels, ...selector } },
        spec: {
          serviceAccountName: NAME,
          securityContext: restrictedPodSecurity(),
          containers: [
            {
              name: 'recorder',
              image: options.image ?? RECORDER_IMAGE,
              imagePullPolicy: 'IfNotPresent',
              env: [
                { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
                { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
                env('STORAGE_ROOT', STORAGE_ROOT),
                env('CREDENTIALS_ROOT', DEFAULT_CREDENTIALS_ROOT),
                env('HISTORY_PORT', String(HISTORY_PORT)),
                env('HISTORY_SERVICE', HISTORY_SERVICE),
                env('USERS_WEBHOOK', String(options.usersWebhook ?? false)),
                env('WEBHOOK_PORT', String(WEBHOOK_PORT)),
                env('CERT_DIR', CERT_DIR),
                ...clientCAEnv,
                env('LOG_LEVEL', options.logLevel ?? 'info'),
              ],
              ports: [
                { name: 'probes', containerPort: PROBE_PORT },
                // /metrics over HTTPS, for bearer tokens bound to the metrics-reader ClusterRole (the probes serve no metrics).
                { name: 'metrics', containerPort: METRICS_PORT },
                { name: HISTORY_PORT_NAME, containerPort: HISTORY_PORT },
                { name: WEBHOOK_PORT_NAME, containerPort: WEBHOOK_PORT },
              ],
              livenessProbe: { httpGet: { path: '/healthz', port: 'probes' }, periodSeconds: 10, failureThreshold: 3 },
              readinessProbe: { httpGet: { path: '/readyz', port: 'probes' }, periodSeconds: 5 },
              resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '512Mi' } },
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [{ name: 'records', mountPath: STORAGE_ROOT }, { name: 'tmp', mountPath: '/tmp' }, ...clientCAMounts, ...secretMounts],
            },
          ],
          volumes: [{ name: 'records', persistentVolumeClaim: { claimName: DATA_CLAIM } }, { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } }, ...clientCAVolumes, ...secretVolumes],
        },
      },
    },
  };
}

/** The credentials Secrets the ChangeRecorders' object stores read, sorted, each once: recorderManifests' storageSecrets. */
export function storageSecretsOf(recorders: readonly Pick<ChangeRecorder, 'metadata' | 'spec'>[]): string[] {
  const secrets = recorders.map((r) => credentialsSecretOf(storageTarget(r.metadata.name ?? '', applyDefaults(r.spec))));
  return [...new Set(secrets.filter((s) => s !== undefined))].sort();
}

/** The sample `npm start` installs: record the default kinds in namespace `default`. */
export function sampleChangeRecorder(namespace = 'default'): ChangeRecorder & { apiVersion: string; kind: string } {
  return { apiVersion: API_VERSION, kind: KIND, metadata: { name: namespace }, spec: { namespaces: { names: [namespace] } } };
}
