// An operator's admission webhooks as one manager Runnable, on every replica (admission needs no leadership):
// the serving certificate from its Secret (the runtime's ensureServingCertificate: the first replica makes it,
// the others read it) → the HTTPS server → the CA published into the webhook configurations → the Secret read
// again and the CA published again every 30 s → on stop, a drain while the endpoint's removal reaches every
// kube-proxy, then the server stops.
//
// The etcd operator and the recorder each had a copy; where they differed, this keeps the better of the two:
// - A setup that fails (API server unreachable, RBAC missing) is retried every 5 s and voiced by `problem()`
//   and a warn log (the recorder's); the etcd operator's runnable failed once and never served again.
// - The CA is published once the server listens, then every 30 s; a failed publish is a warn log and is
//   tried again after 5 s instead of 30 (neither copy did that), never the end of the runnable (the etcd
//   operator's first publish could end it).
// - Stopping drains for `drainMs` before the server stops (the etcd operator's intent; its server was
//   started with the abort signal, so it stopped at once and the drain did nothing).
// - Rotation: each round reads the Secret again; a certificate replaced there (the Secret deleted and made
//   anew, or renewed by hand) reaches the files, which the server reloads, and its CA is published (neither
//   copy read the Secret again). The same round renews the certificate once a third of its life is left
//   (ensureServingCertificate: both CAs published first, the new certificate served two minutes later).
// - Refusals (a body too large, too many reviews in flight, a failed client-certificate handshake) are counted
//   in the manager's registry, `quorum_webhook_requests_refused_total{webhook=<name>, reason}`, for every operator
//   that passes its manager's `metrics` (the runtime's WebhookServer does the counting and the spaced warn lines).
import { join } from 'node:path';
import { ApiError, WebhookServer, ensureServingCertificate, errorText, patchCaBundle, sleep, type Client, type Logger, type RetryMetrics, type Runnable, type RuntimeMetrics, type WebhookConfigurationNames } from '@quorum/runtime';

export const WEBHOOK_REPUBLISH_MS = 30_000;
export const WEBHOOK_RETRY_MS = 5_000;

export interface WebhookServingOptions {
  /** The Runnable's name, in logs. */
  name: string;
  client: Client;
  /** The operator's namespace: where the certificate Secret lives, and the Service. */
  namespace: string;
  /** The Service the webhook configurations call (its in-cluster names go in the certificate). */
  service: string;
  /** The Secret holding `ca.crt`, `tls.crt` and `tls.key`, shared by every replica. */
  secretName: string;
  /** The Secret's labels, when this process is the one that makes it. */
  secretLabels?: Record<string, string>;
  /** Where the server reads `tls.crt` and `tls.key`. */
  certDir: string;
  port: number;
  /** The configurations whose every webhook gets the CA as caBundle. */
  configurations: WebhookConfigurationNames;
  /** Registers the handlers (`server.registerValidating(path, review)`, …). */
  register(server: WebhookServer): void;
  log: Logger;
  /**
   * The manager's `metrics`: failed certificate reloads and renewals count in `runtime_retries_total`, refused
   * requests in `quorum_webhook_requests_refused_total{webhook: name, reason}`. Given only its `retries` (as
   * before), refusals are logged but not counted.
   */
  metrics?: RuntimeMetrics | RetryMetrics;
  /** How long the server keeps answering after the stop signal. Default 0. */
  drainMs?: number;
  /** Default 30 s. */
  republishMs?: number;
  /** How soon a failed setup or publish is tried again. Default 5 s. */
  retryMs?: number;
}

export interface WebhookServing extends Runnable {
  /** Why the webhooks are not serving, or undefined while they are. */
  problem(): string | undefined;
  /** The port listened on, once serving (a `port` of 0 picks a free one). */
  port(): number | undefined;
}

export function webhookServing(options: WebhookServingOptions): WebhookServing {
  let problem: string | undefined = 'the admission webhook is starting (making or reading its serving certificate)';
  let port: number | undefined;
  return {
    name: options.name,
    needLeaderElection: false,
    problem: () => problem,
    port: () => port,
    start: async (signal) => {
      const retryMs = options.retryMs ?? WEBHOOK_RETRY_MS;
      const metrics = metricsOf(options);
      let ca = await certificateUntilReady(options, signal, (why) => (problem = why));
      if (ca === undefined) return;
      // Not given the signal: it must keep answering through the drain below.
      const server = new WebhookServer({
        name: options.name,
        port: options.port,
        certFile: join(options.certDir, 'tls.crt'),
        keyFile: join(options.certDir, 'tls.key'),
        ...(metrics.retries ? { metrics: metrics.retries } : {}),
        ...(metrics.refusals ? { refusalMetrics: metrics.refusals } : {}),
        logger: (msg, fields, level) => options.log[level ?? 'info'](fields ?? {}, msg),
      });
      options.register(server);
      await server.start();
      port = server.port;
      problem = undefined;
      options.log.info({ port: server.port }, 'webhook server listening');
      while (!signal.aborted) {
        const published = await publish(options, ca);
        await sleep(published ? (options.republishMs ?? WEBHOOK_REPUBLISH_MS) : retryMs, signal);
        if (!signal.aborted) ca = (await readCertificate(options)) ?? ca;
      }
      problem = 'the admission webhook is stopping';
      await sleep(options.drainMs ?? 0);
      await server.stop();
      port = undefined;
    },
  };
}

/** The CA once the certificate is in `certDir`; undefined when stopped first. */
async function certificateUntilReady(options: WebhookServingOptions, signal: AbortSignal, voice: (problem: string) => void): Promise<string | undefined> {
  const retryMs = options.retryMs ?? WEBHOOK_RETRY_MS;
  while (!signal.aborted) {
    try {
      return await ensureCertificate(options);
    } catch (err) {
      const problem = `the admission webhook cannot set up its serving certificate: ${errorText(err)}; trying again every ${retryMs / 1000} s`;
      voice(problem);
      options.log.warn({ err }, problem);
      await sleep(retryMs, signal);
    }
  }
  return undefined;
}

function ensureCertificate(options: WebhookServingOptions): Promise<string> {
  return ensureServingCertificate(options.client, {
    namespace: options.namespace,
    secretName: options.secretName,
    service: options.service,
    certDir: options.certDir,
    ...(options.secretLabels ? { labels: options.secretLabels } : {}),
    // Tried again at the next round (30 s) while the current certificate is still valid: voiced each time.
    onRenewalFailed: (err) => {
      metricsOf(options).retries?.retried(`${options.name}/certificate-renewal`, errorReason(err));
      options.log.warn({ err }, `could not renew the webhook serving certificate in Secret ${options.namespace}/${options.secretName} (the operator needs update on it); serving the current one, trying again in ${(options.republishMs ?? WEBHOOK_REPUBLISH_MS) / 1000} s`);
    },
  });
}

/** The retry series and, given a whole RuntimeMetrics, the registry refusals are counted in. */
function metricsOf(options: WebhookServingOptions): { retries?: RetryMetrics; refusals?: RuntimeMetrics } {
  const { metrics } = options;
  if (!metrics) return {};
  // By shape, not instanceof: a kit and a runtime loaded from different copies still agree on it.
  return 'retries' in metrics ? { retries: metrics.retries, refusals: metrics } : { retries: metrics };
}

/** A short, bounded word for a metric label: the API's reason, else the error's name. */
function errorReason(err: unknown): string {
  if (err instanceof ApiError) return err.reason || String(err.code);
  return err instanceof Error ? err.name : 'Error';
}

/** The Secret read again (a rotation reaches the files and the CA); undefined, and a warn line, if it cannot be. */
async function readCertificate(options: WebhookServingOptions): Promise<string | undefined> {
  try {
    return await ensureCertificate(options);
  } catch (err) {
    options.log.warn({ err }, `could not read the webhook certificate Secret ${options.namespace}/${options.secretName}; serving the one in ${options.certDir}`);
    return undefined;
  }
}

/** Re-installed or edited configurations lose the CA: publish it (no write where it is already there). */
async function publish(options: WebhookServingOptions, ca: string): Promise<boolean> {
  try {
    const { retries } = metricsOf(options);
    await patchCaBundle(options.client, options.configurations, ca, retries ? { metrics: retries } : {});
    return true;
  } catch (err) {
    // Without the CA the API server cannot call the webhooks: their failurePolicy decides what that means.
    options.log.warn({ err, configurations: options.configurations }, 'could not publish the webhook CA');
    return false;
  }
}
