// The escalation webhook served by the kit's webhookServing: one CA and certificate kept in a Secret in the
// manager's namespace (the first replica to start makes it), the CA published into the configuration below.
import { webhookServing, type WebhookServing } from '@quorum/kit';
import type { Client, Logger, RuntimeMetrics } from '@quorum/runtime';
import type { RBACDefinition } from '../api/rbacdefinition.ts';
import { ESCALATION_WEBHOOK_PATH, escalationWebhook, subjectAccessReviewer } from './webhook.ts';

/** The ValidatingWebhookConfiguration (cluster-scoped) and its one webhook's name. */
export const ESCALATION_WEBHOOK_CONFIGURATION = 'quorum-rbac-manager';
export const ESCALATION_WEBHOOK_NAME = 'escalation.rbacdefinitions.rbac.quorum.dev';
export const WEBHOOK_CERT_SECRET = 'quorum-rbac-manager-webhook-certs';

export interface EscalationServingOptions {
  client: Client;
  namespace: string;
  service: string;
  certDir: string;
  port: number;
  log: Logger;
  /** The manager's metrics: refused requests and failed certificate renewals are counted there. */
  metrics?: RuntimeMetrics;
}

/** On every replica (admission needs no leadership); `problem()` says why it is not serving yet. */
export function escalationWebhookRunnable(options: EscalationServingOptions): WebhookServing {
  return webhookServing({
    name: 'escalation-webhook',
    client: options.client,
    namespace: options.namespace,
    service: options.service,
    secretName: WEBHOOK_CERT_SECRET,
    secretLabels: { 'app.kubernetes.io/name': 'quorum-rbac-manager', 'app.kubernetes.io/part-of': 'quorum' },
    certDir: options.certDir,
    port: options.port,
    configurations: { validating: [ESCALATION_WEBHOOK_CONFIGURATION] },
    register: (server) => server.registerValidating<RBACDefinition>(ESCALATION_WEBHOOK_PATH, escalationWebhook(subjectAccessReviewer(options.client))),
    log: options.log,
    drainMs: 5_000,
    ...(options.metrics ? { metrics: options.metrics } : {}),
  });
}
