// Everything that runs the RBAC manager, generated from code: the CRD, a ServiceAccount with the RBAC of
// rbac.ts, a Deployment (two replicas: the webhook is fail-closed, so one pod restarting must not stop every
// definition edit), the Service of the webhook and its fail-closed ValidatingWebhookConfiguration.
import { restrictedContainerSecurity, restrictedPodSecurity } from '@quorum/kit';
import type { OpenObject } from '@quorum/runtime';
import { ESCALATION_WEBHOOK_CONFIGURATION, ESCALATION_WEBHOOK_NAME } from '../admission/serving.ts';
import { ESCALATION_WEBHOOK_PATH } from '../admission/webhook.ts';
import { rbacDefinitionCRD } from '../api/crd.ts';
import { API_VERSION, GROUP, KIND, PLURAL, VERSION, type RBACDefinition } from '../api/rbacdefinition.ts';
import { METRICS_PORT, WEBHOOK_PORT } from '../operator/config.ts';
import { clusterRules, eventRules, EVENTS_NAMESPACE, namespaceRules } from './rbac.ts';

export const RBAC_MANAGER_VERSION = '0.1.0';
export const RBAC_MANAGER_IMAGE = `ghcr.io/quorum-dev/rbac-manager:${RBAC_MANAGER_VERSION}`;
export const NAME = 'quorum-rbac-manager';
export const DEFAULT_NAMESPACE = 'quorum-system';
/** What a scraper (Prometheus' service account) is bound to, to read the manager's /metrics. */
export const METRICS_READER_CLUSTER_ROLE = `${NAME}-metrics-reader`;
const CERT_DIR = '/tmp/webhook-certs';
/** How long the API server waits for the webhook: each review is a few SubjectAccessReviews, well under this. */
export const WEBHOOK_TIMEOUT_SECONDS = 10;

export interface RbacManagerManifestOptions {
  namespace?: string;
  image?: string;
  replicas?: number;
  /** The roles the manager may bind (resourceNames of its bind rule); default any. */
  bindableRoles?: readonly string[];
  logLevel?: string;
}

const labels = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'rbac-manager', 'app.kubernetes.io/version': RBAC_MANAGER_VERSION };
const selector = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'rbac-manager' };

/** Every object, in the order to apply them (the CRD and RBAC before the Deployment; the webhook last). */
export function rbacManagerManifests(options: RbacManagerManifestOptions = {}): OpenObject[] {
  const namespace = options.namespace ?? DEFAULT_NAMESPACE;
  const meta = (name: string, ns?: string): OpenObject['metadata'] => ({ name, ...(ns ? { namespace: ns } : {}), labels });
  const subject = [{ kind: 'ServiceAccount', name: NAME, namespace }];
  const roleRef = (kind: string, name: string): Record<string, string> => ({ apiGroup: 'rbac.authorization.k8s.io', kind, name });
  return [
    { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels: { 'pod-security.kubernetes.io/enforce': 'restricted' } } },
    rbacDefinitionCRD(),
    { apiVersion: 'v1', kind: 'ServiceAccount', metadata: meta(NAME, namespace) },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta(NAME), rules: clusterRules(options.bindableRoles) },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRoleBinding', metadata: meta(NAME), roleRef: roleRef('ClusterRole', NAME), subjects: subject },
    // Bound to nothing: bind a scraper's service account to it to let it read the manager's /metrics.
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'ClusterRole', metadata: meta(METRICS_READER_CLUSTER_ROLE), rules: [{ nonResourceURLs: ['/metrics'], verbs: ['get'] }] },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta(NAME, namespace), rules: namespaceRules() },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta(NAME, namespace), roleRef: roleRef('Role', NAME), subjects: subject },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'Role', metadata: meta(`${NAME}-events`, EVENTS_NAMESPACE), rules: eventRules() },
    { apiVersion: 'rbac.authorization.k8s.io/v1', kind: 'RoleBinding', metadata: meta(`${NAME}-events`, EVENTS_NAMESPACE), roleRef: roleRef('Role', `${NAME}-events`), subjects: subject },
    deployment(namespace, options),
    {
      apiVersion: 'v1',
      kind: 'Service',
      metadata: meta(NAME, namespace),
      spec: { selector, ports: [{ name: 'webhook', port: 443, targetPort: 'webhook' }] },
    },
    escalationWebhookConfiguration({ service: { namespace, name: NAME, path: ESCALATION_WEBHOOK_PATH, port: 443 } }),
  ];
}

function deployment(namespace: string, options: RbacManagerManifestOptions): OpenObject {
  const env = [
    { name: 'POD_NAMESPACE', valueFrom: { fieldRef: { fieldPath: 'metadata.namespace' } } },
    { name: 'POD_NAME', valueFrom: { fieldRef: { fieldPath: 'metadata.name' } } },
    { name: 'WEBHOOK_SERVICE', value: NAME },
    { name: 'CERT_DIR', value: CERT_DIR },
    ...(options.logLevel ? [{ name: 'LOG_LEVEL', value: options.logLevel }] : []),
  ];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name: NAME, namespace, labels },
    spec: {
      replicas: options.replicas ?? 2,
      selector: { matchLabels: selector },
      template: {
        metadata: { labels },
        spec: {
          serviceAccountName: NAME,
          securityContext: restrictedPodSecurity(),
          containers: [
            {
              name: 'manager',
              image: options.image ?? RBAC_MANAGER_IMAGE,
              env,
              ports: [
                { name: 'webhook', containerPort: WEBHOOK_PORT },
                { name: 'probes', containerPort: 8081 },
                // /metrics over HTTPS, for bearer tokens bound to the metrics-reader ClusterRole (the probes serve no metrics).
                { name: 'metrics', containerPort: METRICS_PORT },
              ],
              readinessProbe: { httpGet: { path: '/readyz', port: 'probes' }, periodSeconds: 5 },
              livenessProbe: { httpGet: { path: '/healthz', port: 'probes' }, periodSeconds: 10, failureThreshold: 6 },
              resources: { requests: { cpu: '50m', memory: '96Mi' }, limits: { memory: '384Mi' } },
              securityContext: restrictedContainerSecurity(),
              volumeMounts: [{ name: 'webhook-certs', mountPath: CERT_DIR }],
            },
          ],
          volumes: [{ name: 'webhook-certs', emptyDir: {} }],
        },
      },
    },
  };
}

/**
 * The escalation webhook's configuration: CREATE and UPDATE of RBACDefinitions, failurePolicy Fail (see
 * admission/webhook.ts for why this one fails closed). DELETE is not intercepted: revoking always works.
 * `url` instead of a Service for a manager running outside the cluster (the integration test).
 */
export function escalationWebhookConfiguration(target: { service: { namespace: string; name: string; path: string; port: number } } | { url: string }, name = ESCALATION_WEBHOOK_CONFIGURATION): OpenObject {
  return {
    apiVersion: 'admissionregistration.k8s.io/v1',
    kind: 'ValidatingWebhookConfiguration',
    metadata: { name, labels },
    webhooks: [
      {
        name: ESCALATION_WEBHOOK_NAME,
        clientConfig: 'url' in target ? { url: target.url } : { service: target.service },
        rules: [{ apiGroups: [GROUP], apiVersions: [VERSION], operations: ['CREATE', 'UPDATE'], resources: [PLURAL], scope: 'Cluster' }],
        failurePolicy: 'Fail',
        sideEffects: 'None',
        admissionReviewVersions: ['v1'],
        timeoutSeconds: WEBHOOK_TIMEOUT_SECONDS,
      },
    ],
  };
}

/** The example `npm start` and `quorum rbac manifests --example` apply: view in every namespace labelled team=demo. */
export function sampleDefinition(): RBACDefinition {
  return {
    apiVersion: API_VERSION,
    kind: KIND,
    metadata: { name: 'demo' },
    rbacBindings: [
      {
        name: 'viewers',
        subjects: [{ kind: 'Group', name: 'demo-viewers' }],
        roleBindings: [{ clusterRole: 'view', namespaceSelector: { matchLabels: { team: 'demo' } } }],
      },
      {
        name: 'oncall',
        subjects: [{ kind: 'User', name: 'oncall@example.com' }],
        roleBindings: [{ clusterRole: 'edit', namespaceSelector: { matchLabels: { team: 'demo' } } }],
        expiresAfter: '8h',
      },
    ],
  };
}
