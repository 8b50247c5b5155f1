// What the operators' Helm charts share, as text: each chart is its operator's own manifests rendered with
// sentinel values (strings no real value has), whose YAML is then turned into templates by replacing the
// sentinels with template expressions. These helpers are the replacements every chart makes the same way:
// Prometheus's and Grafana's own `{{ … }}` kept from Helm, the tenant namespaces' list and RBAC, the webhooks'
// namespaceSelector, and the monitoring objects behind a value each.

/** Helm would run the `{{ … }}` of Prometheus's and Grafana's own templates (alert text, legends) as its own: it prints each `{{` instead. */
export const escapeHelmActions = (yaml: string): string => yaml.replaceAll('{{', '{{ "{{" }}');

/** Each YAML list item `- <sentinel>` becomes one item per tenant namespace (`.Values.namespaces`), at its indentation. */
export function tenantListTemplate(yaml: string, sentinel: string): string {
  return yaml.replace(new RegExp(`^( *)- ${sentinel}$`, 'gm'), (_line, indent: string) => `${indent}{{- range $.Values.namespaces }}\n${indent}- {{ . | quote }}\n${indent}{{- end }}`);
}

/** A webhook's namespaceSelector (one key with a nested map) exists only in a namespace-scoped install: the whole block goes in an `if`. */
export function namespaceSelectorTemplate(yaml: string): string {
  return yaml.replace(/^( *)namespaceSelector:\n(\1 .*\n)+/gm, (block, indent: string) => `${indent}{{- if not $.Values.clusterWide }}\n${block}${indent}{{- end }}\n`);
}

export interface ScopedRbacTemplate {
  /** The Role and RoleBinding of one tenant namespace, rendered with `sentinel` as that namespace. */
  tenant: string;
  /** The ClusterRole and ClusterRoleBinding of a cluster-wide install. */
  clusterWide: string;
  sentinel: string;
  /** What the operator's objects are, for the kube-system refusal ("its Redises go in"). */
  workloads: string;
}

/**
 * The install's scope as the kit's tenantNamespaces() checks it, in Helm: the tenant Role and RoleBinding once
 * per namespace of `.Values.namespaces` (a `range`, so every expression reads the root context, `$`), or the
 * ClusterRole when `.Values.clusterWide`; an empty list and kube-system refused with the same words.
 */
export function scopedRbacTemplate(t: ScopedRbacTemplate): string {
  return [
    '{{- if not $.Values.clusterWide }}',
    '{{- if empty $.Values.namespaces }}{{ fail "namespaces is empty: give the tenant namespaces (--set namespaces={apps}), or every namespace (--set clusterWide=true)" }}{{- end }}',
    `{{- if has "kube-system" $.Values.namespaces }}{{ fail "namespaces: kube-system is refused: the operator would create pods and read Secrets beside the control plane; give the namespaces ${t.workloads} go in" }}{{- end }}`,
    '{{- range $tenant := $.Values.namespaces }}',
    '---',
    `${t.tenant.replaceAll(t.sentinel, '{{ $tenant | quote }}')}{{- end }}`,
    '{{- else }}',
    '---',
    `${t.clusterWide}{{- end }}`,
    '',
  ].join('\n');
}

/** The environment value naming the tenant namespaces: joined, or empty (every namespace) when cluster-wide; quoted, so that empty stays a string. */
export const TENANT_ENV_TEMPLATE = '{{ ternary "" (join "," $.Values.namespaces) $.Values.clusterWide | quote }}';

/**
 * A monitoring object's template behind `.Values.monitoring.<value>.enabled`, with `.Values.monitoring.<value>.labels`
 * added to its own: `yaml` is the object rendered with the label `<labelsSentinel>: <labelsSentinel>`.
 */
export function monitoringValueTemplate(value: string, documents: string[], labelsSentinel: string, header: string): string {
  const withLabels = documents.map((text) =>
    text.replace(new RegExp(`^( *)${labelsSentinel}: ${labelsSentinel}\n`, 'm'), (_line, indent: string) => `${indent}{{- with .Values.monitoring.${value}.labels }}\n${indent}{{- toYaml . | nindent ${indent.length} }}\n${indent}{{- end }}\n`),
  );
  return `${header}\n{{- if .Values.monitoring.${value}.enabled }}\n${withLabels.join('---\n')}{{- end }}\n`;
}
