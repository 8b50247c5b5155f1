// Entry point of the operator's container: `node packages/redis-operator/src/operator/main.ts`.
import { LeadershipLostError, shutdownSignal } from '@quorum/runtime';
import { configFromEnv } from './config.ts';
import { createRedisOperator, LEASE_NAME } from './operator.ts';

const config = configFromEnv();
const manager = await createRedisOperator({
  manager: {
    probePort: config.probePort,
    ...(config.metricsPort > 0 ? { secureMetrics: { port: config.metricsPort } } : {}),
    ...(config.watchNamespaces.length > 0 ? { namespaces: config.watchNamespaces } : {}),
    ...(config.leaderElection ? { leaderElection: { name: LEASE_NAME, namespace: config.namespace, identity: config.podName } } : {}),
  },
  image: (_engine, version) => `${config.redisRepository}:${version}`,
  agentImage: config.agentImage,
  operatorNamespace: config.namespace,
  ...(config.webhooks ? { webhook: { namespace: config.namespace, service: config.webhookServiceName, certDir: config.certDir, port: config.webhookPort } } : {}),
});
manager.log.info({ watchNamespaces: config.watchNamespaces.length > 0 ? config.watchNamespaces : '(all)', leaderElection: config.leaderElection }, 'quorum redis operator starting');
try {
  await manager.start(shutdownSignal());
  process.exit(0);
} catch (err) {
  manager.log.error({ err }, err instanceof LeadershipLostError ? 'leadership lost; exiting so a fresh process campaigns again' : 'operator failed');
  process.exit(1);
}
