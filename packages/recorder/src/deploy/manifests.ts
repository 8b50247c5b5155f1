// Everything that runs the change recorder, generated from code like the etcd operator's: the CRD, a
// ServiceAccount with least-privilege RBAC, the volume its records live on, a one-replica Deployment (which
// mounts the credentials Secrets of the object stores ChangeRecorders write to), and the Service of its
// read-only history endpoint. The recorded kinds' rules are derived from the kinds to record
// (the ChangeRecorders' spec.resources, or the defaults): get, list and watch on exactly those. Events about
// ChangeRecorders go to the `default` namespace (they are cluster-scoped), through a Role there. With
// usersWebhook, also the validating admission webhook that tells who made each change (attribution/webhook.ts),
// called for UPDATE and DELETE of the same recorded kinds, and the RBAC for its certificate and CA.
import { restrictedContainerSecurity, restrictedPodSecurity } from '@quorum/kit';
import type { KubeObject } from '@quorum/runtime';
import { API_VERSION, DEFAULT_RESOURCES, KIND, OPTIONAL_DEFAULT_RESOURCES, type ChangeRecorder, type GroupKind } from '../api/changerecorder.ts';
import { applyDefaults } from '../api/defaults.ts';
import { changeRecorderCRD } from '../api/crd.ts';
import {
  USERS_WEBHOOK_CERT_SECRET,
  USERS_WEBHOOK_CONFIGURATION,
  USERS_WEBHOOK_NAME,
  USERS_WEBHOOK_PATH,
  WEBHOOK_PORT,
  WEBHOOK_PORT_NAME,
  WEBHOOK_SERVICE_PORT,
} from '../attribution/webhook.ts';
import { pluralOf } from '../kind-names.ts';
import { HISTORY_PORT, HISTORY_PORT_NAME, HISTORY_SERVICE } from '../history/protocol.ts';
import { DEFAULT_CREDENTIALS_ROOT, LEASE_NAME } from '../operator/config.ts';
import { credentialsSecretOf, storageTarget } from '../store/target.ts';

export const RECORDER_VERSION = '0.1.0';
export const RECORDER_IMAGE = `ghcr.io/quorum-dev/change-recorder:${RECORDER_VERSION}`;
export const NAME = 'quorum-recorder';
export const DATA_CLAIM = 'quorum-recorder-data';
export const STORAGE_ROOT = '/var/lib/quorum-recorder';
/** The Role (in EVENTS_NAMESPACE) that lets the recorder write Events about ChangeRecorders. */
export const EVENTS_ROLE = 'quorum-recorder-events';
/** The Role that lets callers reach the history endpoint through the API server's proxy. */
export const HISTORY_PROXY_ROLE = 'quorum-history-proxy';
/** The ClusterRole and Role of the users webhook: its CA in the configuration, its certificate Secret. */
export const USERS_WEBHOOK_ROLE = 'quorum-recorder-webhook';
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
  /** Kinds to grant get, list and watch on; default the ChangeRecorder default kinds, Quorum's optional ones included. */
  kinds?: readonly GroupKind[];
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
  logLevel?: string;
}

type Obj = KubeObject & Record<string, unknown>;

const labels = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'change-recorder', 'app.kubernetes.io/version': RECORDER_VERSION };
const selector = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'change-recorder' };

/** get, list and watch on each kind to record, one rule per API group. */
export function recordedKindRules(kinds: readonly GroupKind[], plurals: Readonly<Record<string, string>> = {}): Record<string, unknown>[] {
  const byGroup = new Map<string, Set<string>>();
  for (const { group, kind } of kinds) {
    let resources = byGroup.get(group);
    if (!resources) byGroup.set(group, (resources = new Set()));
    resources.add(plurals[`${group}/${kind}`] ?? pluralOf(kind));
  }
  return [...byGroup.entries()]
    .sort(([a], [b]) => a.localeCompare(b))
    .map(([group, resources]) => ({ apiGroups: [group], resources: [...resources].sort(), verbs: ['get', 'list', 'watch'] }));
}

/** Cluster-wide rules: one line per call the recorder makes, then the recorded kinds. */
/** The kinds a ChangeRecorder without spec.resources may record: the defaults, and Quorum's own where served. */
export const ALL_DEFAULT_RESOURCES: readonly GroupKind[] = [...DEFAULT_RESOURCES, ...OPTIONAL_DEFAULT_RESOURCES];

/** The namespace the Events about ChangeRecorders go to: they are cluster-scoped, and Events are not. */
export const EVENTS_NAMESPACE = 'default';

export function clusterRules(kinds: readonly GroupKind[] = ALL_DEFAULT_RESOURCES, plurals?: Readonly<Record<string, string>>): Record<string, unknown>[] {
  return [
    { apiGroups: ['history.quorum.dev'], resources: ['changerecorders'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['history.quorum.dev'], resources: ['changerecorders/status'], verbs: ['get', 'patch', 'update'] },
    // spec.namespaces.selector: the namespaces whose labels match are watched.
    { apiGroups: [''], resources: ['namespaces'], verbs: ['get', 'list', 'watch'] },
    // The history endpoint: who a caller is, and whether they may read an object (system:auth-delegator's rules).
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
    ...recordedKindRules(kinds, plurals),
  ];
}

/** Events about ChangeRecorders (an unknown kind), in EVENTS_NAMESPACE only. */
export function eventRules(): Record<string, unknown>[] {
  return [{ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] }];
}

export function namespaceRules(): Record<string, unknown>[] {
  return [
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], verbs: ['create'] },
    { apiGroups: ['coordination.k8s.io'], resources: ['leases'], resourceNames: [LEASE_NAME], verbs: ['get', 'update'] },
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
 * The users webhook's configuration and the RBAC it needs, apart from the recorder's own so that an install
 * without it grants nothing for it. failurePolicy Ignore: the webhook only listens, and a recorder that is
 * down, slow or unreachable must never block or refuse a write (those changes' records say NotSeen).
 * sideEffects NoneOnDryRun: dry runs still reach it, and it ignores them. The CA is patched in by the recorder.
 */
export function usersWebhookObjects(ns: string, kinds: readonly GroupKind[] = ALL_DEFAULT_RESOURCES, plurals?: Readonly<Record<string, string>>): Obj[] {
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
        { apiGroups: [''], resources: ['secrets'], resourceNames: [USERS_WEBHOOK_CERT_SECRET], verbs: ['get'] },
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

export function recorderManifests(options: RecorderManifestOptions = {}): Obj[] {
  const ns = options.namespace ?? 'quorum-system';
  const rbac = 'rbac.authorization.k8s.io';
  const binding = (kind: 'ClusterRoleBinding' | 'RoleBinding', name: string, roleKind: 'ClusterRole' | 'Role', subjects: Record<string, unknown>[], namespace = ns): Obj => ({
    apiVersion: `${rbac}/v1`,
    kind,
    metadata: { name, ...(kind === 'RoleBinding' ? { namespace } : {}), labels },
    roleRef: { apiGroup: rbac, kind: roleKind, name },
    subjects,
  });
  const self = [{ kind: 'ServiceAccount', name: NAME, namespace: ns }];
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: ns, labels } },
    changeRecorderCRD(),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: { name: NAME, namespace: ns, labels } },
    { apiVersion: `${rbac}/v1`, kind: 'ClusterRole', metadata: { name: NAME, labels }, rules: clusterRules(options.kinds, options.plurals) },
    binding('ClusterRoleBinding', NAME, 'ClusterRole', self),
    { apiVersion: `${rbac}/v1`, kind: 'Role', metadata: { name: NAME, namespace: ns, labels }, rules: namespaceRules() },
    binding('RoleBinding', NAME, 'Role', self),
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
    ...(options.usersWebhook ? usersWebhookObjects(ns, options.kinds, options.plurals) : []),
  ];
}

function deployment(ns: string, options: RecorderManifestOptions): Obj {
  const env = (name: string, value: string): Record<string, unknown> => ({ name, value });
  const secrets = [...new Set(options.storageSecrets ?? [])].sort();
  // Volume names are DNS labels, Secret names may be longer subdomains: the volume is numbered, its folder named after the Secret.
  const secretVolumes = secrets.map((secretName, i) => ({ name: `credentials-${i}`, secret: { secretName, optional: true, defaultMode: 0o440 } }));
  const secretMounts = secrets.map((secretName, i) => ({ name: `credentials-${i}`, mountPath: `${DEFAULT_CREDENTIALS_ROOT}/${secretName}`, readOnly: true }));
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
                env('LOG_LEVEL', options.logLevel ?? 'info'),
              ],
              ports: [
                { name: 'probes', containerPort: 8081 },
                { name: HISTORY_PORT_NAME, containerPort: HISTORY_PORT },
                { name: WEBHOOK_PORT_NAME, containerPort: WEBHOOK_PORT },
              ],
              livenessProbe: { httpGet: { path: '/healthz', port: 'probes' }, periodSeconds: 10, failureThreshold: 3 },
              readinessProbe: { httpGet: { path: '/readyz', port: 'probes' }, periodSeconds: 5 },
              resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '512Mi' } },
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [{ name: 'records', mountPath: STORAGE_ROOT }, { name: 'tmp', mountPath: '/tmp' }, ...secretMounts],
            },
          ],
          volumes: [{ name: 'records', persistentVolumeClaim: { claimName: DATA_CLAIM } }, { name: 'tmp', emptyDir: { sizeLimit: '16Mi' } }, ...secretVolumes],
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
