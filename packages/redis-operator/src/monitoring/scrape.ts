// How Prometheus finds the Redis operator: its pods by the labels its Deployment gives them, on the `metrics`
// port (HTTPS with the scraper's service account token, as the etcd operator's: @quorum/kit's
// operatorScrapeConfig). The Redis instances themselves serve no metrics: what is known of them (role, lag,
// memory, evictions) the operator reads over the Redis protocol and serves as its own series (operator/metrics.ts).
import { operatorPodMonitor, operatorScrapeConfig, type ScrapeConfig } from '@quorum/kit';
import { OPERATOR_POD_LABELS } from '../names.ts';

/** The job's name: the `job` label of every series it scrapes. */
export const OPERATOR_JOB = 'quorum-redis-operator';
/** The container port scraped (its name in the operator's Deployment, src/deploy/manifests.ts). */
export const OPERATOR_METRICS_PORT_NAME = 'metrics';
/** The labels of every object in deploy/monitoring/quorum-redis-* (the PrometheusRule, the PodMonitor, the dashboard's ConfigMap). */
export const MONITORING_LABELS = { 'app.kubernetes.io/name': 'quorum-redis', 'app.kubernetes.io/component': 'monitoring' } as const;
/**
 * The Secret a PodMonitor reads the bearer token from, in its own namespace: the same as the etcd operator's, so
 * that one service account bound to both metrics-reader ClusterRoles serves both (docs/redis.md).
 */
export const METRICS_READER_TOKEN_SECRET = 'quorum-metrics-reader-token';

export function scrapeConfigs(): ScrapeConfig[] {
  return [operatorScrapeConfig(OPERATOR_JOB, { ...OPERATOR_POD_LABELS }, OPERATOR_METRICS_PORT_NAME)];
}

/** The same selection as a PodMonitor (monitoring.coreos.com/v1), for clusters with the prometheus-operator. */
export function podMonitors(): Record<string, unknown>[] {
  return [operatorPodMonitor(OPERATOR_JOB, MONITORING_LABELS, { ...OPERATOR_POD_LABELS }, OPERATOR_METRICS_PORT_NAME, METRICS_READER_TOKEN_SECRET)];
}
