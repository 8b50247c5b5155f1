// What the operators' monitoring files share (deploy/monitoring/, each operator's src/monitoring/): alert rules
// with a runbook each, the PrometheusRule that carries them, a Grafana dashboard laid out row by row, and how
// Prometheus finds an operator's pods and scrapes its HTTPS /metrics with a bearer token. Objects only: each
// operator writes them as YAML or JSON itself.

export interface AlertRule {
  alert: string;
  expr: string;
  for: string;
  labels: { severity: 'critical' | 'warning' };
  annotations: { summary: string; description: string; runbook_url: string };
}

export interface RuleGroup {
  name: string;
  rules: AlertRule[];
}

export type AlertSpec = Omit<AlertRule, 'alert' | 'annotations'> & { summary: string; description: string };

/** An alert whose runbook is the section of `runbookDoc` named after it (a Markdown heading's anchor). */
export function alertRule(alert: string, spec: AlertSpec, runbookDoc: string): AlertRule {
  return {
    alert,
    expr: spec.expr,
    for: spec.for,
    labels: spec.labels,
    annotations: { summary: spec.summary, description: spec.description, runbook_url: `${runbookDoc}#${alert.toLowerCase()}` },
  };
}

/** The groups as a PrometheusRule (monitoring.coreos.com/v1), for the prometheus-operator. */
export function prometheusRuleObject(name: string, labels: Record<string, string>, groups: RuleGroup[]): Record<string, unknown> {
  return { apiVersion: 'monitoring.coreos.com/v1', kind: 'PrometheusRule', metadata: { name, labels: { ...labels } }, spec: { groups } };
}

/**
 * An alert's annotation as Prometheus renders it, for the few template forms the rules use (`$labels.x`,
 * `$value`, piped to humanizePercentage, humanizeDuration or humanize1024): what a `promtool test rules` case expects.
 */
export function renderAlertTemplate(template: string, labels: Record<string, string>, value: number): string {
  const humanizeDuration = (s: number): string => {
    const d = Math.floor(s / 86400);
    const h = Math.floor((s % 86400) / 3600);
    const m = Math.floor((s % 3600) / 60);
    const sec = Math.floor(s % 60);
    return `${d > 0 ? `${d}d ` : ''}${h}h ${m}m ${sec}s`;
  };
  // Go's %.4g, for the magnitudes alerts print.
  const g4 = (v: number): string => String(Number(v.toPrecision(4)));
  const humanize1024 = (v: number): string => {
    const prefixes = ['', 'ki', 'Mi', 'Gi', 'Ti', 'Pi', 'Ei', 'Zi', 'Yi'];
    let i = 0;
    while (Math.abs(v) >= 1024 && i < prefixes.length - 1) {
      v /= 1024;
      i++;
    }
    return `${g4(v)}${prefixes[i]}`;
  };
  return template.replace(/\{\{ (\$labels\.(\w+)|\$value( \| (humanizePercentage|humanizeDuration|humanize1024))?) \}\}/g, (_, _all: string, label: string | undefined, _pipe: string | undefined, fn: string | undefined) => {
    if (label) return labels[label] ?? '';
    if (fn === 'humanizePercentage') return `${g4(value * 100)}%`;
    if (fn === 'humanizeDuration') return humanizeDuration(value);
    if (fn === 'humanize1024') return humanize1024(value);
    return String(value);
  });
}

// ---- dashboards ----

interface Target {
  expr: string;
  legendFormat: string;
  refId: string;
}

export interface DashboardPanel {
  id: number;
  type: 'timeseries' | 'stat' | 'row';
  title: string;
  gridPos: { x: number; y: number; w: number; h: number };
  description?: string;
  datasource?: { type: 'prometheus'; uid: '${datasource}' };
  targets?: Target[];
  fieldConfig?: { defaults: { unit?: string; min?: number; max?: number; decimals?: number }; overrides: never[] };
  options?: Record<string, unknown>;
  collapsed?: boolean;
}

export interface PanelSpec {
  title: string;
  description: string;
  type?: 'timeseries' | 'stat';
  unit?: string;
  queries: [expr: string, legend: string][];
  width?: number;
}

/** Lays panels out left to right, 24 columns wide, each row under a row header. */
export function dashboardPanels(rows: [title: string, panels: PanelSpec[]][]): DashboardPanel[] {
  const panels: DashboardPanel[] = [];
  let y = 0;
  let id = 1;
  for (const [title, specs] of rows) {
    panels.push({ id: id++, type: 'row', title, gridPos: { x: 0, y, w: 24, h: 1 }, collapsed: false });
    y += 1;
    let x = 0;
    for (const spec of specs) {
      const w = spec.width ?? 8;
      if (x + w > 24) {
        x = 0;
        y += 8;
      }
      panels.push({
        id: id++,
        type: spec.type ?? 'timeseries',
        title: spec.title,
        description: spec.description,
        gridPos: { x, y, w, h: 8 },
        datasource: { type: 'prometheus', uid: '${datasource}' },
        targets: spec.queries.map(([expr, legendFormat], i) => ({ expr, legendFormat, refId: String.fromCharCode(65 + i) })),
        fieldConfig: { defaults: spec.unit ? { unit: spec.unit } : {}, overrides: [] },
        options: spec.type === 'stat' ? { reduceOptions: { calcs: ['lastNotNull'] }, colorMode: 'background' } : { legend: { displayMode: 'list', placement: 'bottom' } },
      });
      x += w;
    }
    y += 8;
  }
  return panels;
}

/** A dashboard variable listing a label's values (all of them by default, several selectable). */
export function dashboardVariable(name: string, label: string, query: string): Record<string, unknown> {
  return {
    name,
    label,
    type: 'query',
    datasource: { type: 'prometheus', uid: '${datasource}' },
    query: { query, refId: `${name}-variable` },
    definition: query,
    includeAll: true,
    multi: true,
    allValue: '.*',
    current: { text: 'All', value: '$__all' },
    refresh: 2,
    sort: 1,
  };
}

export interface DashboardOptions {
  title: string;
  uid: string;
  description: string;
  tags: string[];
  /** The variables after the data source's. */
  variables: Record<string, unknown>[];
  panels: DashboardPanel[];
}

/** A Grafana dashboard (schema 39) over a Prometheus data source chosen by its `datasource` variable. */
export function grafanaDashboardObject(o: DashboardOptions): Record<string, unknown> {
  return {
    title: o.title,
    uid: o.uid,
    description: o.description,
    tags: o.tags,
    editable: true,
    schemaVersion: 39,
    version: 1,
    time: { from: 'now-6h', to: 'now' },
    refresh: '30s',
    templating: { list: [{ name: 'datasource', label: 'Data source', type: 'datasource', query: 'prometheus', current: {} }, ...o.variables] },
    annotations: { list: [] },
    panels: o.panels,
  };
}

/** The dashboard as a ConfigMap for the Grafana chart's dashboard sidecar, which loads those labelled `grafana_dashboard: "1"`. */
export function grafanaDashboardConfigMapObject(name: string, labels: Record<string, string>, key: string, json: string): Record<string, unknown> {
  return { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name, labels: { ...labels, grafana_dashboard: '1' } }, data: { [key]: json } };
}

// ---- scraping an operator ----

/** `__meta_kubernetes_pod_label_<name>`, with the name sanitized as Prometheus does (every other character becomes `_`). */
export const podLabelMeta = (label: string): string => `__meta_kubernetes_pod_label_${label.replace(/[^a-zA-Z0-9_]/g, '_')}`;

/** Where a pod finds its service account's token: Prometheus sends it to the operator. */
export const SERVICE_ACCOUNT_TOKEN_FILE = '/var/run/secrets/kubernetes.io/serviceaccount/token';

/** A Prometheus relabel_config, as the config file spells it. */
export interface RelabelConfig {
  source_labels?: string[];
  separator?: string;
  regex?: string;
  target_label?: string;
  replacement?: string;
  action?: 'replace' | 'keep' | 'drop' | 'labelmap';
}

/** The part of a Prometheus scrape_config the operators' jobs use. */
export interface ScrapeConfig {
  job_name: string;
  metrics_path: string;
  scheme: 'http' | 'https';
  authorization?: { type: 'Bearer'; credentials_file: string };
  tls_config?: { insecure_skip_verify: boolean };
  kubernetes_sd_configs: { role: 'pod'; namespaces?: { names: string[] } }[];
  relabel_configs: RelabelConfig[];
}

/** Keeps only the targets whose pod labels and container port name are exactly these. */
export function keepPods(labels: Record<string, string>, portName: string): RelabelConfig {
  const entries = Object.entries(labels);
  return {
    source_labels: [...entries.map(([k]) => podLabelMeta(k)), '__meta_kubernetes_pod_container_port_name'],
    separator: ';',
    regex: [...entries.map(([, v]) => v), portName].map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join(';'),
    action: 'keep',
  };
}

export const copyLabel = (from: string, to: string): RelabelConfig => ({ source_labels: [from], target_label: to, action: 'replace' });

/**
 * An operator's job: its pods by their labels and `portName`, over HTTPS with the scraper's service account
 * token (the operator answers only tokens bound to its metrics-reader ClusterRole), without verifying its
 * certificate (self-signed, issued at each start: no CA to trust; the token keeps the metrics from others).
 * Its series carry the namespace of the objects they describe, so the target's is `operator_namespace`.
 */
export function operatorScrapeConfig(job: string, podLabels: Record<string, string>, portName: string): ScrapeConfig {
  return {
    job_name: job,
    metrics_path: '/metrics',
    scheme: 'https',
    authorization: { type: 'Bearer', credentials_file: SERVICE_ACCOUNT_TOKEN_FILE },
    tls_config: { insecure_skip_verify: true },
    kubernetes_sd_configs: [{ role: 'pod' }],
    relabel_configs: [keepPods(podLabels, portName), copyLabel('__meta_kubernetes_namespace', 'operator_namespace'), copyLabel('__meta_kubernetes_pod_name', 'pod')],
  };
}

/**
 * The same as a PodMonitor (monitoring.coreos.com/v1): the bearer token of `tokenSecret` (key `token`) in the
 * PodMonitor's namespace, and honorLabels, since the prometheus-operator always adds a namespace target label
 * that would rename the series' own to exported_namespace.
 */
export function operatorPodMonitor(job: string, labels: Record<string, string>, podLabels: Record<string, string>, portName: string, tokenSecret: string): Record<string, unknown> {
  return {
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PodMonitor',
    metadata: { name: job, labels: { ...labels } },
    spec: {
      namespaceSelector: { any: true },
      selector: { matchLabels: { ...podLabels } },
      podMetricsEndpoints: [
        {
          port: portName,
          path: '/metrics',
          scheme: 'https',
          authorization: { type: 'Bearer', credentials: { name: tokenSecret, key: 'token' } },
          tlsConfig: { insecureSkipVerify: true },
          honorLabels: true,
          relabelings: [{ targetLabel: 'job', replacement: job, action: 'replace' }],
        },
      ],
    },
  };
}
