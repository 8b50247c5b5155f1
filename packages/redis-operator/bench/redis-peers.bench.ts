// `npm run bench -- redis-peers`: Quorum's Redis operator against its peers on the same localkube, in the same
// scenarios, with "available" decided the same way for all of them (bench/peers/available.ts: 3 Redis and 3
// Sentinel pods Ready, the 3 Sentinels naming the same primary, that primary with 2 online replicas, the
// replicas' links up, and a SET on it answered OK).
//
// Peers (docs/peers.md, Redis):
//   quorum      Quorum's operator installed from its manifests (cluster-wide, webhooks off), a Redis of
//               {replicas: 2, tls: {disabled: true}} (the peers serve plaintext; auth is always on in Quorum).
//   ot          OT-CONTAINER-KIT/redis-operator built from its mirror (bench/peers/build.ts, ot.ts): a
//               RedisReplication of 3 and a RedisSentinel of 3.
//   spotahome   spotahome/redis-operator built from its mirror (spotahome.ts): a RedisFailover of 3 and 3.
// Every Redis and Sentinel runs the same Redis 7.0.15 from Debian 12 (bench/peers/images.ts), with a 1Gi claim
// per instance, RDB persistence, Sentinel down-after 5 s and failover-timeout 10 s.
//
// Scenarios, each run in a fresh namespace (deleted, and gone, before the next run starts):
//   create                apply → available;
//   primary_pod_deleted   the pod the Sentinels name as primary deleted (the clock starts once the API server
//                         has accepted the deletion) → available again, the deleted pod gone;
//   all_pods_deleted      a key written and acknowledged by both replicas (WAIT 2), then every Redis and
//                         Sentinel pod deleted at once → available again, every deleted pod gone, and the key
//                         read back from the primary (a lost key fails the run).
// Rounds: QUORUM_PEERS_RUNS (default 5), each running every peer in turn, so that the peers' runs are
// interleaved in time. QUORUM_PEERS=ot,spotahome picks peers. A peer whose source is not on this machine is
// skipped with a message (exit 1 only when no peer ran). Every step is bounded by QUORUM_PEERS_STEP_TIMEOUT_S
// (default 300): a step past it fails with the last reason the Redis was not available, the pods' states and
// recent events go to stderr, and the run's remaining scenarios are counted as failures. Figures:
// bench/peers/figures.ts (`peers.<peer>.redis_<scenario>_s`, `_ratio`, `_failures`).
import { randomUUID } from 'node:crypto';
import { CustomResourceDefinitions, Pods, Secrets, resource, type Client, type KubeObject } from '@quorum/runtime';
import { TestEnv } from '@quorum/localkube/testing';
import { progressTo, report, seconds } from '../../etcd-operator/bench/figures.ts';
import { install } from '../src/deploy/install.ts';
import { buildOperatorImage } from '../src/deploy/image.ts';
import { buildRedisImage } from '../src/image/redis.ts';
import { names, selectorLabels } from '../src/names.ts';
import { Redises } from '../src/resources.ts';
import { availability, command, observe, REDIS_PORT, type Expectation, type Observation, type Target, type Verdict } from './peers/available.ts';
import { peerBinary, PeerSourceMissing, type BuiltPeer, type OperatorPeer } from './peers/build.ts';
import { PEER_STORAGE_SIZE } from './peers/common.ts';
import { REDIS_BENCH, runRounds, selectedPeers, SCENARIOS, type Peer, type RunResult, type Scenario } from './peers/figures.ts';
import { buildOtOperatorImage, buildPeerRedisImage, buildSpotahomeOperatorImage } from './peers/images.ts';
import type { Manifest } from './peers/manifests.ts';
import { OT_MASTER_NAME, OT_NAME, OT_NAMESPACE, otOperatorObjects, otRedis, otRedisLabels, otSentinelLabels } from './peers/ot.ts';
import { SPOTAHOME_MASTER_NAME, SPOTAHOME_NAME, SPOTAHOME_NAMESPACE, spotahomeFailover, spotahomeLabels, spotahomeOperatorObjects } from './peers/spotahome.ts';
import { describeNamespace, dropNamespace as dropPeerNamespace, type PodDetail } from '../../etcd-operator/bench/peers/diagnostics.ts';

const progress = progressTo('redis peers bench');
const rounds = Number(process.env['QUORUM_PEERS_RUNS'] ?? 5);
const stepTimeoutMs = Number(process.env['QUORUM_PEERS_STEP_TIMEOUT_S'] ?? 300) * 1000;
// Every peer is polled at the same rate, so none gains from a finer clock.
const POLL_MS = 250;
const FIELD_MANAGER = 'quorum-redis-peers-bench';
const NAME = 'r';
const DATA_KEY = 'peers:data';

const selectorOf = (labels: Record<string, string>): string => Object.entries(labels).map(([k, v]) => `${k}=${v}`).join(',');

/** How one peer creates a Redis and where its pods and Sentinels are. */
interface Driver {
  create(client: Client, ns: string): Promise<void>;
  target(client: Client, ns: string): Promise<Target>;
}

const KINDS: Record<string, [plural: string, namespaced: boolean]> = {
  CustomResourceDefinition: ['customresourcedefinitions', false],
  Namespace: ['namespaces', false],
  ServiceAccount: ['serviceaccounts', true],
  ClusterRole: ['clusterroles', false],
  ClusterRoleBinding: ['clusterrolebindings', false],
  Deployment: ['deployments', true],
  RedisReplication: ['redisreplications', true],
  RedisSentinel: ['redissentinels', true],
  RedisFailover: ['redisfailovers', true],
};

function resourceOf(obj: Manifest): ReturnType<typeof resource> {
  const known = KINDS[obj.kind];
  if (!known) throw new Error(`redis peers: no resource for ${obj.apiVersion}/${obj.kind}`);
  return resource(obj.apiVersion, obj.kind, known[0], known[1]);
}

const applyAll = async (client: Client, objects: readonly Manifest[]): Promise<void> => {
  for (const obj of objects) await client.apply(resourceOf(obj), obj, { fieldManager: FIELD_MANAGER, force: true });
};

const drivers: Record<Peer, Driver> = {
  quorum: {
    create: async (client, ns) => void (await client.create(Redises, { apiVersion: 'redis.quorum.dev/v1alpha1', kind: 'Redis', metadata: { name: NAME, namespace: ns }, spec: { replicas: 2, tls: { disabled: true }, storage: { size: PEER_STORAGE_SIZE } } })),
    target: async (client, ns) => {
      const secret = await client.find(Secrets, { namespace: ns, name: names.generatedSecret(NAME) });
      const password = secret?.data?.['password'] ? Buffer.from(secret.data['password'], 'base64').toString('utf8') : undefined;
      return { namespace: ns, redisSelector: selectorOf(selectorLabels(NAME, 'redis')), sentinelSelector: selectorOf(selectorLabels(NAME, 'sentinel')), masterName: NAME, ...(password ? { password } : {}) };
    },
  },
  ot: {
    create: (client, ns) => applyAll(client, otRedis(NAME, ns)),
    target: (_client, ns) => Promise.resolve({ namespace: ns, redisSelector: selectorOf(otRedisLabels(NAME)), sentinelSelector: selectorOf(otSentinelLabels(NAME)), masterName: OT_MASTER_NAME }),
  },
  spotahome: {
    create: (client, ns) => applyAll(client, [spotahomeFailover(NAME, ns)]),
    target: (_client, ns) => Promise.resolve({ namespace: ns, redisSelector: selectorOf(spotahomeLabels(NAME, 'redis')), sentinelSelector: selectorOf(spotahomeLabels(NAME, 'sentinel')), masterName: SPOTAHOME_MASTER_NAME }),
  },
};

class StepFailed extends Error {}

/** Polls until the Redis is available as `want` says, within the step's bound; returns the last observation. */
async function waitAvailable(client: Client, peer: Peer, ns: string, want: Omit<Expectation, 'instances' | 'sentinels'> = {}): Promise<{ obs: Observation; primary: string; target: Target }> {
  const expectation: Expectation = { instances: 3, sentinels: 3, ...want };
  const deadline = performance.now() + stepTimeoutMs;
  let last: Verdict = { available: false, reason: 'not observed yet' };
  for (;;) {
    try {
      const target = await drivers[peer].target(client, ns);
      const obs = await observe(client, target, want.data);
      last = availability(obs, expectation);
      if (last.available) return { obs, primary: last.primary, target };
    } catch (err) {
      last = { available: false, reason: `observing failed: ${(err as Error).message}` };
    }
    if (performance.now() > deadline) throw new StepFailed(`not available after ${stepTimeoutMs / 1000} s: ${last.reason}`);
    await new Promise((r) => setTimeout(r, POLL_MS));
  }
}



/** The last lines each pod of `namespace` logged (the operator's, when it never became Ready). */
async function operatorLogs(client: Client, namespace: string): Promise<void> {
  for (const p of (await client.list(Pods, { namespace }).catch(() => ({ items: [] as KubeObject[] }))).items) {
    const log = await client.request<unknown>('GET', `/api/v1/namespaces/${namespace}/pods/${p.metadata.name}/log`, undefined, { query: { tailLines: '40' } }).catch((err: Error) => err.message);
    progress(`  log of ${p.metadata.name}:\n${typeof log === 'string' ? log : JSON.stringify(log)}`);
  }
}


/** A key written on the primary and acknowledged by both replicas, so that any of them may come back with it. */
async function writeAcknowledged(ip: string, password: string | undefined, value: string): Promise<void> {
  await command(ip, REDIS_PORT, password, async (c) => {
    if ((await c.set(DATA_KEY, value)) !== 'OK') throw new Error(`SET ${DATA_KEY} refused`);
    const acked = Number(await c.call('WAIT', '2', '5000'));
    if (acked < 2) throw new Error(`WAIT 2: only ${acked} replicas acknowledged ${DATA_KEY}`);
  });
}

/** One run of every scenario for `peer`, in a fresh namespace. */
async function runPeer(env: TestEnv, peer: Peer, round: number): Promise<RunResult[]> {
  const client = env.client;
  const ns = await env.namespace(`rpeers-${peer}`);
  const results: RunResult[] = [];
  const record = (scenario: Scenario, t0: number): void => {
    const s = seconds(t0);
    results.push({ peer, round, scenario, seconds: s });
    progress(`  ${peer} ${scenario}: ${s.toFixed(1)} s`);
  };
  let scenario: Scenario = 'create';
  try {
    let t0 = performance.now();
    await drivers[peer].create(client, ns);
    let state = await waitAvailable(client, peer, ns);
    record(scenario, t0);

    scenario = 'primary_pod_deleted';
    const primary = state.obs.redis.find((p) => p.name === state.primary)!;
    progress(`  ${peer}: deleting the primary ${primary.name}`);
    await client.delete(Pods, { namespace: ns, name: primary.name });
    t0 = performance.now();
    state = await waitAvailable(client, peer, ns, { absentUids: [primary.uid] });
    record(scenario, t0);

    scenario = 'all_pods_deleted';
    const value = randomUUID();
    await writeAcknowledged(state.obs.redis.find((p) => p.name === state.primary)!.ip!, state.target.password, value);
    const victims = [...state.obs.redis, ...state.obs.sentinels];
    progress(`  ${peer}: deleting ${victims.map((p) => p.name).join(', ')}`);
    await Promise.all(victims.map((p) => client.delete(Pods, { namespace: ns, name: p.name })));
    t0 = performance.now();
    await waitAvailable(client, peer, ns, { absentUids: victims.map((p) => p.uid), data: { key: DATA_KEY, value } });
    record(scenario, t0);
  } catch (err) {
    const reason = (err as Error).message;
    progress(`  ${peer} ${scenario} FAILED (round ${round + 1}): ${reason}`);
    await describeNamespace(client, ns, progress);
    for (const s of SCENARIOS.slice(SCENARIOS.indexOf(scenario))) results.push({ peer, round, scenario: s, failure: s === scenario ? reason : `skipped: ${scenario} failed` });
  } finally {
    await dropPeerNamespace(client, ns, stepTimeoutMs, progress);
  }
  return results;
}

async function until(what: string, check: () => Promise<boolean>): Promise<void> {
  const deadline = performance.now() + stepTimeoutMs;
  for (;;) {
    if (await check().catch(() => false)) return;
    if (performance.now() > deadline) throw new Error(`${what}: not within ${stepTimeoutMs / 1000} s`);
    await new Promise((r) => setTimeout(r, 1000));
  }
}

/** A peer operator's objects applied, its CRDs established, its pod Ready. */
async function installPeer(client: Client, name: string, namespace: string, objects: readonly Manifest[]): Promise<void> {
  await applyAll(client, objects);
  for (const crd of objects.filter((o) => o.kind === 'CustomResourceDefinition')) {
    await until(`the CRD ${crd.metadata.name} established`, async () => {
      const got = (await client.get(CustomResourceDefinitions, crd.metadata.name)) as KubeObject & { status?: { conditions?: { type: string; status: string }[] } };
      return got.status?.conditions?.some((c) => c.type === 'Established' && c.status === 'True') ?? false;
    });
  }
  await until(`${name} Ready`, async () => {
    const pods = (await client.list(Pods, { namespace, labelSelector: `app.kubernetes.io/name=${name}` })).items as PodDetail[];
    return pods.some((p) => !p.metadata.deletionTimestamp && (p.status?.containerStatuses?.length ?? 0) > 0 && (p.status?.containerStatuses ?? []).every((c) => c.ready));
  });
}

/** The peer operators' binaries, built unless cached; a peer whose source is missing is left out, with why. */
async function buildPeers(wanted: readonly Peer[]): Promise<Map<OperatorPeer, BuiltPeer>> {
  const built = new Map<OperatorPeer, BuiltPeer>();
  for (const peer of wanted.filter((p): p is OperatorPeer => p !== 'quorum')) {
    try {
      built.set(peer, await peerBinary(peer, progress));
      progress(`${peer}: binary at ${built.get(peer)!.binary}`);
    } catch (err) {
      if (!(err instanceof PeerSourceMissing)) throw err;
      progress(`SKIPPING ${peer}: its source is not on this machine: ${err.message}`);
    }
  }
  return built;
}

const installers: Record<OperatorPeer, { name: string; namespace: string; image: (b: BuiltPeer) => ReturnType<typeof buildOtOperatorImage>; objects: (b: BuiltPeer) => Promise<Manifest[]> }> = {
  ot: { name: OT_NAME, namespace: OT_NAMESPACE, image: buildOtOperatorImage, objects: (b) => otOperatorObjects(b.source, b.commit) },
  spotahome: { name: SPOTAHOME_NAME, namespace: SPOTAHOME_NAMESPACE, image: buildSpotahomeOperatorImage, objects: (b) => spotahomeOperatorObjects(b.source, b.commit) },
};

async function uninstallPeers(client: Client, built: Map<OperatorPeer, BuiltPeer>): Promise<void> {
  for (const [peer, b] of built) {
    // The CRDs go with any custom resource left; the namespace takes the operator with it.
    for (const obj of (await installers[peer].objects(b)).reverse()) {
      const ref = obj.metadata.namespace ? { namespace: obj.metadata.namespace, name: obj.metadata.name } : obj.metadata.name;
      await client.delete(resourceOf(obj), ref).catch(() => undefined);
    }
  }
}

const wanted = selectedPeers(process.env['QUORUM_PEERS']);
const built = await buildPeers(wanted);
const peers = wanted.filter((p) => p === 'quorum' || built.has(p));
let env: TestEnv | undefined;
try {
  if (!peers.some((p) => p !== 'quorum')) throw new Error(`no peer to compare with (asked for ${wanted.join(', ')})`);
  progress(`peers ${peers.join(', ')}; ${rounds} round(s); each step bounded by ${stepTimeoutMs / 1000} s`);
  progress('images: build (the Redis of every peer, the operators)');
  const images = [await buildPeerRedisImage(), ...(await Promise.all([...built].map(([peer, b]) => installers[peer].image(b))))];
  const quorumImages = peers.includes('quorum') ? await Promise.all([buildRedisImage(), buildOperatorImage()]) : [];
  // Three nodes, as `localkube up` starts by default: pods spread as they would in production.
  env = await TestEnv.start({ nodes: 3 });
  for (const image of [...images, ...quorumImages]) await env.kube.loadImage(image.archive);
  if (peers.includes('quorum')) {
    progress('quorum: install (cluster-wide, webhooks off)');
    await install(env.client, { image: quorumImages[1].name, clusterWide: true, webhooks: false });
  }
  for (const [peer, b] of built) {
    progress(`${peer}: apply its CRDs, RBAC and Deployment`);
    try {
      await installPeer(env.client, installers[peer].name, installers[peer].namespace, await installers[peer].objects(b));
    } catch (err) {
      // One peer that cannot be installed leaves the others to compare with; why goes to stderr.
      progress(`SKIPPING ${peer}: ${(err as Error).message}`);
      await describeNamespace(env.client, installers[peer].namespace, progress);
      await operatorLogs(env.client, installers[peer].namespace);
      peers.splice(peers.indexOf(peer), 1);
    }
  }
  if (!peers.some((p) => p !== 'quorum')) throw new Error('no peer operator could be installed');
  const cluster = env;
  await runRounds({ bench: REDIS_BENCH, peers, rounds, run: (peer, round) => runPeer(cluster, peer, round), report: (f) => report(f.bench, f.value, f.unit), progress });
} catch (err) {
  progress(`failed: ${(err as Error).message}`);
  process.exitCode = 1;
} finally {
  if (env) await uninstallPeers(env.client, built);
  await env?.stop();
}
