// The manager process's settings, from its environment (the Deployment sets them), with defaults for running
// it locally against any kubeconfig.

/** The leader-election Lease, in the manager's namespace. */
export const LEASE_NAME = 'quorum-rbac-manager';
export const WEBHOOK_PORT = 9443;
export const METRICS_PORT = 8443;

export interface RbacManagerConfig {
  namespace: string;
  podName: string;
  leaderElection: boolean;
  probePort: number;
  /** METRICS_PORT (default 8443): /metrics over HTTPS behind TokenReview + SubjectAccessReview; 0: on the probe port, plain HTTP. */
  metricsPort: number;
  /** Serve the escalation webhook (0: not served, e.g. when run locally). */
  webhookPort: number;
  /** The Service in front of the webhook: its names go in the serving certificate. */
  service: string;
  certDir: string;
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): RbacManagerConfig {
  const port = (key: string, fallback: number): number => {
    const v = env[key];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0 || n > 65535) throw new Error(`${key} must be a port number, got ${JSON.stringify(v)}`);
    return n;
  };
  return {
    namespace: env['POD_NAMESPACE'] || 'quorum-system',
    podName: env['POD_NAME'] || `local-${process.pid}`,
    leaderElection: env['LEADER_ELECTION'] !== 'false',
    probePort: port('PROBE_PORT', 8081),
    metricsPort: port('METRICS_PORT', METRICS_PORT),
    webhookPort: port('WEBHOOK_PORT', WEBHOOK_PORT),
    service: env['WEBHOOK_SERVICE'] || 'quorum-rbac-manager',
    certDir: env['CERT_DIR'] || '/tmp/quorum-rbac-manager-webhook-certs',
  };
}
