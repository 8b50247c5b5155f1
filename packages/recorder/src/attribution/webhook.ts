// The recorder's validating admission webhook, which only listens: the API server calls it for every UPDATE and
// DELETE of the recorded kinds, it remembers who sent each (admitted-users.ts), and it always allows. Its
// configuration (deploy/manifests.ts) is failurePolicy Ignore with a short timeout, so a recorder that is down
// or slow never holds up or refuses anyone's write; the records then say the user is unknown.
//
// Its serving certificate is made as the etcd operator makes its own, by the runtime's ensureServingCertificate:
// one CA and certificate kept in a Secret in the recorder's namespace (the first process to start creates it),
// written to local files for the server, and the CA patched into the webhook configuration so the API server
// trusts it, again every 30 s in case an install or an edit dropped it.
import { join } from 'node:path';
import { WebhookServer, ensureServingCertificate, patchCaBundle, sleep, type Client, type Logger, type RetryMetrics, type Runnable } from '@quorum/runtime';
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

/** How often the CA is published again, and how soon a failed setup is tried again. */
const REPUBLISH_MS = 30_000;
const SETUP_RETRY_MS = 5_000;

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
  metrics?: RetryMetrics;
}

/**
 * The webhook as a manager Runnable, on every replica (admission needs no leadership). Until it serves,
 * `problem()` says why; a setup that fails (the API server unreachable, RBAC missing) is retried, since the
 * rest of the recorder goes on recording without users meanwhile.
 */
export function usersWebhookRunnable(options: UsersWebhookOptions): Runnable & { problem: () => string | undefined } {
  let problem: string | undefined = 'the admission webhook is starting (making or reading its serving certificate)';
  return {
    name: 'users-webhook',
    needLeaderElection: false,
    problem: () => problem,
    start: async (signal) => {
      const { client, log } = options;
      let ca: string | undefined;
      while (!signal.aborted && ca === undefined) {
        try {
          ca = await ensureServingCertificate(client, { namespace: options.namespace, secretName: USERS_WEBHOOK_CERT_SECRET, service: options.service, certDir: options.certDir, labels: CERT_SECRET_LABELS });
        } catch (err) {
          problem = `the admission webhook cannot set up its serving certificate: ${err instanceof Error ? err.message : String(err)}; trying again every ${SETUP_RETRY_MS / 1000} s`;
          log.warn({ err }, problem);
          await sleep(SETUP_RETRY_MS, signal);
        }
      }
      if (ca === undefined) return;
      const server = new WebhookServer({
        port: options.port,
        certFile: join(options.certDir, 'tls.crt'),
        keyFile: join(options.certDir, 'tls.key'),
        ...(options.metrics ? { metrics: options.metrics } : {}),
        logger: (msg, fields, level) => log[level ?? 'info'](fields ?? {}, msg),
      });
      server.registerValidating(USERS_WEBHOOK_PATH, options.users.review);
      await server.start(signal);
      problem = undefined;
      log.info({ port: server.port }, 'admission webhook serving: records of ChangeRecorders with attribution.users name the user');
      while (!signal.aborted) {
        await publishCa(client, ca, options, log);
        await sleep(REPUBLISH_MS, signal);
      }
      await server.stop();
    },
  };
}

async function publishCa(client: Client, ca: string, options: UsersWebhookOptions, log: Logger): Promise<void> {
  try {
    await patchCaBundle(client, { validating: [USERS_WEBHOOK_CONFIGURATION] }, ca, { ...(options.metrics ? { metrics: options.metrics } : {}) });
  } catch (err) {
    // Without the CA the API server cannot call the webhook (failurePolicy Ignore: writes go on, users unknown).
    log.warn({ err }, `could not publish the webhook CA in ValidatingWebhookConfiguration ${USERS_WEBHOOK_CONFIGURATION}`);
  }
}
