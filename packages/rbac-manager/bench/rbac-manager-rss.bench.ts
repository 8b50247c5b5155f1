// The RBAC manager's resident memory with nothing to manage (issue 24), `npm run bench -- rbac-manager-rss`: the
// manager as users run it, installed from its manifests with its image loaded into localkube (1 replica instead
// of the default 2, so that one pod's process is read; its CRD, its escalation webhook with the certificate it
// issues, leader election, in-cluster configuration), and no RBACDefinition.
//   rbac_manager.idle_rss_mib_in_cluster  its pod's process's RSS from /proc/<pid>/status on the node, 20 s after
//                                         the install was ready, median of 10 readings 1 s apart; the median of
//                                         QUORUM_BENCH_RUNS installs (default 3), a fresh pod each.
import { TestEnv } from '@quorum/localkube/testing';
import { installedPodRss, medianOfRuns } from '../../runtime/bench/process-rss.ts';
import { buildRbacManagerImage } from '../src/deploy/image.ts';
import { installRbacManager, uninstallRbacManager } from '../src/deploy/install.ts';

const RUNS = Number(process.env['QUORUM_BENCH_RUNS'] ?? 3);
const progress = (msg: string): void => void process.stderr.write(`[rbac manager rss] ${msg}\n`);

progress('building the RBAC manager image');
const built = await buildRbacManagerImage();
const env = await TestEnv.start({ nodes: 1 });
try {
  await env.kube.loadImage(built.archive);
  const namespace = await env.namespace('rbac-manager-rss');
  const pod = {
    podMain: '/app/packages/rbac-manager/dist/operator/main.js', // in the container
    install: () => installRbacManager(env.client, { namespace, image: built.name, replicas: 1 }),
    uninstall: () => uninstallRbacManager(env.client, { namespace }),
  };
  const mib = await medianOfRuns(RUNS, 'idle, in cluster', progress, () => installedPodRss(pod));
  process.stdout.write(JSON.stringify({ bench: 'rbac_manager.idle_rss_mib_in_cluster', value: Math.round(mib * 1000) / 1000, unit: 'MiB' }) + '\n');
} finally {
  await env.stop();
}
