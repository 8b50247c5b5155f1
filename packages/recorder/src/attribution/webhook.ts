// The recorder's validating admission webhook, which only listens: the API server calls it for every UPDATE and
// DELETE of the recorded kinds, it remembers who sent each (admitted-users.ts), and it always allows. Its
// configuration (deploy/manifests.ts) is failurePolicy Ignore with a short timeout, so a recorder that is down
// or slow never holds up or refuses anyone's write; the records then say the user is unknown.
//
// Its serving certificate, the server and the CA in its configuration are the kit's webhookServing: one CA and
// certificate kept in a Secret in the recorder's namespace (the first process to start creates it), the CA
// published again every 30 s in case an install or an edit dropped it.
import { webhookServing, type WebhookServing } from '@quorum/kit';
import type { Client, Logger, RetryMetrics, RuntimeMetrics, WebhookClientAuth } from '@quorum/runtime';
import type { AdmittedUsers } from './admitted-users.ts';

/** The ValidatingWebhookConfiguration (cluster-scoped), its one webhook's name, and the path it calls. */
export const USERS_WEBHOOK_CONFIGURATION = 'quorum-recorder-users';
export const USERS_WEBHOOK_NAME = 'users.changerecorders.history.quorum.dev';
export const USERS_WEBHOOK_PATH = '/admitted-users';
/** The Secret, in the recorder's namespace, that holds the webhook's CA and serving certificate. */
export const USERS_WEBHOOK_CERT_SECRET = 'quorum-recorder-webhook-certs';
export const WEBHOOK_PORT = 9443;
export const WEBHOOK_PORT_NAME = 'webhook';
/** The Service port the API server calls (the recorder's Service, beside the history port). */
export const WEBHOOK_SERVICE_PORT = 443;
/** The ConfigMap, in the recorder's namespace, with the CA of the API server's client certificate (`ca.crt`). */
export const WEBHOOK_CLIENT_CA_CONFIGMAP = 'quorum-recorder-webhook-client-ca';

/** The certificate Secret's labels, when this process is the one that makes it. */
const CERT_SECRET_LABELS = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'change-recorder' };

export interface UsersWebhookOptions {
  client: Client;
  users: AdmittedUsers;
  /** The recorder's namespace: where the certificate Secret lives, and its Service's. */
  namespace: string;
  /** The Service the webhook configuration names (its names go in the certificate). */
  service: string;
  certDir: string;
  port: number;
  log: Logger;
  /** The manager's metrics: certificate retries, and refused requests (`quorum_webhook_requests_refused_total`). */
  metrics?: RuntimeMetrics | RetryMetrics;
  /**
   * Answer only callers with a client certificate of this CA, and of these common names when given: the API
   * server, once its administrator gives it one for webhooks. Unset: any caller that reaches the port.
   */
  clientAuth?: WebhookClientAuth;
}

/**
 * The webhook as a manager Runnable, on every replica (admission needs no leadership). Until it serves,
 * `problem()` says why; a setup that fails (the API server unreachable, RBAC missing) is retried, since the
 * rest of the recorder goes on recording without users meanwhile.
 */
export function usersWebhookRunnable(options: UsersWebhookOptions): WebhookServing {
  return webhookServing({
    name: 'users-webhook',
    client: options.client,
    namespace: options.namespace,
    service: options.service,
    secretName: USERS_WEBHOOK_CERT_SECRET,
    secretLabels: CERT_SECRET_LABELS,
    certDir: options.certDir,
    port: options.port,
    configurations: { validating: [USERS_WEBHOOK_CONFIGURATION] },
    register: (server) => {
      if (options.clientAuth) server.requireClientCertificates(options.clientAuth);
      server.registerValidating(USERS_WEBHOOK_PATH, options.users.review);
    },
    log: options.log,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
}
