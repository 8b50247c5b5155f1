// The operator process's settings, from its environment (the Deployment sets them), with defaults for running
// it locally against any kubeconfig.
export interface RedisOperatorConfig {
  /** The operator's namespace: where its leader-election Lease lives. */
  namespace: string;
  /** Watch only this namespace (a Role instead of a ClusterRole); every namespace when empty. */
  watchNamespace: string;
  podName: string;
  leaderElection: boolean;
  probePort: number;
  /** METRICS_PORT (default 8443): /metrics over HTTPS behind TokenReview + SubjectAccessReview; 0: on the probe port, plain HTTP. */
  metricsPort: number;
  /** The server image's repository; the tag is spec.version (default quorum.dev/redis, the image this repository assembles). */
  redisRepository: string;
  /** The operator's own image, which backup Jobs and restore init containers run (it carries the agent). */
  agentImage: string;
}

export const METRICS_PORT = 8443;
export const DEFAULT_REDIS_REPOSITORY = 'quorum.dev/redis';
export const OPERATOR_VERSION = '0.1.0';
/** The operator's image as the manifests name it; backup Jobs and restore init containers run it too. */
export const OPERATOR_IMAGE = `ghcr.io/quorum-dev/redis-operator:${OPERATOR_VERSION}`;

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): RedisOperatorConfig {
  const probe = Number(env['PROBE_PORT'] ?? 8081);
  if (!Number.isInteger(probe) || probe < 0) throw new Error(`PROBE_PORT must be a port number, got ${JSON.stringify(env['PROBE_PORT'])}`);
  const metrics = Number(env['METRICS_PORT'] ?? METRICS_PORT);
  if (!Number.isInteger(metrics) || metrics < 0) throw new Error(`METRICS_PORT must be a port number, got ${JSON.stringify(env['METRICS_PORT'])}`);
  return {
    namespace: env['POD_NAMESPACE'] ?? 'quorum-system',
    watchNamespace: env['WATCH_NAMESPACE'] ?? '',
    podName: env['POD_NAME'] ?? 'quorum-redis-operator-local',
    leaderElection: env['LEADER_ELECTION'] !== 'false',
    probePort: probe,
    metricsPort: metrics,
    redisRepository: env['REDIS_REPOSITORY'] || DEFAULT_REDIS_REPOSITORY,
    agentImage: env['OPERATOR_IMAGE'] || OPERATOR_IMAGE,
  };
}
