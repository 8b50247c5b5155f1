// `npm run bench -- peers`: Quorum against its peers on the same localkube, in the same scenarios, with
// "Available" decided the same way for all of them (bench/peers/available.ts: the member pods Ready, a
// linearizable member list of exactly N started voters named after those pods, every member's /health true).
//
// Peers (docs/peers.md):
//   quorum        Quorum's operator and the EtcdCluster etcd.bench.ts uses ({replicas: 3}, all defaults).
//   coreos        coreos/etcd-operator v0.9.4, unmodified, built from tools/coreos-etcd-operator; what it
//                 needs on Kubernetes 1.34 is in bench/peers/coreos.ts and images.ts.
//   statefulset   a plain StatefulSet of etcd as the Bitnami chart runs it (bench/peers/statefulset.ts).
// Every member runs the same etcd binary (Quorum's default version) with Quorum's default requests, volume
// size, StorageClass and preferred anti-affinity.
//
// Scenarios, each run in a fresh namespace (deleted, and gone, before the next run starts):
//   create        apply → Available with 3 members;
//   pod_deleted   a follower's pod deleted (the clock starts once the API server has accepted the deletion;
//                 the deleted pod must be gone) → Available with 3 again;
//   scale_3_5     the member count patched to 5 → Available with 5.
// Rounds: QUORUM_PEERS_RUNS (default 5), each running every peer in turn (quorum, coreos, statefulset), so
// that the peers' runs are interleaved in time. QUORUM_PEERS=coreos,statefulset picks peers. Every step is
// bounded by QUORUM_PEERS_STEP_TIMEOUT_S (default 600): a step past it fails with the last reason the cluster
// was not Available, the pods' states and recent events go to stderr, and the run's remaining scenarios are
// counted as failures. Figures: bench/peers/figures.ts (`peers.<peer>.<scenario>_s`, `_ratio`, `_failures`).
import { CustomResourceDefinitions, Pods, StatefulSets, resource, type Client, type KubeObject } from '@quorum/runtime';
import { TestEnv } from '@quorum/localkube/testing';
import { clusterSelector } from '../src/names.ts';
import { install } from '../src/deploy/install.ts';
import { EtcdClusters } from '../src/resources.ts';
import { applyCluster, installOptions, loadOperatorImages, PLAINTEXT } from '../test/integration/support.ts';
import { progressTo, report, seconds } from './figures.ts';
import { availability, followerPod, observe, type Verdict } from './peers/available.ts';
import { selectorOf } from './peers/common.ts';
import { COREOS_GROUP, COREOS_NAME, COREOS_NAMESPACE, coreosCluster, coreosClusterLabels, coreosOperatorObjects, coreosServices } from './peers/coreos.ts';
import { ETCD_BENCH, runRounds, selectedPeers, SCENARIOS, type Peer, type RunResult, type Scenario } from './peers/figures.ts';
import { buildCoreosOperatorImage, buildEtcdShellImage } from './peers/images.ts';
import { statefulSetLabels, statefulSetObjects } from './peers/statefulset.ts';
import { describeNamespace, dropNamespace as dropPeerNamespace, type PodDetail } from './peers/diagnostics.ts';

const progress = progressTo('peers bench');
const rounds = Number(process.env['QUORUM_PEERS_RUNS'] ?? 5);
const peers = selectedPeers(process.env['QUORUM_PEERS']);
const stepTimeoutMs = Number(process.env['QUORUM_PEERS_STEP_TIMEOUT_S'] ?? 600) * 1000;
// Every peer is polled at the same rate, so none gains from a finer clock.
const POLL_MS = 250;
const FIELD_MANAGER = 'quorum-peers-bench';
const CoreosClusters = resource(`${COREOS_GROUP}/v1beta2`, 'EtcdCluster', 'etcdclusters', true);

/** How one peer creates and scales a cluster, and which pods are its members. */
interface Driver {
  selector: string;
  create(client: Client, ns: string, members: number): Promise<void>;
  scale(client: Client, ns: string, members: number): Promise<void>;
}

const drivers: Record<Peer, Driver> = {
  quorum: {
    selector: clusterSelector('q'),
    // Plaintext, as the peers' clusters are.
    create: async (client, ns, members) => void (await applyCluster(client, ns, 'q', { replicas: members, ...PLAINTEXT })),
    scale: async (client, ns, members) => void (await client.mergePatch(EtcdClusters, { namespace: ns, name: 'q' }, { spec: { replicas: members } })),
  },
  coreos: {
    selector: selectorOf(coreosClusterLabels('c')),
    create: async (client, ns, members) => {
      for (const svc of coreosServices('c', ns)) await client.create(resource('v1', 'Service', 'services', true), svc);
      await client.create(CoreosClusters, coreosCluster('c', ns, members));
    },
    scale: async (client, ns, members) => void (await client.mergePatch(CoreosClusters, { namespace: ns, name: 'c' }, { spec: { size: members } })),
  },
  statefulset: {
    selector: selectorOf(statefulSetLabels('s')),
    create: async (client, ns, members) => {
      for (const obj of statefulSetObjects('s', ns, members)) {
        await client.create(obj.kind === 'Service' ? resource('v1', 'Service', 'services', true) : StatefulSets, obj);
      }
    },
    scale: async (client, ns, members) => void (await client.mergePatch(StatefulSets, { namespace: ns, name: 's' }, { spec: { replicas: members } })),
  },
};

class StepFailed extends Error {}

/** Polls until `members` are Available (absentUid: a deleted pod that must be gone first), within the step's bound. */
async function waitAvailable(client: Client, ns: string, selector: string, members: number, absentUid?: string): Promise<void> {
  const deadline = performance.now() + stepTimeoutMs;
  let last: Verdict = { available: false, reason: 'not observed yet' };
  for (;;) {
    try {
      last = availability(await observe(client, ns, selector), members, absentUid);
    } catch (err) {
      last = { available: false, reason: `observing failed: ${(err as Error).message}` };
    }
    if (last.available) return;
    if (performance.now() > deadline) throw new StepFailed(`not Available with ${members} members after ${stepTimeoutMs / 1000} s: ${last.reason}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}




/** One run of every scenario for `peer`, in a fresh namespace. */
async function runPeer(env: TestEnv, peer: Peer, round: number): Promise<RunResult[]> {
  const client = env.client;
  const driver = drivers[peer];
  const ns = await env.namespace(`peers-${peer}`);
  const results: RunResult[] = [];
  const record = (scenario: Scenario, t0: number): void => {
    const s = seconds(t0);
    results.push({ peer, round, scenario, seconds: s });
    progress(`  ${peer} ${scenario}: ${s.toFixed(1)} s`);
  };
  let scenario: Scenario = 'create';
  try {
    let t0 = performance.now();
    await driver.create(client, ns, 3);
    await waitAvailable(client, ns, driver.selector, 3);
    record(scenario, t0);

    scenario = 'pod_deleted';
    const victim = await followerPod(client, ns, driver.selector);
    progress(`  ${peer}: deleting follower ${victim.name}`);
    await client.delete(Pods, { namespace: ns, name: victim.name });
    t0 = performance.now();
    await waitAvailable(client, ns, driver.selector, 3, victim.uid);
    record(scenario, t0);

    scenario = 'scale_3_5';
    t0 = performance.now();
    await driver.scale(client, ns, 5);
    await waitAvailable(client, ns, driver.selector, 5);
    record(scenario, t0);
  } catch (err) {
    const reason = (err as Error).message;
    progress(`  ${peer} ${scenario} FAILED (round ${round + 1}): ${reason}`);
    await describeNamespace(client, ns, progress);
    const rest = SCENARIOS.slice(SCENARIOS.indexOf(scenario));
    for (const s of rest) results.push({ peer, round, scenario: s, failure: s === scenario ? reason : `skipped: ${scenario} failed` });
  } finally {
    await dropPeerNamespace(client, ns, stepTimeoutMs, progress);
  }
  return results;
}

/** coreos/etcd-operator: its images loaded, its v1 CRD established, its operator Ready (leading, controller started). */
async function installCoreos(env: TestEnv): Promise<void> {
  const client = env.client;
  progress('coreos/etcd-operator: build and load its image; apply its CRD, RBAC and Deployment');
  await env.kube.loadImage((await buildCoreosOperatorImage()).archive);
  for (const obj of coreosOperatorObjects()) await client.apply(resourceOf(obj), obj, { fieldManager: FIELD_MANAGER, force: true });
  await until('the coreos CRD established', async () => {
    const crd = (await client.get(CustomResourceDefinitions, `etcdclusters.${COREOS_GROUP}`)) as KubeObject & { status?: { conditions?: { type: string; status: string }[] } };
    return crd.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
  });
  await until('the coreos operator Ready', async () => {
    const pods = (await client.list(Pods, { namespace: COREOS_NAMESPACE, labelSelector: `app.kubernetes.io/name=${COREOS_NAME}` })).items as PodDetail[];
    return pods.some((p) => !p.metadata.deletionTimestamp && (p.status?.containerStatuses ?? []).every((c) => c.ready) && (p.status?.containerStatuses?.length ?? 0) > 0);
  });
}

async function uninstallCoreos(client: Client): Promise<void> {
  // The CRD last but one: deleting it deletes any EtcdCluster left; the namespace takes the operator with it.
  for (const obj of coreosOperatorObjects().reverse()) await client.delete(resourceOf(obj), obj.metadata.namespace ? { namespace: obj.metadata.namespace, name: obj.metadata.name! } : obj.metadata.name!).catch(() => undefined);
}

function resourceOf(obj: KubeObject): ReturnType<typeof resource> {
  const kinds: Record<string, [string, boolean]> = {
    CustomResourceDefinition: ['customresourcedefinitions', false],
    Namespace: ['namespaces', false],
    ServiceAccount: ['serviceaccounts', true],
    ClusterRole: ['clusterroles', false],
    ClusterRoleBinding: ['clusterrolebindings', false],
    Deployment: ['deployments', true],
  };
  const known = kinds[obj.kind ?? ''];
  if (!known || !obj.apiVersion) throw new Error(`peers: no resource for ${obj.apiVersion}/${obj.kind}`);
  return resource(obj.apiVersion, obj.kind!, known[0], known[1]);
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + stepTimeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${stepTimeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

let env: TestEnv | undefined;
try {
  progress(`peers ${peers.join(', ')}; ${rounds} round(s); each step bounded by ${stepTimeoutMs / 1000} s`);
  // Three nodes, as `localkube up` starts by default: members spread as they would in production.
  env = await TestEnv.start({ nodes: 3 });
  if (peers.includes('quorum')) {
    progress('quorum: build, load, install');
    await loadOperatorImages(env);
    await install(env.client, installOptions());
  }
  if (peers.includes('coreos') || peers.includes('statefulset')) {
    progress('etcd-shell image (etcd, etcdctl, dash, sleep, nslookup): build and load');
    await env.kube.loadImage((await buildEtcdShellImage()).archive);
  }
  if (peers.includes('coreos')) await installCoreos(env);
  const cluster = env;
  await runRounds({ bench: ETCD_BENCH, peers, rounds, run: (peer, round) => runPeer(cluster, peer, round), report: (f) => report(f.bench, f.value, f.unit), progress });
} finally {
  if (env && peers.includes('coreos')) await uninstallCoreos(env.client);
  await env?.stop();
}
