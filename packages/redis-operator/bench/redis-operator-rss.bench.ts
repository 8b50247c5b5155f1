// The Redis operator's resident memory with no Redis (issue 24), `npm run bench -- redis-operator-rss`: the
// operator as users run it, installed from its manifests with its image loaded into localkube (its CRD, 1
// replica, in-cluster configuration).
//   redis_operator.idle_rss_mib_in_cluster  its pod's process's RSS from /proc/<pid>/status on the node, 20 s
//                                           after the install was ready, median of 10 readings 1 s apart; the
//                                           median of QUORUM_BENCH_RUNS installs (default 3), a fresh pod each.
import { installedIdleRssBench } from '../../runtime/bench/process-rss.ts';
import { buildOperatorImage } from '../src/deploy/image.ts';
import { install, uninstall } from '../src/deploy/install.ts';

await installedIdleRssBench({
  figure: 'redis_operator.idle_rss_mib_in_cluster',
  namespace: 'redis-operator-rss',
  build: () => buildOperatorImage(),
  operator: (env, image, namespace) => ({
    podMain: '/app/packages/redis-operator/dist/operator/main.js', // in the container
    install: () => install(env.client, { namespace, image }),
    uninstall: () => uninstall(env.client, { namespace }),
  }),
});
