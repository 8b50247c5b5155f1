// How Prometheus finds what to scrape, without the prometheus-operator's CRDs: Kubernetes pod discovery,
// kept to the pods and the named container ports the operator already creates. Member pods are found by
// the labels every member pod carries and their `metrics` port (etcd's --listen-metrics-urls, plain http
// :2381 even when TLS is on), so nothing about the pods changes; the operator by its Deployment's selector
// and its `metrics` port: HTTPS, answered only to a bearer token bound to the quorum-etcd-operator-metrics-reader
// ClusterRole (TokenReview + SubjectAccessReview), so Prometheus sends its service account's token. It skips
// verifying the certificate: the operator's is self-signed, issued at each start, so there is no CA to trust;
// the token, not the server's identity, is what keeps the metrics from others (as kube-rbac-proxy setups do).
// The same selection is also given as PodMonitors for clusters that run the prometheus-operator.
import { copyLabel, keepPods, operatorPodMonitor, operatorScrapeConfig, podLabelMeta, type ScrapeConfig } from '@quorum/kit';
import { LABELS, OPERATOR_SELECTOR } from '../names.ts';

export { podLabelMeta, SERVICE_ACCOUNT_TOKEN_FILE, type RelabelConfig, type ScrapeConfig } from '@quorum/kit';

/** The jobs' names: the `job` label of every series they scrape. */
export const ETCD_JOB = 'quorum-etcd';
export const OPERATOR_JOB = 'quorum-operator';

/** The labels of every object in deploy/monitoring/ (the PrometheusRule, the PodMonitors, the dashboard's ConfigMap). */
export const MONITORING_LABELS = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'monitoring' } as const;
/** The container ports scraped (names in the pod specs the operator and its manifests write). */
export const ETCD_METRICS_PORT_NAME = 'metrics';
export const OPERATOR_METRICS_PORT_NAME = 'metrics';
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
        keepPods({ [LABELS.managedBy]: 'quorum', [LABELS.name]: 'etcd' }, ETCD_METRICS_PORT_NAME),
        copyLabel('__meta_kubernetes_namespace', 'namespace'),
        copyLabel(podLabelMeta(LABELS.instance), 'cluster'),
        copyLabel(podLabelMeta(LABELS.member), 'member'),
        copyLabel('__meta_kubernetes_pod_name', 'pod'),
      ],
    },
    // HTTPS with the service account's token, as @quorum/kit scrapes every operator (see the top of this file).
    operatorScrapeConfig(OPERATOR_JOB, OPERATOR_SELECTOR, OPERATOR_METRICS_PORT_NAME),
  ];
}

/** The same selection as PodMonitors (monitoring.coreos.com/v1), for clusters with the prometheus-operator. */
export function podMonitors(): Record<string, unknown>[] {
  const monitor = (name: string, selector: Record<string, string>, port: string, relabelings: Record<string, unknown>[]): Record<string, unknown> => ({
    apiVersion: 'monitoring.coreos.com/v1',
    kind: 'PodMonitor',
    metadata: { name, labels: { ...MONITORING_LABELS } },
    spec: {
      namespaceSelector: { any: true },
      selector: { matchLabels: selector },
      podMetricsEndpoints: [{ port, path: '/metrics', scheme: 'http', relabelings }],
    },
  });
  const copyTo = (from: string, to: string): Record<string, unknown> => ({ sourceLabels: [from], targetLabel: to, action: 'replace' });
  return [
    monitor(ETCD_JOB, { [LABELS.managedBy]: 'quorum', [LABELS.name]: 'etcd' }, ETCD_METRICS_PORT_NAME, [
      copyTo(podLabelMeta(LABELS.instance), 'cluster'),
      copyTo(podLabelMeta(LABELS.member), 'member'),
      { targetLabel: 'job', replacement: ETCD_JOB, action: 'replace' },
    ]),
    // The token of a Secret `quorum-metrics-reader-token` in the PodMonitor's namespace (a
    // kubernetes.io/service-account-token Secret of a service account bound to the metrics-reader ClusterRole:
    // docs/monitoring.md), no certificate check (self-signed, see the top), and honorLabels (the series carry the
    // namespace of the object they describe).
    operatorPodMonitor(OPERATOR_JOB, MONITORING_LABELS, OPERATOR_SELECTOR, OPERATOR_METRICS_PORT_NAME, 'quorum-metrics-reader-token'),
  ];
}
