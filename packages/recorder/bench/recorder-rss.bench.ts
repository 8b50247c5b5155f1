// The change recorder's resident memory with nothing to record (issue 24), `npm run bench -- recorder-rss`: the
// recorder as its image runs it (the image built and its /app unpacked here: the compiled JavaScript, the
// production dependencies, the entrypoint's node flags and the image's environment; QUORUM_RSS_FROM=sources runs
// src/operator/main.ts instead), started out of cluster against localkube with a kubeconfig, the ChangeRecorder
// CRD installed and no ChangeRecorder. The history endpoint serves (on a free port, with the certificates it
// generates), as deployed; the users webhook is off (its default) and so is leader election (a Lease costs no
// memory, and a released one would make the next run wait).
//   recorder.idle_rss_mib   RSS from /proc/<pid>/status, 20 s after /readyz answered, median of 10 readings 1 s
//                           apart; the median of QUORUM_BENCH_RUNS runs (default 3), a fresh process each.
//   recorder.idle_rss_mib_in_cluster  the recorder as users run it: installed from its manifests (its image loaded
//                           into localkube; no ChangeRecorder, leader election, in-cluster configuration), its pod's
//                           process read the same way on the node; the median of QUORUM_BENCH_RUNS installs.
//                           QUORUM_RSS_OUT_OF_CLUSTER=false measures the installed pod only.
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { unpackImage } from '@quorum/kit/image';
import { CustomResourceDefinitions } from '@quorum/runtime';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { freePort, fromSources, installedPodRss, medianOfRuns, OperatorProcess, outOfCluster, sourcesCommand } from '../../runtime/bench/process-rss.ts';
import { changeRecorderCRD } from '../src/api/crd.ts';
import { buildRecorderImage } from '../src/deploy/image.ts';
import { installRecorder, uninstallRecorder } from '../src/deploy/install.ts';

const RUNS = Number(process.env['QUORUM_BENCH_RUNS'] ?? 3);
const MAIN = join(import.meta.dirname, '..', 'src', 'operator', 'main.ts');
const progress = (msg: string): void => void process.stderr.write(`[recorder rss] ${msg}\n`);

progress(fromSources ? 'running src/operator/main.ts from the sources' : 'building the recorder image and unpacking its /app');
const built = fromSources ? undefined : await buildRecorderImage();
const image = built ? await unpackImage(built) : undefined;
const command = image ?? sourcesCommand(MAIN);
const storageRoot = await mkdtemp(join(tmpdir(), 'recorder-rss-'));
const env = await TestEnv.start({ nodes: 1 });
try {
  const crd = changeRecorderCRD();
  await env.client.apply(CustomResourceDefinitions, crd, { fieldManager: 'recorder-rss-bench', force: true });
  await eventually('the ChangeRecorder CRD established', async () => {
    const got = (await env.client.get(CustomResourceDefinitions, crd.metadata.name)) as { status?: { conditions?: { type: string; status: string }[] } };
    return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True');
  });
  const home = await env.namespace('recorder-rss');
  const report = (bench: string, mib: number): void => void process.stdout.write(JSON.stringify({ bench, value: Math.round(mib * 1000) / 1000, unit: 'MiB' }) + '\n');
  if (outOfCluster) {
    const idle = await medianOfRuns(RUNS, 'idle', progress, async () => {
      const vars = { ...command.env, KUBECONFIG: env.kubeconfig, POD_NAMESPACE: home, STORAGE_ROOT: storageRoot, LEADER_ELECTION: 'false', HISTORY_PORT: String(await freePort()) };
      const recorder = await OperatorProcess.start(command.args, vars, await freePort());
      try {
        return await recorder.idleRss();
      } finally {
        await recorder.stop();
      }
    });
    report('recorder.idle_rss_mib', idle);
  }
  if (built) {
    await env.kube.loadImage(built.archive);
    const namespace = await env.namespace('recorder-rss-installed');
    const pod = {
      podMain: '/app/packages/recorder/dist/operator/main.js', // in the container
      install: async () => void (await installRecorder(env.client, { namespace, image: built.name, recorders: [], includeExisting: false })),
      uninstall: () => uninstallRecorder(env.client, { namespace }),
    };
    report('recorder.idle_rss_mib_in_cluster', await medianOfRuns(RUNS, 'idle, in cluster', progress, () => installedPodRss(pod)));
  }
} finally {
  await env.stop();
  await rm(storageRoot, { recursive: true, force: true });
  if (image) await rm(image.root, { recursive: true, force: true });
}
