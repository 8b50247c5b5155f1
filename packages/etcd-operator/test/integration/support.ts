// Shared by the operator's end-to-end tests: the operator built, loaded and installed from its own
// manifests into the suite's localkube, and helpers to wait for an EtcdCluster's state.
import assert from 'node:assert/strict';
import { join } from 'node:path';
import { Client, Namespaces, Pods, Secrets, Services } from '@quorum/runtime';
import type { V1Pod } from '@kubernetes/client-node';
import { eventually, TestEnv } from '@quorum/localkube/testing';
import { cacheRoot, run } from '@quorum/images';
import { PROMETHEUS_NAMESPACE, versions } from '@quorum/localkube';
import { buildOperatorImage } from '../../src/deploy/image.ts';
import { install } from '../../src/deploy/install.ts';
import { PEER_WAIT_IMAGE } from '../../src/deploy/manifests.ts';
import { buildPeerWaitImage } from '../../src/deploy/peer-wait-image.ts';
import { EtcdClusters } from '../../src/resources.ts';
import type { EtcdCluster } from '../../src/api/etcdcluster.ts';
import type { DataChecker } from '../../src/testing/data-checker.ts';
import { EtcdClient, type EtcdTls } from '../../src/etcd/client.ts';

export { eventually };

/** The image the suite's operator runs (a content-tagged local build). */
export let operatorImage = '';
/** The peer-wait init container image the suite's operator puts in member pods (content-tagged too). */
export let peerWaitImage = '';

/** What install() needs to reinstall the suite's operator as setUpOperator did (e.g. after an uninstall). */
export interface OperatorTestOptions {
  crashLoopGraceSeconds?: number;
  /** A step's bound (STEP_DEADLINE_SECONDS); the soak sets 60 so a step stalled for a minute counts. */
  stepDeadlineSeconds?: number;
}

export function installOptions(options: OperatorTestOptions = {}): { image: string; peerWaitImage: string; crashLoopGraceSeconds: number; stepDeadlineSeconds?: number; caRotationOverlapSeconds: number; clusterWide: true; metricsNamespaces: string[] } {
  // No CA rotation overlap: the tests move their client to the new certificate themselves (tls.test.ts).
  // Cluster-wide: every file makes namespaces of its own (TestEnv.namespace()) as it goes.
  // The prometheus addon's namespace scrapes the members through their NetworkPolicy (monitoring.test.ts).
  return { image: operatorImage, peerWaitImage, crashLoopGraceSeconds: options.crashLoopGraceSeconds ?? 15, ...(options.stepDeadlineSeconds ? { stepDeadlineSeconds: options.stepDeadlineSeconds } : {}), caRotationOverlapSeconds: 0, clusterWide: true, metricsNamespaces: [PROMETHEUS_NAMESPACE] };
}

/**
 * The suite's harness (scripts/test.ts) builds and loads the images and installs the operator once, with
 * installOptions()'s defaults, and names the images here; a file run on its own does all of it itself.
 */
export const SUITE_OPERATOR_ENV = 'QUORUM_TEST_OPERATOR';

interface SuiteOperator {
  image: string;
  peerWaitImage: string;
}

function suiteOperator(): SuiteOperator | undefined {
  const given = process.env[SUITE_OPERATOR_ENV];
  return given ? (JSON.parse(given) as SuiteOperator) : undefined;
}

/** Whether `options` install the operator as the harness did (then a file has nothing to install). */
function suiteSettings(options: OperatorTestOptions): boolean {
  return JSON.stringify(installOptions(options)) === JSON.stringify(installOptions());
}

/**
 * The operator as a file needs it. With the suite's settings under the harness, the one it installed; other
 * settings reinstall it, which only a file that declares `// @exclusive operator` may do (the harness puts
 * the suite's back once that file ends).
 */
export async function setUpOperator(options: OperatorTestOptions = {}): Promise<TestEnv> {
  const env = await TestEnv.start();
  await loadOperatorImages(env);
  if (!suiteOperator() || !suiteSettings(options)) await install(env.client, installOptions(options));
  return env;
}

/** Installs the operator with the suite's settings into the suite's cluster: the harness's set-up and its restore after an `operator` holder. */
export async function installSuiteOperator(env: TestEnv): Promise<SuiteOperator> {
  await loadOperatorImages(env);
  await install(env.client, installOptions());
  return { image: operatorImage, peerWaitImage };
}

/** Puts the suite's operator back after a file that installed it otherwise (images loaded by installSuiteOperator). */
export async function reinstallSuiteOperator(env: TestEnv): Promise<void> {
  if (!operatorImage) throw new Error('reinstallSuiteOperator: installSuiteOperator has not run in this process');
  await install(env.client, installOptions());
}

/**
 * Builds the operator and peer-wait images and loads them into every node; sets operatorImage and
 * peerWaitImage. Under the harness they are built and loaded already: only the names are taken.
 */
export async function loadOperatorImages(env: TestEnv): Promise<void> {
  const loaded = suiteOperator();
  if (loaded) {
    operatorImage = loaded.image;
    peerWaitImage = loaded.peerWaitImage;
    return;
  }
  const image = await buildOperatorImage();
  await env.kube.loadImage(image.archive);
  const peerWait = await buildPeerWaitImage();
  await env.kube.loadImage(peerWait.archive);
  // The same binary under the default name too: operators that tests run in-process take their settings
  // from configFromEnv({}), whose default is PEER_WAIT_IMAGE, and localkube has no registry to pull it from.
  await env.kube.loadImage((await buildPeerWaitImage(PEER_WAIT_IMAGE)).archive);
  operatorImage = image.name;
  peerWaitImage = peerWait.name;
}

export interface ClusterState {
  cluster: EtcdCluster;
  available: boolean;
  members: NonNullable<NonNullable<EtcdCluster['status']>['members']>;
}

export async function getCluster(client: Client, namespace: string, name: string): Promise<ClusterState> {
  const cluster = await client.get(EtcdClusters, { namespace, name });
  const available = cluster.status?.conditions?.some((c) => c.type === 'Available' && c.status === 'True') ?? false;
  return { cluster, available, members: cluster.status?.members ?? [] };
}

/** Waits until the cluster is Available with exactly `replicas` voting members, all ready. */
export async function waitAvailable(client: Client, namespace: string, name: string, replicas: number, timeoutMs = 180_000): Promise<ClusterState> {
  return eventually(`${namespace}/${name} Available with ${replicas} members`, async () => {
    const s = await getCluster(client, namespace, name);
    const voters = s.members.filter((m) => !m.learner && m.ready);
    return s.available && voters.length === replicas && s.members.length === replicas && s.cluster.status?.observedGeneration === s.cluster.metadata.generation ? s : undefined;
  }, { timeoutMs, intervalMs: 500 });
}

/** The member pods of a cluster, as the API server lists them (by the instance label every member carries). */
export async function memberPods(client: Client, namespace: string, name: string): Promise<V1Pod[]> {
  return (await client.list(Pods, { namespace, labelSelector: `app.kubernetes.io/instance=${name}` })).items as V1Pod[];
}

export async function applyCluster(client: Client, namespace: string, name: string, spec: Record<string, unknown>): Promise<EtcdCluster> {
  return client.apply(EtcdClusters, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', metadata: { name, namespace }, spec }, { fieldManager: 'e2e-test', force: true });
}

/**
 * The client Service's URL, once it answers. Members become ready before kube-proxy routes the Service to
 * them (later on a busy machine): a test that wrote at once was refused (ECONNREFUSED) by a cluster that was
 * Available. A Service that does not answer within 60 s is returned anyway, for the caller's own calls to
 * fail with their own error (some tests want a cluster that does not answer).
 */
export async function clientServiceEndpoint(client: Client, namespace: string, name: string): Promise<string> {
  const { Services } = await import('@quorum/runtime');
  const svc = (await client.get(Services, { namespace, name: `${name}-client` })) as unknown as { spec: { clusterIP: string } };
  const endpoint = `http://${svc.spec.clusterIP}:2379`;
  const answers = async (): Promise<boolean> => {
    const response = await fetch(`${endpoint}/version`, { signal: AbortSignal.timeout(3000) });
    await response.body?.cancel();
    return true;
  };
  await eventually(`the Service ${namespace}/${name}-client to answer`, answers, { timeoutMs: 60_000, intervalMs: 500 }).catch(() => undefined);
  return endpoint;
}

/**
 * What a test writes into a cluster's spec when it talks to etcd over plain http: new clusters get TLS by
 * default (tls/defaults.ts), so a test that relies on plaintext says so.
 */
export const PLAINTEXT = { tls: { disabled: true } } as const;

/** A client of a cluster's client Service: plain http, or https with the identity in status.tls.clientSecret. */
export interface ClusterEndpoint {
  endpoint: string;
  tls?: EtcdTls;
}

/**
 * The client Service's URL and, for a cluster with client TLS, the client identity in its Secret, with the
 * Service's name to check the members' certificates by (the IP is in none). Waits for status.tls when the
 * cluster's status says it serves https; once it answers a status request, or after 60 s (as clientServiceEndpoint).
 */
export async function clusterEndpoint(client: Client, namespace: string, name: string): Promise<ClusterEndpoint> {
  const { cluster } = await getCluster(client, namespace, name);
  const secret = cluster.status?.clientEndpoint?.startsWith('https:') ? cluster.status.tls?.clientSecret : undefined;
  if (!secret) return { endpoint: await clientServiceEndpoint(client, namespace, name) };
  const data = (await client.get(Secrets, { namespace, name: secret })).data ?? {};
  const pem = (key: string): string => Buffer.from(data[key] ?? '', 'base64').toString('utf8');
  const tls: EtcdTls = { ca: pem('ca.crt'), cert: pem('tls.crt'), key: pem('tls.key'), servername: `${name}-client.${namespace}.svc` };
  const svc = (await client.get(Services, { namespace, name: `${name}-client` })) as unknown as { spec: { clusterIP: string } };
  const endpoint = `https://${svc.spec.clusterIP}:2379`;
  const etcd = new EtcdClient({ endpoint, tls, timeoutMs: 3000 });
  try {
    await eventually(`the Service ${namespace}/${name}-client to answer over TLS`, async () => !!(await etcd.status()), { timeoutMs: 60_000, intervalMs: 500 }).catch(() => undefined);
  } finally {
    etcd.close();
  }
  return { endpoint, tls };
}

/**
 * etcdctl (the pinned one) against an endpoint reachable from the host, retried for a while: right after
 * members become ready, kube-proxy may not yet route the client Service to them.
 */
export async function etcdctl(endpoint: string, ...args: string[]): Promise<string> {
  // localkube's build cache: `<QUORUM_CACHE>/bin/<project>-<version>/`.
  const bin = join(cacheRoot, 'bin', `etcd-${versions.CONTROL_PLANE_ETCD}`, 'etcdctl');
  return eventually(`etcdctl ${args.join(' ')}`, async () => (await run(bin, [`--endpoints=${endpoint}`, '--dial-timeout=3s', '--command-timeout=5s', ...args])).stdout, { timeoutMs: 30_000, intervalMs: 1000 });
}

export async function deleteNamespace(client: Client, ns: string): Promise<void> {
  await client.delete(Namespaces, ns).catch(() => undefined);
}

/**
 * Stops the data checker and asserts that it wrote throughout (more than `minAcknowledged`, 100 unless told)
 * and that no acknowledged write was lost or changed.
 */
export async function verifyNoWriteLost(checker: DataChecker, label: string, { minAcknowledged = 100 }: { minAcknowledged?: number } = {}): Promise<void> {
  await checker.stop();
  const report = await checker.verify({ timeoutMs: 60_000 });
  process.stderr.write(`data checker (${label}): ${report.acknowledged} acknowledged, ${report.unacknowledged} failed or unacknowledged requests, lost ${report.lost.length}, corrupted ${report.corrupted.length}\n`);
  assert.ok(report.acknowledged > minAcknowledged, `the checker wrote throughout (${report.acknowledged} acknowledged, more than ${minAcknowledged} expected)`);
  assert.deepEqual(report.lost, [], 'no acknowledged write lost');
  assert.deepEqual(report.corrupted, []);
}
