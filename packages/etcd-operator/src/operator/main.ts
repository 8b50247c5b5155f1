// Entry point of the operator's container: `node packages/etcd-operator/src/operator/main.ts`.
import { LeadershipLostError, shutdownSignal } from '@quorum/runtime';
import { configFromEnv } from './config.ts';
import { createOperator } from './operator.ts';

const config = configFromEnv();
const manager = await createOperator({ config });
manager.log.info({ watchNamespaces: config.watchNamespaces.length > 0 ? config.watchNamespaces : '(all)', leaderElection: config.leaderElection, peerWaitImage: config.peerWaitImage }, 'quorum etcd operator starting');
try {
  await manager.start(shutdownSignal());
  process.exit(0);
} catch (err) {
  manager.log.error({ err }, err instanceof LeadershipLostError ? 'leadership lost; exiting so a fresh process campaigns again' : 'operator failed');
  process.exit(1);
}
