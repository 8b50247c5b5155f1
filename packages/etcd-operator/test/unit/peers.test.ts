// The peers benchmark's pure parts (bench/peers/): coreos/etcd-operator's manifests as Kubernetes 1.34 needs
// them, the Bitnami-like StatefulSet and its start script's decisions (run by dash with a fake etcd and
// etcdctl), the one definition of "Available" every peer is measured by, and the figures.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { chmod, mkdtemp, mkdir, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { promisify } from 'node:util';
import { DEFAULT_ETCD_RESOURCES } from '../../src/cluster/resources.ts';
import type { Member } from '../../src/etcd/index.ts';
import { availability, podView, type Observation } from '../../bench/peers/available.ts';
import { COREOS_SCOPE_ANNOTATION, coreosCluster, coreosCRD, coreosOperatorObjects, coreosServices } from '../../bench/peers/coreos.ts';
import { peerFigures, selectedPeers, type RunResult } from '../../bench/peers/figures.ts';
import { PEER_ETCD_IMAGE } from '../../bench/peers/images.ts';
import { headlessServiceName, START_SCRIPT, statefulSetObjects } from '../../bench/peers/statefulset.ts';

const run = promisify(execFile);
type Json = Record<string, unknown>;
const at = (o: unknown, ...path: (string | number)[]): unknown => path.reduce<unknown>((v, k) => (v as Record<string | number, unknown> | undefined)?.[k], o);

test('coreos: a v1 CRD serving v1beta2 with every field preserved and no status subresource', () => {
  const crd = coreosCRD();
  assert.equal(crd.apiVersion, 'apiextensions.k8s.io/v1');
  assert.equal(crd.metadata.name, 'etcdclusters.etcd.database.coreos.com');
  assert.equal(crd.spec.versions.length, 1);
  const [v] = crd.spec.versions;
  assert.equal(v!.name, 'v1beta2');
  assert.ok(v!.served && v!.storage);
  assert.equal(v!.schema.openAPIV3Schema['x-kubernetes-preserve-unknown-fields'], true);
  // It writes status with a plain PUT of the whole object: a status subresource would drop it.
  assert.equal(v!.subresources, undefined);
  assert.equal(crd.spec.names.plural, 'etcdclusters');
  assert.equal(crd.spec.scope, 'Namespaced');
});

test('coreos: the operator runs cluster-wide with -create-crd=false, its pod name and namespace, and a bound ServiceAccount', () => {
  const objects = coreosOperatorObjects();
  assert.deepEqual(objects.map((o) => o.kind), ['CustomResourceDefinition', 'Namespace', 'ServiceAccount', 'ClusterRole', 'ClusterRoleBinding', 'Deployment']);
  const deployment = objects.find((o) => o.kind === 'Deployment')!;
  const container = at(deployment, 'spec', 'template', 'spec', 'containers', 0) as Json;
  assert.deepEqual(container['args'], ['-create-crd=false', '-cluster-wide']);
  const env = container['env'] as { name: string; valueFrom: { fieldRef: { fieldPath: string } } }[];
  assert.deepEqual(env.map((e) => [e.name, e.valueFrom.fieldRef.fieldPath]), [['MY_POD_NAMESPACE', 'metadata.namespace'], ['MY_POD_NAME', 'metadata.name']]);
  const sa = objects.find((o) => o.kind === 'ServiceAccount')!;
  assert.equal(at(deployment, 'spec', 'template', 'spec', 'serviceAccountName'), sa.metadata.name);
  const binding = objects.find((o) => o.kind === 'ClusterRoleBinding')!;
  assert.deepEqual(at(binding, 'subjects', 0), { kind: 'ServiceAccount', name: sa.metadata.name, namespace: sa.metadata.namespace });
  assert.equal(deployment.metadata.namespace, sa.metadata.namespace);
});

test('coreos: both Services publish not-ready addresses and select its member pods', () => {
  const [headless, client] = coreosServices('c', 'ns');
  assert.equal(headless!.metadata.name, 'c');
  assert.equal(headless!.spec.clusterIP, 'None');
  assert.equal(client!.metadata.name, 'c-client');
  for (const svc of [headless!, client!]) {
    assert.equal(svc.spec.publishNotReadyAddresses, true);
    assert.deepEqual(svc.spec.selector, { app: 'etcd', etcd_cluster: 'c' });
  }
  assert.deepEqual(headless!.spec.ports!.map((p) => p.port), [2379, 2380]);
});

test('coreos: an EtcdCluster whose member image is <repository>:v<version> = the etcd-shell image, also its DNS wait image', () => {
  const c = coreosCluster('c', 'ns', 3);
  assert.equal(c.apiVersion, 'etcd.database.coreos.com/v1beta2');
  assert.equal(c.metadata.annotations?.[COREOS_SCOPE_ANNOTATION], 'clusterwide');
  assert.equal(c.spec['size'], 3);
  // k8sutil.ImageName: fmt.Sprintf("%s:v%v", repo, version).
  assert.equal(`${String(c.spec['repository'])}:v${String(c.spec['version'])}`, PEER_ETCD_IMAGE);
  assert.equal(at(c.spec, 'pod', 'busyboxImage'), PEER_ETCD_IMAGE);
  assert.deepEqual(at(c.spec, 'pod', 'resources'), DEFAULT_ETCD_RESOURCES);
  assert.equal(at(c.spec, 'pod', 'antiAffinity'), undefined, 'required anti-affinity would leave 2 of 5 members unscheduled on 3 nodes');
  assert.ok(at(c.spec, 'pod', 'affinity', 'podAntiAffinity', 'preferredDuringSchedulingIgnoredDuringExecution'));
});

test('statefulset: Parallel pods, a headless Service publishing not-ready addresses, PVCs, /health readiness, Quorum’s requests', () => {
  const [headless, client, sts] = statefulSetObjects('s', 'ns', 3);
  assert.equal(headless!.metadata.name, headlessServiceName('s'));
  assert.equal(at(headless, 'spec', 'clusterIP'), 'None');
  assert.equal(at(headless, 'spec', 'publishNotReadyAddresses'), true);
  assert.equal(client!.metadata.name, 's');
  assert.equal(sts!.kind, 'StatefulSet');
  assert.equal(at(sts, 'spec', 'podManagementPolicy'), 'Parallel');
  assert.equal(at(sts, 'spec', 'serviceName'), headlessServiceName('s'));
  assert.equal(at(sts, 'spec', 'replicas'), 3);
  assert.equal(at(sts, 'spec', 'volumeClaimTemplates', 0, 'metadata', 'name'), 'data');
  assert.equal(at(sts, 'spec', 'volumeClaimTemplates', 0, 'spec', 'storageClassName'), undefined, 'the default class, as Quorum’s default storage');
  const container = at(sts, 'spec', 'template', 'spec', 'containers', 0) as Json;
  assert.equal(container['image'], PEER_ETCD_IMAGE);
  assert.deepEqual(at(container, 'readinessProbe', 'httpGet'), { path: '/health?exclude=NOSPACE', port: 2381 });
  assert.deepEqual(container['resources'], DEFAULT_ETCD_RESOURCES);
  assert.deepEqual(at(container, 'volumeMounts', 0), { name: 'data', mountPath: '/var/lib/etcd' });
  const names = (container['env'] as { name: string }[]).map((e) => e.name);
  assert.deepEqual(names.filter((n) => n.startsWith('ETCD_')), [], 'etcd reads ETCD_* as flags and refuses a flag given twice');
  assert.deepEqual(at(container, 'command'), ['/bin/sh', '-ec', START_SCRIPT]);
});

// ---- the start script, run by dash with a fake etcd (prints its arguments) and etcdctl (a member list in a file) ----

interface ScriptRun {
  etcdArgs: string[];
  adds: string[];
}

const peer = (n: number): string => `http://s-${n}.s-headless.ns.svc.cluster.local:2380`;
const started = (n: number): string => `${(1000 + n).toString(16)}, started, s-${n}, ${peer(n)}, http://s-${n}.s-headless.ns.svc.cluster.local:2379, false`;
const unstarted = (n: number): string => `${(1000 + n).toString(16)}, unstarted, , ${peer(n)}, , false`;

async function runScript(pod: string, { data = false, members = [] as string[], later = undefined as string[] | undefined } = {}): Promise<ScriptRun & { output: string }> {
  const dir = await mkdtemp(join(tmpdir(), 'peers-script-'));
  try {
    const bin = join(dir, 'bin');
    await mkdir(bin);
    const dataDir = join(dir, 'data');
    if (data) await mkdir(join(dataDir, 'member'), { recursive: true });
    await writeFile(join(dir, 'list'), members.map((m) => `${m}\n`).join(''));
    await writeFile(join(dir, 'adds'), '');
    // `later`: the membership from the second list on (a neighbour that started meanwhile).
    if (later) await writeFile(join(dir, 'later'), later.map((m) => `${m}\n`).join(''));
    await writeFile(join(bin, 'etcd'), `#!/bin/sh\nfor a in "$@"; do echo "$a"; done > "${dir}/etcd-args"\n`);
    // member add: records the call and lists the new member as unstarted, as etcd does.
    await writeFile(
      join(bin, 'etcdctl'),
      `#!/bin/sh
case "$*" in
  *"member list"*)
    cat "${dir}/list"
    if [ -f "${dir}/later" ]; then mv "${dir}/later" "${dir}/list"; fi ;;
  *"member add"*)
    for a in "$@"; do case "$a" in --peer-urls=*) url="\${a#--peer-urls=}" ;; esac; done
    echo "$*" >> "${dir}/adds"
    echo "ffff, unstarted, , $url, , false" >> "${dir}/list" ;;
  *) exit 1 ;;
esac
`,
    );
    await chmod(join(bin, 'etcd'), 0o755);
    await chmod(join(bin, 'etcdctl'), 0o755);
    const env = {
      PATH: `${bin}:/usr/bin:/bin`,
      MY_POD_NAME: pod,
      MY_NAMESPACE: 'ns',
      HEADLESS_SERVICE: 's-headless',
      CLIENT_SERVICE: 's',
      CLUSTER_DOMAIN: 'cluster.local',
      INITIAL_CLUSTER_SIZE: '3',
      DATA_DIR: dataDir,
    };
    const { stdout } = await run('dash', ['-ec', START_SCRIPT], { env, timeout: 20_000 });
    const etcdArgs = (await readFile(join(dir, 'etcd-args'), 'utf8')).trim().split('\n');
    const adds = (await readFile(join(dir, 'adds'), 'utf8')).split('\n').filter(Boolean);
    return { etcdArgs, adds, output: stdout };
  } finally {
    await rm(dir, { recursive: true, force: true });
  }
}

const flag = (args: string[], name: string): string | undefined => args.find((a) => a.startsWith(`--${name}=`))?.slice(name.length + 3);

test('start script: a member with data restarts on it, with no initial-cluster flags', async () => {
  const { etcdArgs, adds } = await runScript('s-1', { data: true });
  assert.equal(flag(etcdArgs, 'name'), 's-1');
  assert.equal(flag(etcdArgs, 'initial-cluster'), undefined);
  assert.equal(flag(etcdArgs, 'initial-cluster-state'), undefined);
  assert.deepEqual(adds, []);
});

test('start script: an initial member without data bootstraps the static initial cluster', async () => {
  const { etcdArgs, adds } = await runScript('s-2');
  assert.equal(flag(etcdArgs, 'initial-cluster-state'), 'new');
  assert.equal(flag(etcdArgs, 'initial-cluster'), [0, 1, 2].map((n) => `s-${n}=${peer(n)}`).join(','));
  assert.equal(flag(etcdArgs, 'initial-advertise-peer-urls'), peer(2));
  assert.equal(flag(etcdArgs, 'initial-cluster-token'), 'ns-s');
  assert.equal(flag(etcdArgs, 'listen-metrics-urls'), 'http://0.0.0.0:2381');
  assert.deepEqual(adds, []);
});

test('start script: a member added by a scale-up joins with member add and the membership read back', async () => {
  // s-4 was added a moment earlier (by hand, say) and has not started yet: it is in the initial cluster too.
  const { etcdArgs, adds } = await runScript('s-3', { members: [started(0), started(1), started(2), unstarted(4)] });
  assert.equal(adds.length, 1);
  assert.match(adds[0]!, /member add s-3 --peer-urls=http:\/\/s-3\.s-headless\.ns\.svc\.cluster\.local:2380/);
  assert.equal(flag(etcdArgs, 'initial-cluster-state'), 'existing');
  assert.equal(flag(etcdArgs, 'initial-cluster'), [0, 1, 2, 4, 3].map((n) => `s-${n}=${peer(n)}`).join(','));
  assert.equal(flag(etcdArgs, 'initial-cluster-token'), undefined);
});

test('start script: joins go in ordinal order: s-4 waits until s-3 has started, then joins with s-3 in its initial cluster', async () => {
  const { etcdArgs, adds, output } = await runScript('s-4', { members: [started(0), started(1), started(2), unstarted(3)], later: [started(0), started(1), started(2), started(3)] });
  assert.match(output, /start: waiting for s-3 to join first/);
  assert.equal(adds.length, 1);
  assert.match(adds[0]!, /member add s-4 /);
  assert.equal(flag(etcdArgs, 'initial-cluster'), [0, 1, 2, 3, 4].map((n) => `s-${n}=${peer(n)}`).join(','));
  const first = await runScript('s-3', { members: [started(0), started(1), started(2)] });
  assert.doesNotMatch(first.output, /waiting/, 'the first member past the initial ones waits for nobody');
  assert.equal(first.adds.length, 1);
});

test('start script: a joining member already added (a restart after member add) is not added twice', async () => {
  const { etcdArgs, adds } = await runScript('s-3', { members: [started(0), started(1), started(2), unstarted(3)] });
  assert.deepEqual(adds, []);
  assert.equal(flag(etcdArgs, 'initial-cluster-state'), 'existing');
  assert.equal(flag(etcdArgs, 'initial-cluster'), [0, 1, 2, 3].map((n) => `s-${n}=${peer(n)}`).join(','));
});

// ---- Available, the same for every peer ----

const member = (name: string, over: Partial<Member> = {}): Member => ({ id: name, name, peerURLs: [`http://${name}:2380`], clientURLs: [`http://${name}:2379`], isLearner: false, ...over });
const pod = (name: string, over: Partial<ReturnType<typeof podView>> = {}): ReturnType<typeof podView> => ({ name, uid: `uid-${name}`, ready: true, terminating: false, ip: '10.0.0.1', ...over });
const healthy = (names: string[]): Observation['health'] => Object.fromEntries(names.map((n) => [n, true]));
const three = ['a', 'b', 'c'];
const good = (): Observation => ({ pods: three.map((n) => pod(n)), members: three.map((n) => member(n)), health: healthy(three) });

test('available: N Ready pods, N started voters named after them, every member healthy', () => {
  assert.deepEqual(availability(good(), 3), { available: true });
  assert.equal(availability(good(), 5).available, false);
});

test('available: not while any part is missing, with the reason', () => {
  const cases: [string, (o: Observation) => void, RegExp][] = [
    ['a pod not Ready', (o) => void (o.pods[1]!.ready = false), /not Ready: b/],
    ['a learner', (o) => void ((o.members as Member[])[2]!.isLearner = true), /learners: c/],
    ['an unstarted member', (o) => void ((o.members as Member[])[2] = member('', { clientURLs: [] })), /not started/],
    ['a member with no pod', (o) => void ((o.members as Member[])[2] = member('z')), /without a pod: z/],
    ['a member unhealthy', (o) => void (o.health['a'] = false), /a not healthy/],
    ['no member list', (o) => void (o.members = { error: 'timeout' }), /no member list: timeout/],
    ['a fourth member', (o) => void (o.members as Member[]).push(member('d')), /4 members, not 3/],
  ];
  for (const [what, change, reason] of cases) {
    const o = good();
    change(o);
    const v = availability(o, 3);
    assert.equal(v.available, false, what);
    assert.match(v.available ? '' : v.reason, reason, what);
  }
});

test('available: after a pod is deleted, not until that pod is gone; a terminating pod is not a member pod', () => {
  const o = good();
  o.pods.push(pod('b', { uid: 'old', terminating: true }));
  assert.equal(availability(o, 3, 'old').available, false);
  assert.deepEqual(availability(o, 3), { available: true });
  o.pods.pop();
  assert.deepEqual(availability(o, 3, 'old'), { available: true });
});

test('podView reads readiness, deletion and the pod IP', () => {
  const v = podView({ metadata: { name: 'p', uid: 'u', deletionTimestamp: '2026-01-01T00:00:00Z' }, status: { podIP: '10.1.2.3', conditions: [{ type: 'Ready', status: 'True' }] } });
  assert.deepEqual(v, { name: 'p', uid: 'u', ready: true, terminating: true, ip: '10.1.2.3' });
});

// ---- figures ----

test('figures: medians with spread, failures counted, ratio of medians Quorum / peer with per-round spread', () => {
  const r = (peer: RunResult['peer'], round: number, seconds?: number): RunResult => ({ peer, round, scenario: 'create', ...(seconds === undefined ? { failure: 'timed out' } : { seconds }) });
  const results = [r('quorum', 0, 10), r('coreos', 0, 40), r('statefulset', 0, 20), r('quorum', 1, 12), r('coreos', 1, 30), r('statefulset', 1), r('quorum', 2, 14), r('coreos', 2, 50), r('statefulset', 2, 28)];
  const figures = new Map(peerFigures(results).map((f) => [f.bench, f.value]));
  assert.equal(figures.get('peers.quorum.create_s'), 12);
  assert.equal(figures.get('peers.coreos.create_s'), 40);
  assert.equal(figures.get('peers.coreos.create_s.min'), 30);
  assert.equal(figures.get('peers.coreos.create_s.max'), 50);
  assert.equal(figures.get('peers.coreos.create_ratio'), 12 / 40);
  assert.equal(figures.get('peers.coreos.create_ratio.min'), 10 / 40);
  assert.equal(figures.get('peers.coreos.create_ratio.max'), 12 / 30);
  assert.equal(figures.get('peers.statefulset.create_s'), 24);
  assert.equal(figures.get('peers.statefulset.create_failures'), 1);
  assert.equal(figures.get('peers.statefulset.create_ratio'), 12 / 24);
  assert.equal(figures.get('peers.quorum.create_ratio'), undefined, 'no ratio of Quorum to itself');
  // A scenario nobody reached has failures only.
  assert.equal(figures.get('peers.coreos.scale_3_5_s'), undefined);
  assert.equal(figures.get('peers.coreos.scale_3_5_failures'), 0);
});

test('QUORUM_PEERS picks peers in their fixed order and refuses an unknown one', () => {
  assert.deepEqual(selectedPeers(undefined), ['quorum', 'coreos', 'statefulset']);
  assert.deepEqual(selectedPeers('statefulset, quorum'), ['quorum', 'statefulset']);
  assert.throws(() => selectedPeers('druid'), /unknown peer druid/);
});
