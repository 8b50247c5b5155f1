// How Prometheus finds what to scrape, without the prometheus-operator's CRDs: Kubernetes pod discovery,
// kept to the pods and the named container ports the operator already creates. Member pods are found by
// the labels every member pod carries and their `metrics` port (etcd's --listen-metrics-urls, plain http
// :2381 even when TLS is on), so nothing about the pods changes; the operator by its Deployment's selector
// and its `metrics` port: HTTPS, answered only to a bearer token bound to the quorum-etcd-operator-metrics-reader
// ClusterRole (TokenReview + SubjectAccessReview), so Prometheus sends its service account's token. It skips
// verifying the certificate: the operator's is self-signed, issued at each start, so there is no CA to trust;
// the token, not the server's identity, is what keeps the metrics from others (as kube-rbac-proxy setups do).
// The same selection is also given as PodMonitors for clusters that run the prometheus-operator.
import { LABELS, OPERATOR_SELECTOR } from '../names.ts';

/** The jobs' names: the `job` label of every series they scrape. */
export const ETCD_JOB = 'quorum-etcd';
export const OPERATOR_JOB = 'quorum-operator';

/** The labels of every object in deploy/monitoring/ (the PrometheusRule, the PodMonitors, the dashboard's ConfigMap). */
export const MONITORING_LABELS = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'monitoring' } as const;
/** The container ports scraped (names in the pod specs the operator and its manifests write). */
export const ETCD_METRICS_PORT_NAME = 'metrics';
export const OPERATOR_METRICS_PORT_NAME = 'metrics';
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

/** The part of a Prometheus scrape_config these jobs use. */
export interface ScrapeConfig {
  job_name: string;
  metrics_path: string;
  scheme: 'http' | 'https';
  authorization?: { type: 'Bearer'; credentials_file: string };
  tls_config?: { insecure_skip_verify: boolean };
  kubernetes_sd_configs: { role: 'pod'; namespaces?: { names: string[] } }[];
  relabel_configs: RelabelConfig[];
}

/** `__meta_kubernetes_pod_label_<name>`, with the name sanitized as Prometheus does (every other character becomes `_`). */
export const podLabelMeta = (label: string): string => `__meta_kubernetes_pod_label_${label.replace(/[^a-zA-Z0-9_]/g, '_')}`;

/** Keeps only the targets whose pod labels and container port name are exactly these. */
function keep(labels: Record<string, string>, portName: string): RelabelConfig {
  const entries = Object.entries(labels);
  return {
    source_labels: [...entries.map(([k]) => podLabelMeta(k)), '__meta_kubernetes_pod_container_port_name'],
    separator: ';',
    regex: [...entries.map(([, v]) => v), portName].map((v) => v.replace(/[.*+?^${}()|[\]\\]/g, '\\$&')).join(';'),
    action: 'keep',
  };
}

const copy = (from: string, to: string): RelabelConfig => ({ source_labels: [from], target_label: to, action: 'replace' });

/**
 * The two jobs. etcd series get the labels the rules and the dashboard group by: `namespace` and `cluster`
 * (the EtcdCluster), `member` and `pod`. The operator's own series already carry `namespace` and `cluster`
 * of the objects they describe, so its target's namespace is `operator_namespace` instead (a target label
 * would otherwise rename theirs to exported_namespace).
 */
export function scrapeConfigs(): ScrapeConfig[] {
  return [
    {
      job_name: ETCD_JOB,
      metrics_path: '/metrics',
      scheme: 'http',
      kubernetes_sd_configs: [{ role: 'pod' }],
      relabel_configs: [
        keep({ [LABELS.managedBy]: 'quorum', [LABELS.name]: 'etcd' }, ETCD_METRICS_PORT_NAME),
        copy('__meta_kubernetes_namespace', 'namespace'),
        copy(podLabelMeta(LABELS.instance), 'cluster'),
        copy(podLabelMeta(LABELS.member), 'member'),
        copy('__meta_kubernetes_pod_name', 'pod'),
      ],
    },
    {
      job_name: OPERATOR_JOB,
      metrics_path: '/metrics',
      scheme: 'https',
      authorization: { type: 'Bearer', credentials_file: SERVICE_ACCOUNT_TOKEN_FILE },
      // A self-signed certificate issued at each start: no CA to verify it with (see the top of this file).
      tls_config: { insecure_skip_verify: true },
      kubernetes_sd_configs: [{ role: 'pod' }],
      relabel_configs: [
        keep(OPERATOR_SELECTOR, OPERATOR_METRICS_PORT_NAME),
        copy('__meta_kubernetes_namespace', 'operator_namespace'),
        copy('__meta_kubernetes_pod_name', 'pod'),
      ],
    },
  ];
}

/**
 * The operator's endpoint as a PodMonitor spells it: the bearer token of a Secret `quorum-metrics-reader-token`
 * in the PodMonitor's namespace (a kubernetes.io/service-account-token Secret of a service account bound to the
 * metrics-reader ClusterRole: docs/monitoring.md), and no certificate check (self-signed, see the top).
 */
const SECURE_ENDPOINT = {
  authorization: { type: 'Bearer', credentials: { name: 'quorum-metrics-reader-token', key: 'token' } },
  tlsConfig: { insecureSkipVerify: true },
};

/** The same selection as PodMonitors (monitoring.coreos.com/v1), for clusters with the prometheus-operator. */
export function podMonitors(): Record<string, unknown>[] {
  const monitor = (name: string, selector: Record<string, string>, port: string, relabelings: Record<string, unknown>[], honorLabels = false, secure = false): Record<string, unknown> => ({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PodMonitor',
    metadata: { name, labels: { ...MONITORING_LABELS } },
    spec: {
      namespaceSelector: { any: true },
      selector: { matchLabels: selector },
      podMetricsEndpoints: [{ port, path: '/metrics', scheme: secure ? 'https' : 'http', ...(secure ? SECURE_ENDPOINT : {}), ...(honorLabels ? { honorLabels } : {}), relabelings }],
    },
  });
  const copyTo = (from: string, to: string): Record<string, unknown> => ({ sourceLabels: [from], targetLabel: to, action: 'replace' });
  return [
    monitor(ETCD_JOB, { [LABELS.managedBy]: 'quorum', [LABELS.name]: 'etcd' }, ETCD_METRICS_PORT_NAME, [
      copyTo(podLabelMeta(LABELS.instance), 'cluster'),
      copyTo(podLabelMeta(LABELS.member), 'member'),
      { targetLabel: 'job', replacement: ETCD_JOB, action: 'replace' },
    ]),
    // The operator's series carry the namespace of the object they describe; the prometheus-operator always
    // adds a namespace target label, which without honorLabels would rename theirs to exported_namespace.
    monitor(OPERATOR_JOB, OPERATOR_SELECTOR, OPERATOR_METRICS_PORT_NAME, [{ targetLabel: 'job', replacement: OPERATOR_JOB, action: 'replace' }], true, true),
  ];
}
