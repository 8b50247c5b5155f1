// The Redis operator's Helm chart in deploy/helm/quorum-redis, generated from the same objects as `quorum redis
// manifests` (operatorManifests), as the other charts are from theirs: rendered with sentinel values that become
// template expressions (@quorum/kit's helm helpers). Which objects belong to which part of the chart is found by
// comparing the manifests of each shape (tenant namespaces or every namespace, webhooks on or off), so a kind
// or rule added to manifests.ts lands in the right template when the chart is regenerated; the CRDs go in crds/,
// taken from the manifests too (Helm installs them first and never deletes them: uninstalling keeps every Redis).
// The monitoring objects of deploy/monitoring/quorum-redis-* come behind a value each, off by default.
// test/unit/helm.test.ts checks `helm template` against operatorManifests in each shape.
import { escapeHelmActions, monitoringValueTemplate, namespaceSelectorTemplate, scopedRbacTemplate, tenantListTemplate, TENANT_ENV_TEMPLATE } from '@quorum/kit';
import type { KubeObject } from '@quorum/runtime';
import { stringify } from 'yaml';
import { DEFAULT_CA_ROTATION_OVERLAP_SECONDS, DEFAULT_REDIS_REPOSITORY } from '../operator/config.ts';
import { grafanaDashboardConfigMap } from '../monitoring/dashboard.ts';
import { prometheusRule } from '../monitoring/rules.ts';
import { podMonitors } from '../monitoring/scrape.ts';
import { OPERATOR_IMAGE, OPERATOR_VERSION, operatorManifests } from './manifests.ts';

export const CHART_DIR = 'deploy/helm/quorum-redis';

const SENTINELS = {
  namespace: 'quorum-sentinel-namespace',
  image: 'quorum-sentinel-image',
  tenant: 'quorum-sentinel-tenant',
  redisRepository: 'quorum-sentinel-redisrepository',
  extraLabels: 'quorum-sentinel-extralabels',
  // A number option: a value no one sets, rendered as its string.
  caRotationOverlapSeconds: 987_654_321,
} as const;

const repositoryOf = (image: string): string => image.slice(0, image.lastIndexOf(':'));

/** The operator container's resources when the values do not change them: what operatorManifests gives it. */
function defaultResources(): Record<string, unknown> {
  const deployment = operatorManifests().find((o) => o.kind === 'Deployment') as { spec: { template: { spec: { containers: { resources: Record<string, unknown> }[] } } } } | undefined;
  const resources = deployment?.spec.template.spec.containers[0]?.resources;
  if (resources === undefined) throw new Error('helm: the operator Deployment has no container resources');
  return resources;
}

/** values.yaml, key by key with the comment above each. */
function values(): [key: string, comment: string, value: unknown][] {
  return [
    ['image', 'The operator\'s image; backup Jobs and restore init containers run it too.', { repository: repositoryOf(OPERATOR_IMAGE), tag: OPERATOR_VERSION }],
    ['redisRepository', 'The repository of the Redis and Valkey server images; a Redis\'s spec.version is the tag.', DEFAULT_REDIS_REPOSITORY],
    ['namespaces', 'The tenant namespaces: the operator manages the Redises (and backups) of these only, with a Role and\nRoleBinding in each, and the webhook answers only for them. Each must exist before the install; kube-system is refused.', ['default']],
    ['clusterWide', 'Every namespace, with a ClusterRole, instead of the tenant namespaces.', false],
    ['resources', 'The operator container\'s resources.', defaultResources()],
    ['caRotationOverlapSeconds', 'How long a CA rotation trusts both CAs before the servers present certificates of the new one: the\ntime clients have to read the two-CA ca.crt (docs/redis.md, Rotating the CA).', DEFAULT_CA_ROTATION_OVERLAP_SECONDS],
    ['webhooks', 'The admission webhook: may the requesting user have a RedisBackup or a bootstrap mount the credentials Secret it names.', { enabled: true }],
    [
      'monitoring',
      'Monitoring objects, the same as deploy/monitoring/quorum-redis-* (docs/redis.md, Metrics and alerts), each off by\ndefault (the PrometheusRule and the PodMonitor need the prometheus-operator\'s CRDs): prometheusRule (a PrometheusRule\n`quorum-redis`), podMonitors (a PodMonitor `quorum-redis-operator`), grafanaDashboard (a ConfigMap\n`quorum-redis-grafana-dashboard` labelled `grafana_dashboard: "1"` for the Grafana chart\'s sidecar). `labels` are added\nto the object\'s own, e.g. the `release` label a kube-prometheus-stack selects by.',
      Object.fromEntries(Object.keys(MONITORING_VALUES).map((v) => [v, { enabled: false, labels: {} }])),
    ],
  ];
}

export const MONITORING_VALUES = {
  prometheusRule: { file: 'templates/prometheus-rule.yaml', objects: (): Record<string, unknown>[] => [prometheusRule()] },
  podMonitors: { file: 'templates/pod-monitors.yaml', objects: podMonitors },
  grafanaDashboard: { file: 'templates/grafana-dashboard.yaml', objects: (): Record<string, unknown>[] => [grafanaDashboardConfigMap()] },
} as const;
export type MonitoringValue = keyof typeof MONITORING_VALUES;

const key = (o: KubeObject): string => `${o.kind}/${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function render(o: object): string {
  // No anchors: a shared object (labels, a namespaceSelector) must be written out at each place its template may differ.
  let text = escapeHelmActions(stringify(o, { lineWidth: 0, aliasDuplicateObjects: false }));
  text = text.replace(new RegExp(`value: ${SENTINELS.tenant}$`, 'm'), `value: ${TENANT_ENV_TEMPLATE}`);
  text = tenantListTemplate(text, SENTINELS.tenant);
  text = text.replace(/(- name: WEBHOOKS\n\s+value: )"true"/, '$1{{ $.Values.webhooks.enabled | quote }}');
  text = text.replaceAll(SENTINELS.namespace, '{{ $.Release.Namespace }}').replaceAll(SENTINELS.image, '{{ $.Values.image.repository }}:{{ $.Values.image.tag }}');
  text = text.replace(`value: ${SENTINELS.redisRepository}`, 'value: {{ $.Values.redisRepository | quote }}');
  text = text.replace(`value: "${SENTINELS.caRotationOverlapSeconds}"`, 'value: {{ $.Values.caRotationOverlapSeconds | quote }}');
  // The operator container's resources, whole from the values (RBAC rules' `resources:` are lists, not maps).
  return text.replace(/^( *)resources:\n( *)requests:\n(\1 .*\n)+/m, (_block, indent: string) => `${indent}resources:\n${indent}  {{- toYaml $.Values.resources | nindent ${indent.length + 2} }}\n`);
}

/** The manifests in each shape, and the parts the chart's templates are made of. */
function parts(): { crds: KubeObject[]; core: KubeObject[]; tenant: KubeObject[]; clusterWide: KubeObject[]; webhooks: KubeObject[] } {
  const base = { namespace: SENTINELS.namespace, image: SENTINELS.image, redisRepository: SENTINELS.redisRepository, caRotationOverlapSeconds: SENTINELS.caRotationOverlapSeconds };
  const scoped = operatorManifests({ ...base, namespaces: [SENTINELS.tenant] });
  const wide = new Set(operatorManifests({ ...base, clusterWide: true }).map(key));
  const withoutWebhooks = new Set(operatorManifests({ ...base, namespaces: [SENTINELS.tenant], webhooks: false }).map(key));
  const objects = scoped.filter((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
  return {
    crds: scoped.filter((o) => o.kind === 'CustomResourceDefinition'),
    core: objects.filter((o) => wide.has(key(o)) && withoutWebhooks.has(key(o))),
    tenant: objects.filter((o) => !wide.has(key(o))),
    clusterWide: operatorManifests({ ...base, clusterWide: true, webhooks: false }).filter((o) => !new Set(scoped.map(key)).has(key(o))),
    webhooks: objects.filter((o) => wide.has(key(o)) && !withoutWebhooks.has(key(o))),
  };
}

export function helmChart(): Record<string, string> {
  const p = parts();
  const renderAll = (list: object[]): string => list.map(render).join('---\n');
  const generated = '# Generated by packages/redis-operator/scripts/generate.ts from src/deploy/manifests.ts.';
  const rbac = scopedRbacTemplate({ tenant: renderAll(p.tenant), clusterWide: renderAll(p.clusterWide), sentinel: SENTINELS.tenant, workloads: 'its Redises' });
  const monitoring = Object.entries(MONITORING_VALUES).map(([value, { file, objects }]): [string, string] => {
    const documents = objects().map((o) => {
      const metadata = o['metadata'] as { name: string; labels: Record<string, string> };
      return render({ ...o, metadata: { name: metadata.name, namespace: SENTINELS.namespace, labels: { ...metadata.labels, [SENTINELS.extraLabels]: SENTINELS.extraLabels } } });
    });
    return [file, monitoringValueTemplate(value, documents, SENTINELS.extraLabels, '# Generated by packages/redis-operator/scripts/generate.ts from src/monitoring/.')];
  });
  const chart: Record<string, string> = {
    'Chart.yaml': stringify({ apiVersion: 'v2', name: 'quorum-redis', description: 'The Quorum Redis operator: Redis and Valkey with replicas, Sentinel failover, backups', type: 'application', version: OPERATOR_VERSION, appVersion: OPERATOR_VERSION }),
    'values.yaml': `# Generated from packages/redis-operator/src/deploy/helm.ts; edit values at install time with --set or -f.\n${values()
      .map(([k, comment, value]) => `${comment.replace(/^/gm, '# ')}\n${stringify({ [k]: value }, { lineWidth: 0 })}`)
      .join('')}`,
    ...Object.fromEntries(p.crds.map((crd) => {
      const spec = (crd as KubeObject & { spec: { group: string; names: { plural: string } } }).spec;
      return [`crds/${spec.group}_${spec.names.plural}.yaml`, stringify(crd, { lineWidth: 0 })];
    })),
    'templates/operator.yaml': `${generated}\n${renderAll(p.core)}`,
    'templates/rbac.yaml': `${generated}\n# A Role and RoleBinding in each tenant namespace, or every namespace through a ClusterRole.\n${rbac}`,
    'templates/webhooks.yaml': `${generated}\n{{- if $.Values.webhooks.enabled }}\n${namespaceSelectorTemplate(renderAll(p.webhooks))}{{- end }}\n`,
    ...Object.fromEntries(monitoring),
  };
  for (const [file, text] of Object.entries(chart)) if (text.includes('quorum-sentinel') || text.includes(String(SENTINELS.caRotationOverlapSeconds))) throw new Error(`helm: a sentinel left in ${file}`);
  return chart;
}
