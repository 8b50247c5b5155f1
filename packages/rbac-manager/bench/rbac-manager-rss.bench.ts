// The RBAC manager's resident memory with nothing to manage (issue 24), `npm run bench -- rbac-manager-rss`: the
// manager as users run it, installed from its manifests with its image loaded into localkube (1 replica instead
// of the default 2, so that one pod's process is read; its CRD, its escalation webhook with the certificate it
// issues, leader election, in-cluster configuration), and no RBACDefinition.
//   rbac_manager.idle_rss_mib_in_cluster  its pod's process's RSS from /proc/<pid>/status on the node, 20 s after
//                                         the install was ready, median of 10 readings 1 s apart; the median of
//                                         QUORUM_BENCH_RUNS installs (default 3), a fresh pod each.
import { installedIdleRssBench } from '../../runtime/bench/process-rss.ts';
import { buildRbacManagerImage } from '../src/deploy/image.ts';
import { installRbacManager, uninstallRbacManager } from '../src/deploy/install.ts';

await installedIdleRssBench({
  figure: 'rbac_manager.idle_rss_mib_in_cluster',
  namespace: 'rbac-manager-rss',
  build: () => buildRbacManagerImage(),
  operator: (env, image, namespace) => ({
    podMain: '/app/packages/rbac-manager/dist/operator/main.js', // in the container
    install: () => installRbacManager(env.client, { namespace, image, replicas: 1 }),
    uninstall: () => uninstallRbacManager(env.client, { namespace }),
  }),
});
