// The Helm chart in deploy/helm/quorum, generated from the same objects as `quorum manifests`: the
// manifests are rendered with sentinel values, which become template expressions. The CRD goes in the
// chart's crds/ directory, which Helm installs first and never deletes (uninstalling keeps every cluster).
// What differs by value as a whole object (the RBAC of each scope, the PodDisruptionBudget, the webhooks) is
// rendered once per case and wrapped in `if`: test/unit/helm.test.ts checks `helm template` against
// `quorum manifests` in each case.
import { stringify } from 'yaml';
import { etcdBackupCRDYAML, etcdBackupScheduleCRDYAML, etcdClusterCRDYAML, etcdRestoreCRDYAML } from '../api/crd.ts';
import { DEFAULT_CA_ROTATION_OVERLAP_SECONDS, OPERATOR_IMAGE, OPERATOR_VERSION, PEER_WAIT_IMAGE, accessObjects, operatorManifests } from './manifests.ts';

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
  watchNamespace: 'quorum-sentinel-watchnamespace',
} as const;

const TEMPLATE: [string, string][] = [
  // Quoted: empty (every namespace) must stay a string in the env var, and a namespace may be all digits.
  [SENTINELS.watchNamespace, '{{ .Values.watchNamespace | quote }}'],
  [SENTINELS.namespace, '{{ .Release.Namespace }}'],
  [SENTINELS.image, '{{ .Values.image.repository }}:{{ .Values.image.tag }}'],
  [SENTINELS.peerWaitImage, '{{ .Values.peerWaitImage.repository }}:{{ .Values.peerWaitImage.tag }}'],
  [String(SENTINELS.replicas), '{{ .Values.replicas }}'],
  [`"${SENTINELS.grace}"`, '{{ .Values.crashLoopGraceSeconds | quote }}'],
  [`"${SENTINELS.stepDeadline}"`, '{{ .Values.stepDeadlineSeconds | quote }}'],
  [`"${SENTINELS.caOverlap}"`, '{{ .Values.caRotationOverlapSeconds | quote }}'],
  [SENTINELS.logLevel, '{{ .Values.logLevel }}'],
  [SENTINELS.clusterDomain, '{{ .Values.clusterDomain | quote }}'],
];

const repositoryOf = (image: string): string => image.slice(0, image.lastIndexOf(':'));

export const VALUES = {
  image: { repository: repositoryOf(OPERATOR_IMAGE), tag: OPERATOR_VERSION },
  // The member pods' init container (tools/peer-wait), from the same registry as the operator by default.
  peerWaitImage: { repository: repositoryOf(PEER_WAIT_IMAGE), tag: OPERATOR_VERSION },
  replicas: 2,
  crashLoopGraceSeconds: 60,
  // A step that makes no progress for this long turns the cluster Degraded (StepStalled).
  stepDeadlineSeconds: 120,
  // How long the old CA stays trusted once an operator-managed CA rotation signs with the new one (docs/tls.md).
  caRotationOverlapSeconds: DEFAULT_CA_ROTATION_OVERLAP_SECONDS,
  logLevel: 'info',
  // The Kubernetes cluster domain: the fully qualified names in the member certificates of TLS clusters.
  clusterDomain: 'cluster.local',
  // Empty: watch every namespace (a ClusterRole). A namespace name: watch only it (a Role there), and the
  // webhooks answer only for it; it must exist before the install.
  watchNamespace: '',
};

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
  };
  // Rendered namespace-scoped, so that the env var and the webhooks' namespaceSelector carry the sentinel.
  const objects = operatorManifests({ ...sentinelOptions, watchNamespace: SENTINELS.watchNamespace }).filter((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
  const render = (o: object): string => {
    let text = stringify(o, { lineWidth: 0 });
    for (const [from, to] of TEMPLATE) text = text.replaceAll(from, to);
    return text;
  };
  const key = (o: { kind?: string; metadata: { name?: string } }): string => `${o.kind}/${o.metadata.name}`;
  const namespaced = accessObjects(SENTINELS.namespace, SENTINELS.watchNamespace, false);
  const namespacedKeys = new Set(namespaced.map(key));
  const webhookRole = accessObjects(SENTINELS.namespace, SENTINELS.watchNamespace, true).filter((o) => !namespacedKeys.has(key(o)));
  const access = new Set([...namespaced, ...webhookRole].map(key));
  const webhook = (kind: string | undefined): boolean => kind === 'MutatingWebhookConfiguration' || kind === 'ValidatingWebhookConfiguration' || kind === 'Service';
  const operator = objects
    .filter((o) => !webhook(o.kind) && !access.has(key(o)) && o.kind !== 'PodDisruptionBudget')
    .map(render)
    .join('---\n')
    .replace('value: "true"', 'value: {{ .Values.webhooks.enabled | quote }}');
  // The webhooks' namespaceSelector exists only in a namespace-scoped install (its YAML is one key with a
  // nested map: the whole block goes in the `if`).
  const webhooks = objects
    .filter((o) => webhook(o.kind))
    .map(render)
    .join('---\n')
    .replace(/^( *)namespaceSelector:\n(\1 .*\n)+/gm, (block, indent: string) => `${indent}{{- if .Values.watchNamespace }}\n${block}${indent}{{- end }}\n`);
  const renderAll = (list: object[]): string => list.map(render).join('---\n');
  const rbac = [
    '{{- if .Values.watchNamespace }}',
    renderAll(namespaced) + '{{- if .Values.webhooks.enabled }}',
    '---',
    renderAll(webhookRole) + '{{- end }}',
    '{{- else }}',
    renderAll(accessObjects(SENTINELS.namespace, undefined, true)) + '{{- end }}',
    '',
  ].join('\n');
  const pdb = objects.filter((o) => o.kind === 'PodDisruptionBudget').map(render).join('---\n');
  const generated = '# Generated by packages/etcd-operator/scripts/generate.ts from src/deploy/manifests.ts.';
  return {
    'Chart.yaml': stringify({ apiVersion: 'v2', name: 'quorum', description: 'The Quorum etcd operator', type: 'application', version: OPERATOR_VERSION, appVersion: OPERATOR_VERSION }),
    'values.yaml': `# Generated from packages/etcd-operator/src/deploy/helm.ts; edit values at install time with --set.\n${stringify({ ...VALUES, webhooks: { enabled: true } })}`,
    'crds/etcd.quorum.dev_etcdclusters.yaml': etcdClusterCRDYAML(),
    'crds/etcd.quorum.dev_etcdbackups.yaml': etcdBackupCRDYAML(),
    'crds/etcd.quorum.dev_etcdbackupschedules.yaml': etcdBackupScheduleCRDYAML(),
    'crds/etcd.quorum.dev_etcdrestores.yaml': etcdRestoreCRDYAML(),
    'templates/operator.yaml': `${generated}\n${operator}`,
    'templates/rbac.yaml': `${generated}\n# Every namespace through a ClusterRole, or the watched one through a Role (plus the webhook configurations' ClusterRole).\n${rbac}`,
    'templates/pdb.yaml': `${generated}\n# One replica cannot keep one of itself through a drain: the budget exists from two replicas on.\n{{- if gt (int .Values.replicas) 1 }}\n${pdb}{{- end }}\n`,
    'templates/webhooks.yaml': `${generated}\n{{- if .Values.webhooks.enabled }}\n${webhooks}{{- end }}\n`,
  };
}
