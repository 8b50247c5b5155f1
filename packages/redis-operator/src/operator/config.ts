// The operator process's settings, from its environment (the Deployment sets them), with defaults for running
// it locally against any kubeconfig.
export interface RedisOperatorConfig {
  /** The operator's namespace: where its leader-election Lease lives. */
  namespace: string;
  /** WATCH_NAMESPACES (comma-separated): the tenant namespaces, each watched on its own (a Role in each); every namespace when empty. */
  watchNamespaces: readonly string[];
  podName: string;
  leaderElection: boolean;
  probePort: number;
  /** METRICS_PORT (default 8443): /metrics over HTTPS behind TokenReview + SubjectAccessReview; 0: on the probe port, plain HTTP. */
  metricsPort: number;
  /** The server image's repository; the tag is spec.version (default quorum.dev/redis, the image this repository assembles). */
  redisRepository: string;
  /** The operator's own image, which backup Jobs and restore init containers run (it carries the agent). */
  agentImage: string;
  /** Serve the admission webhook (WEBHOOKS, default true; the manifests register it). */
  webhooks: boolean;
  /** WEBHOOK_PORT (default 9443), the Service the configuration calls (WEBHOOK_SERVICE) and where the serving certificate is written (CERT_DIR). */
  webhookPort: number;
  webhookServiceName: string;
  certDir: string;
}

/** The webhook's Service and the Secret its serving certificate is kept in (the operator's namespace; not the etcd operator's). */
export const WEBHOOK_SERVICE = 'quorum-redis-webhook';
export const WEBHOOK_CERT_SECRET = 'quorum-redis-webhook-certs';
export const WEBHOOK_PORT = 9443;

export const METRICS_PORT = 8443;
export const DEFAULT_REDIS_REPOSITORY = 'quorum.dev/redis';
export const OPERATOR_VERSION = '0.1.0';
/** The operator's image as the manifests name it; backup Jobs and restore init containers run it too. */
export const OPERATOR_IMAGE = `ghcr.io/quorum-dev/redis-operator:${OPERATOR_VERSION}`;

/** How long a CA rotation keeps the new CA beside the old one before the servers move to it: 7 days, like the etcd operator's. */
export const DEFAULT_CA_ROTATION_OVERLAP_SECONDS = 7 * 24 * 3600;

/** CA_ROTATION_OVERLAP_SECONDS, in milliseconds: the time clients have to read the two-CA `ca.crt` (docs/redis.md "Rotating the CA"). */
export function caRotationOverlapMs(env: NodeJS.ProcessEnv = process.env): number {
  const raw = env['CA_ROTATION_OVERLAP_SECONDS'];
  const seconds = Number(raw ?? DEFAULT_CA_ROTATION_OVERLAP_SECONDS);
  if (!Number.isInteger(seconds) || seconds < 0) throw new Error(`CA_ROTATION_OVERLAP_SECONDS must be a whole number of seconds, got ${JSON.stringify(raw)}`);
  return seconds * 1000;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): RedisOperatorConfig {
  const probe = port(env, 'PROBE_PORT', 8081);
  const metrics = port(env, 'METRICS_PORT', METRICS_PORT);
  const webhook = port(env, 'WEBHOOK_PORT', WEBHOOK_PORT);
  return {
    namespace: env['POD_NAMESPACE'] ?? 'quorum-system',
    watchNamespaces: [...new Set((env['WATCH_NAMESPACES'] ?? '').split(',').map((ns) => ns.trim()).filter(Boolean))],
    podName: env['POD_NAME'] ?? 'quorum-redis-operator-local',
    leaderElection: env['LEADER_ELECTION'] !== 'false',
    probePort: probe,
    metricsPort: metrics,
    redisRepository: env['REDIS_REPOSITORY'] || DEFAULT_REDIS_REPOSITORY,
    agentImage: env['OPERATOR_IMAGE'] || OPERATOR_IMAGE,
    webhooks: env['WEBHOOKS'] !== 'false',
    webhookPort: webhook,
    webhookServiceName: env['WEBHOOK_SERVICE'] || WEBHOOK_SERVICE,
    certDir: env['CERT_DIR'] || '/tmp/quorum-redis-webhook-certs',
  };
}

function port(env: NodeJS.ProcessEnv, name: string, fallback: number): number {
  const value = Number(env[name] ?? fallback);
  if (!Number.isInteger(value) || value < 0) throw new Error(`${name} must be a port number, got ${JSON.stringify(env[name])}`);
  return value;
}
