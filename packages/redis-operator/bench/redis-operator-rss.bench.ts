// The Redis operator's resident memory with no Redis (issue 24), `npm run bench -- redis-operator-rss`: the
// operator as users run it, installed from its manifests with its image loaded into localkube (its CRD, 1
// replica, in-cluster configuration).
//   redis_operator.idle_rss_mib_in_cluster  its pod's process's RSS from /proc/<pid>/status on the node, 20 s
//                                           after the install was ready, median of 10 readings 1 s apart; the
//                                           median of QUORUM_BENCH_RUNS installs (default 3), a fresh pod each.
import { TestEnv } from '@quorum/localkube/testing';
import { installedPodRss, medianOfRuns } from '../../runtime/bench/process-rss.ts';
import { buildOperatorImage } from '../src/deploy/image.ts';
import { install, uninstall } from '../src/deploy/install.ts';

const RUNS = Number(process.env['QUORUM_BENCH_RUNS'] ?? 3);
const progress = (msg: string): void => void process.stderr.write(`[redis operator rss] ${msg}\n`);

progress('building the Redis operator image');
const built = await buildOperatorImage();
const env = await TestEnv.start({ nodes: 1 });
try {
  await env.kube.loadImage(built.archive);
  const namespace = await env.namespace('redis-operator-rss');
  const pod = {
    podMain: '/app/packages/redis-operator/dist/operator/main.js', // in the container
    install: () => install(env.client, { namespace, image: built.name }),
    uninstall: () => uninstall(env.client, { namespace }),
  };
  const mib = await medianOfRuns(RUNS, 'idle, in cluster', progress, () => installedPodRss(pod));
  process.stdout.write(JSON.stringify({ bench: 'redis_operator.idle_rss_mib_in_cluster', value: Math.round(mib * 1000) / 1000, unit: 'MiB' }) + '\n');
} finally {
  await env.stop();
}
