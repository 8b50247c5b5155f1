// The operator's settings, from its environment (the Deployment sets them) with defaults for running it
// locally against any kubeconfig.
import { DEFAULT_CA_ROTATION_OVERLAP_SECONDS, DEFAULT_METRICS_NAMESPACES, DEFAULT_OPERATOR_NAMESPACE, OPERATOR_IMAGE, PEER_WAIT_IMAGE } from '../deploy/constants.ts';
import { DEFAULT_CLUSTER_DOMAIN } from '../tls/issue.ts';

export interface OperatorConfig {
  /** WATCH_NAMESPACES (comma-separated): the tenant namespaces to manage, or every namespace when empty. */
  watchNamespaces: readonly string[];
  /** Where the leader-election Lease and the webhook certificate Secret live; each cluster's NetworkPolicy admits the operator's pods from here. */
  namespace: string;
  /** METRICS_NAMESPACES (comma-separated; default `monitoring`, empty for none): whose pods may scrape the members' metrics port. */
  metricsNamespaces: readonly string[];
  podName: string;
  leaderElection: boolean;
  probePort: number;
  /**
   * METRICS_PORT (default 8443): /metrics over HTTPS, only for bearer tokens allowed `get` on the non-resource URL
   * /metrics (TokenReview + SubjectAccessReview); SECURE_METRICS=false serves it on the probe port in plain HTTP instead.
   */
  metricsPort: number;
  secureMetrics: boolean;
  webhookPort: number;
  /** Serve admission webhooks (the manifests register them). */
  webhooks: boolean;
  webhookServiceName: string;
  certDir: string;
  crashLoopGraceMs: number;
  /** CA_ROTATION_OVERLAP_SECONDS: how long the old CA stays trusted once a CA rotation signs with the new one. */
  caRotationOverlapMs: number;
  /** A step's bound: past it the cluster is Degraded (StepStalled) and Progressing False. */
  stepDeadlineMs: number;
  /**
   * The init container image of every member pod (tools/peer-wait): it holds etcd back until the peer names
   * resolve. Part of the configuration because on a real cluster it comes from the user's registry.
   */
  peerWaitImage: string;
  /** The image backup Jobs and restore init containers run the backup agent from: the operator's own. */
  agentImage: string;
  maxConcurrentReconciles: number;
  /** The Kubernetes cluster domain, for the fully qualified names in member certificates (CLUSTER_DOMAIN). */
  clusterDomain: string;
  /** How long the webhook server keeps serving after shutdown starts. */
  webhookDrainMs: number;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): OperatorConfig {
  const num = (key: string, fallback: number): number => {
    const v = env[key];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!Number.isFinite(n)) throw new Error(`${key} must be a number, got ${JSON.stringify(v)}`);
    return n;
  };
  const names = (value: string): string[] => [...new Set(value.split(',').map((ns) => ns.trim()).filter(Boolean))];
  return {
    watchNamespaces: names(env['WATCH_NAMESPACES'] ?? ''),
    namespace: env['POD_NAMESPACE'] ?? DEFAULT_OPERATOR_NAMESPACE,
    metricsNamespaces: names(env['METRICS_NAMESPACES'] ?? DEFAULT_METRICS_NAMESPACES.join(',')),
    podName: env['POD_NAME'] ?? `local-${process.pid}`,
    leaderElection: env['LEADER_ELECTION'] !== 'false',
    probePort: num('PROBE_PORT', 8081),
    metricsPort: num('METRICS_PORT', 8443),
    secureMetrics: env['SECURE_METRICS'] !== 'false',
    webhookPort: num('WEBHOOK_PORT', 9443),
    webhooks: env['WEBHOOKS'] !== 'false',
    webhookServiceName: env['WEBHOOK_SERVICE'] ?? 'quorum-webhook',
    certDir: env['CERT_DIR'] ?? '/tmp/quorum-webhook-certs',
    crashLoopGraceMs: num('CRASHLOOP_GRACE_SECONDS', 60) * 1000,
    caRotationOverlapMs: num('CA_ROTATION_OVERLAP_SECONDS', DEFAULT_CA_ROTATION_OVERLAP_SECONDS) * 1000,
    stepDeadlineMs: num('STEP_DEADLINE_SECONDS', 120) * 1000,
    peerWaitImage: env['PEER_WAIT_IMAGE'] || PEER_WAIT_IMAGE,
    agentImage: env['AGENT_IMAGE'] || OPERATOR_IMAGE,
    maxConcurrentReconciles: num('MAX_CONCURRENT_RECONCILES', 4),
    clusterDomain: env['CLUSTER_DOMAIN'] || DEFAULT_CLUSTER_DOMAIN,
    webhookDrainMs: num('WEBHOOK_DRAIN_SECONDS', 5) * 1000,
  };
}
