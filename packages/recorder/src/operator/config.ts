// The recorder process's settings, from its environment (the Deployment sets them), with defaults for running
// it locally against any kubeconfig.
import { WEBHOOK_PORT } from '../attribution/webhook.ts';
import { HISTORY_PORT, HISTORY_SERVICE } from '../history/protocol.ts';

/** The leader-election Lease, in the recorder's namespace. */
export const LEASE_NAME = 'quorum-recorder';
/** Not 8443: that is the history endpoint's (HISTORY_PORT). */
export const METRICS_PORT = 8444;
/** Where the credentials Secrets of object stores are mounted, one folder per Secret (named after it). */
export const DEFAULT_CREDENTIALS_ROOT = '/var/run/secrets/quorum-recorder';

export interface RecorderConfig {
  /** The volume every ChangeRecorder's storage path is below. */
  storageRoot: string;
  /** The folder each object store's credentials Secret is mounted below (`<root>/<secret name>`). */
  credentialsRoot: string;
  /** Where the leader-election Lease lives (the recorder's namespace). */
  namespace: string;
  podName: string;
  leaderElection: boolean;
  probePort: number;
  /** METRICS_PORT (default 8444): /metrics over HTTPS behind TokenReview + SubjectAccessReview; 0: on the probe port, plain HTTP. */
  metricsPort: number;
  /** The history endpoint's port (0: no endpoint). */
  historyPort: number;
  /** The Service in front of the endpoint and the webhook: its names go in the generated serving certificates. */
  historyService: string;
  /** Serve the admission webhook that tells who made each change (the manifests register it when asked to). */
  usersWebhook: boolean;
  webhookPort: number;
  /** Where the webhook's certificate files are written (a writable directory: the root filesystem is not). */
  certDir: string;
  /** The CA of the API server's client certificate: the webhook then answers only callers with one (WEBHOOK_CLIENT_CA_FILE). */
  webhookClientCAFile?: string;
  /** The common names allowed among those certificates (WEBHOOK_CLIENT_NAMES, comma-separated); empty: any the CA signed. */
  webhookClientNames: string[];
}

export function configFromEnv(env: NodeJS.ProcessEnv = process.env): RecorderConfig {
  const num = (key: string, fallback: number): number => {
    const v = env[key];
    if (v === undefined || v === '') return fallback;
    const n = Number(v);
    if (!Number.isInteger(n) || n < 0) throw new Error(`${key} must be a port number, got ${JSON.stringify(v)}`);
    return n;
  };
  return {
    storageRoot: env['STORAGE_ROOT'] || '/var/lib/quorum-recorder',
    credentialsRoot: env['CREDENTIALS_ROOT'] || DEFAULT_CREDENTIALS_ROOT,
    namespace: env['POD_NAMESPACE'] || 'quorum-system',
    podName: env['POD_NAME'] || `local-${process.pid}`,
    leaderElection: env['LEADER_ELECTION'] !== 'false',
    probePort: num('PROBE_PORT', 8081),
    metricsPort: num('METRICS_PORT', METRICS_PORT),
    historyPort: num('HISTORY_PORT', HISTORY_PORT),
    historyService: env['HISTORY_SERVICE'] || HISTORY_SERVICE,
    usersWebhook: env['USERS_WEBHOOK'] === 'true',
    webhookPort: num('WEBHOOK_PORT', WEBHOOK_PORT),
    certDir: env['CERT_DIR'] || '/tmp/quorum-recorder-webhook-certs',
    ...(env['WEBHOOK_CLIENT_CA_FILE'] ? { webhookClientCAFile: env['WEBHOOK_CLIENT_CA_FILE'] } : {}),
    webhookClientNames: (env['WEBHOOK_CLIENT_NAMES'] ?? '').split(',').map((n) => n.trim()).filter(Boolean),
  };
}
