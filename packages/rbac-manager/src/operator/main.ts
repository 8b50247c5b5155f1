// Entry point of the manager's container: `node packages/rbac-manager/src/operator/main.ts`. The controller
// runs on the leader; the escalation webhook on every replica.
import { LeadershipLostError, shutdownSignal } from '@quorum/runtime';
import { ESCALATION_WEBHOOK_CONFIGURATION, escalationWebhookRunnable, WEBHOOK_CERT_SECRET } from '../admission/serving.ts';
import { configFromEnv, LEASE_NAME } from './config.ts';
import { createRbacManager } from './manager.ts';

const config = configFromEnv();
const { manager } = await createRbacManager({
  instance: config.podName,
  escalationWebhook: {
    configuration: ESCALATION_WEBHOOK_CONFIGURATION,
    target: { service: { namespace: config.namespace, name: config.service } },
    ca: { secret: { namespace: config.namespace, name: WEBHOOK_CERT_SECRET } },
  },
  manager: {
    probePort: config.probePort,
    ...(config.metricsPort > 0 ? { secureMetrics: { port: config.metricsPort } } : {}),
    ...(config.leaderElection ? { leaderElection: { name: LEASE_NAME, namespace: config.namespace, identity: config.podName } } : {}),
  },
});
if (config.webhookPort > 0) {
  const webhook = escalationWebhookRunnable({
    client: manager.client,
    namespace: config.namespace,
    service: config.service,
    certDir: config.certDir,
    port: config.webhookPort,
    log: manager.log.child({ component: 'escalation-webhook' }),
    metrics: manager.metrics,
  });
  manager.add(webhook);
  manager.addReadyCheck('escalation-webhook', () => {
    const problem = webhook.problem();
    if (problem !== undefined) throw new Error(problem);
  });
}
manager.log.info({ namespace: config.namespace, webhookPort: config.webhookPort, leaderElection: config.leaderElection }, 'quorum rbac manager starting');
try {
  await manager.start(shutdownSignal());
  process.exit(0);
} catch (err) {
  manager.log.error({ err }, err instanceof LeadershipLostError ? 'leadership lost; exiting so a fresh process campaigns again' : 'rbac manager failed');
  process.exit(1);
}
