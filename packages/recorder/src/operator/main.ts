// Entry point of the recorder's container: `node packages/recorder/src/operator/main.ts`. The ChangeRecorder
// controller and its recording sessions run on the leader; the read-only history endpoint on every replica.
import { LeadershipLostError, shutdownSignal } from '@quorum/runtime';
import { AdmittedUsers } from '../attribution/admitted-users.ts';
import { usersWebhookRunnable } from '../attribution/webhook.ts';
import { historyServerRunnable } from '../history/server.ts';
import { ChangeRecorders } from '../resources.ts';
import { objectStoreSources } from '../store/target.ts';
import { configFromEnv, LEASE_NAME } from './config.ts';
import { createRecorder } from './recorder.ts';

const config = configFromEnv();
// The users the webhook admits are what the sessions look up: one map, made before either.
const webhook = config.usersWebhook ? { users: new AdmittedUsers() } : undefined;
let usersWebhook: ReturnType<typeof usersWebhookRunnable> | undefined;
const { manager } = await createRecorder({
  storageRoot: config.storageRoot,
  credentialsRoot: config.credentialsRoot,
  namespace: config.namespace,
  instance: config.podName,
  manager: {
    probePort: config.probePort,
    ...(config.metricsPort > 0 ? { secureMetrics: { port: config.metricsPort } } : {}),
    ...(config.leaderElection ? { leaderElection: { name: LEASE_NAME, namespace: config.namespace, identity: config.podName } } : {}),
  },
  // Serving is problem() undefined: not to be mistaken for "not made yet", which the runnable below is at first.
  ...(webhook ? { usersWebhook: { users: webhook.users, problem: () => (usersWebhook ? usersWebhook.problem() : 'the admission webhook is starting') } } : {}),
});
if (webhook) {
  usersWebhook = usersWebhookRunnable({
    client: manager.client,
    users: webhook.users,
    namespace: config.namespace,
    service: config.historyService,
    certDir: config.certDir,
    port: config.webhookPort,
    log: manager.log.child({ component: 'users-webhook' }),
    metrics: manager.metrics,
    ...(config.webhookClientCAFile ? { clientAuth: { caFile: config.webhookClientCAFile, allowedNames: config.webhookClientNames } } : {}),
  });
  manager.add(usersWebhook);
}
if (config.historyPort > 0) {
  const svc = config.historyService;
  manager.add(
    historyServerRunnable({
      storageRoot: config.storageRoot,
      // Every replica serves reads, leader or not: it asks the API server which object stores the ChangeRecorders name.
      objectStores: async () => objectStoreSources((await manager.client.list(ChangeRecorders)).items, config.credentialsRoot),
      client: manager.client,
      port: config.historyPort,
      dnsNames: [`${svc}.${config.namespace}.svc`, `${svc}.${config.namespace}.svc.cluster.local`, svc],
      log: manager.log.child({ component: 'history-endpoint' }),
    }),
  );
}
manager.log.info(
  { storageRoot: config.storageRoot, historyPort: config.historyPort, usersWebhook: config.usersWebhook, webhookClientCertificates: config.webhookClientCAFile ? 'required' : 'not asked for', leaderElection: config.leaderElection },
  'quorum change recorder starting',
);
try {
  await manager.start(shutdownSignal());
  process.exit(0);
} catch (err) {
  manager.log.error({ err }, err instanceof LeadershipLostError ? 'leadership lost; exiting so a fresh process campaigns again' : 'recorder failed');
  process.exit(1);
}
