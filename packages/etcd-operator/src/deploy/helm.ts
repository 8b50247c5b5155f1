// The Helm chart in deploy/helm/quorum, generated from the same objects as `quorum manifests`: the
// manifests are rendered with sentinel values, which become template expressions. The CRD goes in the
// chart's crds/ directory, which Helm installs first and never deletes (uninstalling keeps every cluster).
// What differs by value as a whole object (the RBAC of each scope, the PodDisruptionBudget, the webhooks) is
// rendered once per case and wrapped in `if`; the Role and RoleBinding of a tenant namespace once, in a
// `range` over the namespaces (so every expression reads the root context, `$`): test/unit/helm.test.ts checks `helm template` against
// `quorum manifests` in each case. The monitoring objects of deploy/monitoring/ come from src/monitoring/ the
// same way, each behind a value of its own.
import { escapeHelmActions, monitoringValueTemplate, namespaceSelectorTemplate, tenantListTemplate, TENANT_ENV_TEMPLATE } from '@quorum/kit';
import { Document, isMap, isScalar, stringify } from 'yaml';
import { etcdBackupCRDYAML, etcdBackupScheduleCRDYAML, etcdClusterCRDYAML, etcdRestoreCRDYAML } from '../api/crd.ts';
import { grafanaDashboardConfigMap } from '../monitoring/dashboard.ts';
import { prometheusRule } from '../monitoring/rules.ts';
import { podMonitors } from '../monitoring/scrape.ts';
import { DEFAULT_CA_ROTATION_OVERLAP_SECONDS, DEFAULT_CRASHLOOP_GRACE_SECONDS, DEFAULT_METRICS_NAMESPACES, DEFAULT_NAMESPACES, OPERATOR_IMAGE, OPERATOR_VERSION, PEER_WAIT_IMAGE, accessObjects, operatorManifests } from './manifests.ts';

const SENTINELS = {
  namespace: 'quorum-sentinel-namespace',
  image: 'quorum-sentinel-image',
  peerWaitImage: 'quorum-sentinel-peerwait',
  replicas: 987_654_321,
  grace: 876_543_219,
  stepDeadline: 765_432_198,
  caOverlap: 654_321_987,
  logLevel: 'quorum-sentinel-loglevel',
  clusterDomain: 'quorum-sentinel-clusterdomain',
  metricsNamespaces: 'quorum-sentinel-metricsnamespaces',
  tenant: 'quorum-sentinel-tenant',
  extraLabels: 'quorum-sentinel-extralabels',
} as const;

const TEMPLATE: [string, string][] = [
  // The env var: the tenant namespaces joined, or empty (every namespace) when cluster-wide; quoted, so that
  // empty stays a string and a namespace may be all digits.
  [`value: ${SENTINELS.tenant}`, `value: ${TENANT_ENV_TEMPLATE}`],
  // A Role's or RoleBinding's namespace, inside the range over the tenant namespaces.
  [SENTINELS.tenant, '{{ $tenant | quote }}'],
  [SENTINELS.namespace, '{{ $.Release.Namespace }}'],
  [SENTINELS.image, '{{ $.Values.image.repository }}:{{ $.Values.image.tag }}'],
  [SENTINELS.peerWaitImage, '{{ $.Values.peerWaitImage.repository }}:{{ $.Values.peerWaitImage.tag }}'],
  [String(SENTINELS.replicas), '{{ $.Values.replicas }}'],
  [`"${SENTINELS.grace}"`, '{{ $.Values.crashLoopGraceSeconds | quote }}'],
  [`"${SENTINELS.stepDeadline}"`, '{{ $.Values.stepDeadlineSeconds | quote }}'],
  [`"${SENTINELS.caOverlap}"`, '{{ $.Values.caRotationOverlapSeconds | quote }}'],
  [SENTINELS.logLevel, '{{ $.Values.logLevel }}'],
  [SENTINELS.clusterDomain, '{{ $.Values.clusterDomain | quote }}'],
  [SENTINELS.metricsNamespaces, '{{ join "," $.Values.metricsNamespaces | quote }}'],
];

const repositoryOf = (image: string): string => image.slice(0, image.lastIndexOf(':'));

export const VALUES = {
  image: { repository: repositoryOf(OPERATOR_IMAGE), tag: OPERATOR_VERSION },
  // The member pods' init container (tools/peer-wait), from the same registry as the operator by default.
  peerWaitImage: { repository: repositoryOf(PEER_WAIT_IMAGE), tag: OPERATOR_VERSION },
  replicas: 2,
  crashLoopGraceSeconds: DEFAULT_CRASHLOOP_GRACE_SECONDS,
  // A step that makes no progress for this long turns the cluster Degraded (StepStalled).
  stepDeadlineSeconds: 120,
  // How long the old CA stays trusted once an operator-managed CA rotation signs with the new one (docs/tls.md).
  caRotationOverlapSeconds: DEFAULT_CA_ROTATION_OVERLAP_SECONDS,
  logLevel: 'info',
  // The Kubernetes cluster domain: the fully qualified names in the member certificates of TLS clusters.
  clusterDomain: 'cluster.local',
  // Commented in values.yaml (VALUE_COMMENTS).
  metricsNamespaces: [...DEFAULT_METRICS_NAMESPACES],
  namespaces: [...DEFAULT_NAMESPACES],
  clusterWide: false,
};

/**
 * The objects of deploy/monitoring/, each behind `monitoring.<value>.enabled`. Off by default: a
 * PrometheusRule or a PodMonitor fails the whole install where the prometheus-operator's CRDs are absent.
 */
export const MONITORING_VALUES = {
  prometheusRule: { file: 'templates/prometheus-rule.yaml', objects: (): Record<string, unknown>[] => [prometheusRule()] },
  podMonitors: { file: 'templates/pod-monitors.yaml', objects: podMonitors },
  grafanaDashboard: { file: 'templates/grafana-dashboard.yaml', objects: (): Record<string, unknown>[] => [grafanaDashboardConfigMap()] },
} as const;

export type MonitoringValue = keyof typeof MONITORING_VALUES;

const monitoringDefaults = (): { enabled: boolean; labels: Record<string, string> } => ({ enabled: false, labels: {} });

/** values.yaml's comments: the monitoring values are documented where they are set. */
const VALUE_COMMENTS: [string[], string][] = [
  [['namespaces'], ' The tenant namespaces: the operator manages the EtcdClusters of these only, with a Role and RoleBinding in\n each, and the webhooks answer only for them. Each must exist before the install; kube-system is refused.'],
  [['clusterWide'], ' Every namespace, with a ClusterRole, instead of the tenant namespaces.'],
  [['metricsNamespaces'], " The namespaces whose pods (Prometheus) may scrape the members' metrics port through each EtcdCluster's\n NetworkPolicy (docs/security.md); [] for none."],
  [['monitoring'], ' Monitoring objects, the same as deploy/monitoring/ (docs/monitoring.md). Each is off by default: the\n PrometheusRule and the PodMonitors need the prometheus-operator\'s CRDs. `labels` are added to the\n object\'s own, e.g. the `release` label a kube-prometheus-stack\'s ruleSelector or podMonitorSelector asks for.'],
  [['monitoring', 'prometheusRule'], ' A PrometheusRule `quorum-etcd` with the alert rules.'],
  [['monitoring', 'podMonitors'], ' PodMonitors `quorum-etcd` (every member, in every namespace) and `quorum-operator`.'],
  [['monitoring', 'grafanaDashboard'], ' A ConfigMap `quorum-grafana-dashboard` with the Grafana dashboard, labelled `grafana_dashboard: "1"` for\n the Grafana chart\'s dashboard sidecar (which must search the release\'s namespace).'],
];

function withComments(values: object, comments: [string[], string][]): string {
  const doc = new Document(values);
  for (const [path, comment] of comments) {
    const parent = doc.getIn(path.slice(0, -1), true);
    const pair = isMap(parent) ? parent.items.find((p) => isScalar(p.key) && p.key.value === path.at(-1)) : undefined;
    if (!pair || !isScalar(pair.key)) throw new Error(`values.yaml has no ${path.join('.')} to comment`);
    pair.key.commentBefore = comment;
  }
  return doc.toString({ lineWidth: 0 });
}

export function helmChart(): Record<string, string> {
  const sentinelOptions = {
    namespace: SENTINELS.namespace,
    image: SENTINELS.image,
    peerWaitImage: SENTINELS.peerWaitImage,
    replicas: SENTINELS.replicas,
    crashLoopGraceSeconds: SENTINELS.grace,
    stepDeadlineSeconds: SENTINELS.stepDeadline,
    caRotationOverlapSeconds: SENTINELS.caOverlap,
    logLevel: SENTINELS.logLevel,
    clusterDomain: SENTINELS.clusterDomain,
    metricsNamespaces: [SENTINELS.metricsNamespaces],
  };
  // Rendered namespace-scoped, so that the env var and the webhooks' namespaceSelector carry the sentinel.
  const objects = operatorManifests({ ...sentinelOptions, namespaces: [SENTINELS.tenant] }).filter((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
  const render = (o: object): string => {
    // The webhooks' namespaceSelector lists every tenant namespace, at the item's indentation.
    let text = tenantListTemplate(escapeHelmActions(stringify(o, { lineWidth: 0 })), SENTINELS.tenant);
    for (const [from, to] of TEMPLATE) text = text.replaceAll(from, to);
    return text;
  };
  const key = (o: { kind?: string; metadata: { name?: string } }): string => `${o.kind}/${o.metadata.name}`;
  const tenantAccess = accessObjects(SENTINELS.namespace, [SENTINELS.tenant], false);
  const clusterAccess = accessObjects(SENTINELS.namespace, undefined, false);
  const scopeKeys = new Set([...tenantAccess, ...clusterAccess].map(key));
  const webhookRole = accessObjects(SENTINELS.namespace, undefined, true).filter((o) => !scopeKeys.has(key(o)));
  const access = new Set([...tenantAccess, ...webhookRole].map(key));
  const webhook = (kind: string | undefined): boolean => kind === 'MutatingWebhookConfiguration' || kind === 'ValidatingWebhookConfiguration' || kind === 'Service';
  const operator = objects
    .filter((o) => !webhook(o.kind) && !access.has(key(o)) && o.kind !== 'PodDisruptionBudget')
    .map(render)
    .join('---\n')
    .replace('value: "true"', 'value: {{ $.Values.webhooks.enabled | quote }}');
  // The webhooks' namespaceSelector exists only in a namespace-scoped install (its YAML is one key with a
  // nested map: the whole block goes in the `if`).
  const webhooks = objects
    .filter((o) => webhook(o.kind))
    .map(render)
    .join('---\n');
  const webhooksTemplate = namespaceSelectorTemplate(webhooks);
  const renderAll = (list: object[]): string => list.map(render).join('---\n');
  const rbac = [
    // Refused as `quorum manifests` refuses them (tenantNamespaces), and the value this chart replaced.
    '{{- if $.Values.watchNamespace }}{{ fail "watchNamespace was replaced by namespaces, a list (--set namespaces={apps}), and clusterWide (--set clusterWide=true)" }}{{- end }}',
    '{{- if not $.Values.clusterWide }}',
    '{{- if empty $.Values.namespaces }}{{ fail "namespaces is empty: give the tenant namespaces (--set namespaces={apps}), or every namespace (--set clusterWide=true)" }}{{- end }}',
    '{{- if has "kube-system" $.Values.namespaces }}{{ fail "namespaces: kube-system is refused: the operator would create pods and read Secrets beside the control plane; give the namespaces its etcd clusters go in" }}{{- end }}',
    '{{- range $tenant := $.Values.namespaces }}',
    '---',
    renderAll(tenantAccess) + '{{- end }}',
    '{{- else }}',
    '---',
    renderAll(clusterAccess) + '{{- end }}',
    '{{- if $.Values.webhooks.enabled }}',
    '---',
    renderAll(webhookRole) + '{{- end }}',
    '',
  ].join('\n');
  const pdb = objects.filter((o) => o.kind === 'PodDisruptionBudget').map(render).join('---\n');
  const generated = '# Generated by packages/etcd-operator/scripts/generate.ts from src/deploy/manifests.ts.';
  // In the release's namespace, as the chart's other objects; the extra labels' sentinel becomes the values' labels.
  const monitoring = Object.entries(MONITORING_VALUES).map(([value, { file, objects }]): [string, string] => {
    const documents = objects().map((o) => {
      const metadata = o['metadata'] as { name: string; labels: Record<string, string> };
      return render({ ...o, metadata: { name: metadata.name, namespace: SENTINELS.namespace, labels: { ...metadata.labels, [SENTINELS.extraLabels]: SENTINELS.extraLabels } } });
    });
    return [file, monitoringValueTemplate(value, documents, SENTINELS.extraLabels, '# Generated by packages/etcd-operator/scripts/generate.ts from src/monitoring/.')];
  });
  return {
    'Chart.yaml': stringify({ apiVersion: 'v2', name: 'quorum', description: 'The Quorum etcd operator', type: 'application', version: OPERATOR_VERSION, appVersion: OPERATOR_VERSION }),
    'values.yaml': `# Generated from packages/etcd-operator/src/deploy/helm.ts; edit values at install time with --set.\n${withComments({ ...VALUES, webhooks: { enabled: true }, monitoring: Object.fromEntries(Object.keys(MONITORING_VALUES).map((v) => [v, monitoringDefaults()])) }, VALUE_COMMENTS)}`,
    'crds/etcd.quorum.dev_etcdclusters.yaml': etcdClusterCRDYAML(),
    'crds/etcd.quorum.dev_etcdbackups.yaml': etcdBackupCRDYAML(),
    'crds/etcd.quorum.dev_etcdbackupschedules.yaml': etcdBackupScheduleCRDYAML(),
    'crds/etcd.quorum.dev_etcdrestores.yaml': etcdRestoreCRDYAML(),
    'templates/operator.yaml': `${generated}\n${operator}`,
    'templates/rbac.yaml': `${generated}\n# A Role and RoleBinding in each tenant namespace (plus the webhooks' ClusterRole), or every namespace through a ClusterRole.\n${rbac}`,
    'templates/pdb.yaml': `${generated}\n# One replica cannot keep one of itself through a drain: the budget exists from two replicas on.\n{{- if gt (int $.Values.replicas) 1 }}\n${pdb}{{- end }}\n`,
    'templates/webhooks.yaml': `${generated}\n{{- if $.Values.webhooks.enabled }}\n${webhooksTemplate}{{- end }}\n`,
    ...Object.fromEntries(monitoring),
  };
}
