// The etcd operator's resident memory (issue 24), `npm run bench -- operator-rss`, measured two ways.
// Out of cluster: the operator as its image runs it (the image built and its /app unpacked here: the compiled
// JavaScript, the production dependencies, the entrypoint's node flags and the image's environment), started
// against localkube with a kubeconfig, watching every namespace; webhooks off (they need the Service and webhook
// configurations of an install) and leader election off (a released Lease would make the next run wait).
// QUORUM_RSS_FROM=sources runs src/operator/main.ts instead, as the images did before issue 24.
//   etcd_operator.idle_rss_mib         with the CRDs installed and no resources of its kinds
//   etcd_operator.rss_mib_50_clusters  with 50 EtcdClusters (3 replicas, default storage) whose pods stay Pending:
//                                      their pod template asks for a node label no node has. The operator caches
//                                      and reconciles them (the first member's PVC and pod, Services, PDB, status)
//                                      and waits for the pod, as it would for an unschedulable cluster.
// RSS from /proc/<pid>/status, 20 s after the state was reached, median of 10 readings 1 s apart; each figure is
// the median of QUORUM_BENCH_RUNS runs (default 3), a fresh process each.
// In cluster (`_in_cluster` figures): the operator as users run it, installed from its manifests (1 replica,
// webhooks with their certificate issued, leader election, in-cluster configuration), its container's process
// read the same way on the node (localkube's containers are processes of this machine); the median of
// QUORUM_BENCH_RUNS installs, a fresh pod each (the first issues the webhook certificate, the others read its
// Secret). QUORUM_RSS_OUT_OF_CLUSTER=false measures the installed pods only; QUORUM_RSS_WITH_CLUSTERS=false the idle
// figures only.
import { rm } from 'node:fs/promises';
import { join } from 'node:path';
import { unpackImage } from '@quorum/kit/image';
import { CustomResourceDefinitions, Pods } from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { freePort, fromSources, installedPodRss, medianOfRuns, OperatorProcess, outOfCluster, sourcesCommand, type InstalledOperator, type NodeCommand } from '../../runtime/bench/process-rss.ts';
import { etcdBackupCRD, etcdBackupScheduleCRD, etcdClusterCRD, etcdRestoreCRD } from '../src/api/crd.ts';
import { API_VERSION, KIND } from '../src/api/etcdcluster.ts';
import { LABELS } from '../src/names.ts';
import { buildOperatorImage } from '../src/deploy/image.ts';
import { install, uninstall } from '../src/deploy/install.ts';
import { EtcdClusters } from '../src/resources.ts';
import { progressTo, report } from './figures.ts';

const RUNS = Number(process.env['QUORUM_BENCH_RUNS'] ?? 3);
const CLUSTERS = 50;
/** QUORUM_RSS_WITH_CLUSTERS=false: the idle figures only. */
const withClusters = process.env['QUORUM_RSS_WITH_CLUSTERS'] !== 'false';
const MAIN = join(import.meta.dirname, '..', 'src', 'operator', 'main.ts');
const progress = progressTo('etcd operator rss');

async function installCRDs(env: TestEnv): Promise<void> {
  for (const crd of [etcdClusterCRD(), etcdBackupCRD(), etcdBackupScheduleCRD(), etcdRestoreCRD()]) {
    await env.client.apply(CustomResourceDefinitions, crd, { fieldManager: 'operator-rss-bench', force: true });
    await eventually(`${crd.metadata.name} established`, async () => {
      const got = (await env.client.get(CustomResourceDefinitions, crd.metadata.name)) as { status?: { conditions?: { type: string; status: string }[] } };
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
    });
  }
}

/** One fresh operator process: ready, then `reached` (what it must have done first), then its idle RSS. */
async function measure(command: NodeCommand, env: TestEnv, leaseNamespace: string, reached: () => Promise<unknown>): Promise<number> {
  const vars = { ...command.env, KUBECONFIG: env.kubeconfig, POD_NAMESPACE: leaseNamespace, WEBHOOKS: 'false', LEADER_ELECTION: 'false' };
  const operator = await OperatorProcess.start(command.args, vars, await freePort());
  try {
    await reached();
    return await operator.idleRss();
  } finally {
    await operator.stop();
  }
}

/** The operator installed from its manifests with `image`: 1 replica, webhooks with their certificate, leader election. */
function installed(env: TestEnv, image: string): InstalledOperator {
  // Cluster-wide: the clusters go in a namespace of the run's own.
  const options = { image, replicas: 1, clusterWide: true };
  return {
    podMain: '/app/packages/etcd-operator/dist/operator/main.js', // in the container
    install: () => install(env.client, options),
    uninstall: () => uninstall(env.client, options),
  };
}

/** The figures with CLUSTERS EtcdClusters, out of cluster (`command`) and installed with `image` (when built). */
async function measureWithClusters(env: TestEnv, home: string, command: NodeCommand, image: string | undefined): Promise<void> {
  const ns = await env.namespace('operator-rss-clusters');
  progress(`creating ${CLUSTERS} EtcdClusters whose pods cannot be scheduled`);
  for (let i = 0; i < CLUSTERS; i++) {
    const spec = { replicas: 3, podTemplate: { spec: { nodeSelector: { 'quorum.dev/bench': 'nowhere' } } } };
    await env.client.create(EtcdClusters, { apiVersion: API_VERSION, kind: KIND, metadata: { name: `c${i}`, namespace: ns }, spec });
  }
  // Every cluster reconciled: its status written and its first member's pod made (Pending).
  const reconciled = (): Promise<unknown> =>
    eventually(
      `${CLUSTERS} clusters reconciled`,
      async () => {
        const clusters = (await env.client.list(EtcdClusters, { namespace: ns })).items;
        const pods = (await env.client.list(Pods, { namespace: ns, labelSelector: LABELS.instance })).items;
        return clusters.filter((c) => c.status?.observedGeneration === c.metadata.generation).length === CLUSTERS && pods.length >= CLUSTERS;
      },
      { timeoutMs: 300_000, intervalMs: 2000 },
    );
  if (outOfCluster) report('etcd_operator.rss_mib_50_clusters', await medianOfRuns(RUNS, `${CLUSTERS} clusters`, progress, () => measure(command, env, home, reconciled)), 'MiB');
  if (image) {
    report('etcd_operator.rss_mib_50_clusters_in_cluster', await medianOfRuns(RUNS, `${CLUSTERS} clusters, in cluster`, progress, () => installedPodRss(installed(env, image), reconciled)), 'MiB');
  }
}

progress(fromSources ? 'running src/operator/main.ts from the sources' : 'building the operator image and unpacking its /app');
const built = fromSources ? undefined : await buildOperatorImage();
const image = built ? await unpackImage(built) : undefined;
const command = image ?? sourcesCommand(MAIN);
const env = await TestEnv.start({ nodes: 1 });
try {
  await installCRDs(env);
  const home = await env.namespace('operator-rss');
  if (outOfCluster) report('etcd_operator.idle_rss_mib', await medianOfRuns(RUNS, 'idle', progress, () => measure(command, env, home, () => Promise.resolve())), 'MiB');
  if (built) {
    await env.kube.loadImage(built.archive);
    report('etcd_operator.idle_rss_mib_in_cluster', await medianOfRuns(RUNS, 'idle, in cluster', progress, () => installedPodRss(installed(env, built.name))), 'MiB');
  }

  if (withClusters) await measureWithClusters(env, home, command, built?.name);
} finally {
  await env.stop();
  if (image) await rm(image.root, { recursive: true, force: true });
}
