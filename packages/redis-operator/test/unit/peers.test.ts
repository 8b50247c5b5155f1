// The Redis peers benchmark's pure parts (bench/redis-peers.bench.ts): its figures, its one "available" decision
// for every peer, and the objects it applies for OT-CONTAINER-KIT's and spotahome's operators.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { agreedPrimary, availability, parseReplication, type Expectation, type Observation, type PodView } from '../../bench/peers/available.ts';
import { mirrorPath } from '../../bench/peers/build.ts';
import { PEER_DOWN_AFTER_MS, PEER_FAILOVER_TIMEOUT_MS, PEER_STORAGE_SIZE } from '../../bench/peers/common.ts';
import { peerFigures, selectedPeers, type RunResult } from '../../bench/peers/figures.ts';
import { appletLinks, PEER_REDIS_IMAGE } from '../../bench/peers/images.ts';
import { operatorAccess } from '../../bench/peers/manifests.ts';
import { otRedis, otSentinelLabels } from '../../bench/peers/ot.ts';
import { spotahomeFailover } from '../../bench/peers/spotahome.ts';

const value = (figures: ReturnType<typeof peerFigures>, bench: string): number | undefined => figures.find((f) => f.bench === bench)?.value;

test('figures: medians, Quorum over the peer per scenario, failures counted (0 included)', () => {
  const results: RunResult[] = [
    ...[10, 12, 30].map((seconds, round): RunResult => ({ peer: 'quorum', round, scenario: 'create', seconds })),
    ...[20, 24, 40].map((seconds, round): RunResult => ({ peer: 'ot', round, scenario: 'create', seconds })),
    { peer: 'ot', round: 0, scenario: 'primary_pod_deleted', failure: 'not available after 300 s' },
    { peer: 'ot', round: 0, scenario: 'all_pods_deleted', failure: 'skipped: primary_pod_deleted failed' },
  ];
  const figures = peerFigures(results, ['quorum', 'ot']);
  assert.equal(value(figures, 'peers.quorum.redis_create_s'), 12);
  assert.equal(value(figures, 'peers.ot.redis_create_s'), 24);
  assert.equal(value(figures, 'peers.ot.redis_create_ratio'), 0.5);
  assert.equal(value(figures, 'peers.ot.redis_create_ratio.min'), 0.5);
  assert.equal(value(figures, 'peers.ot.redis_create_ratio.max'), 0.75);
  assert.equal(value(figures, 'peers.ot.redis_primary_pod_deleted_failures'), 1);
  assert.equal(value(figures, 'peers.ot.redis_all_pods_deleted_failures'), 1);
  assert.equal(value(figures, 'peers.quorum.redis_create_failures'), 0);
  // No ratio where either side has no success, and none for Quorum against itself.
  assert.equal(value(figures, 'peers.ot.redis_primary_pod_deleted_ratio'), undefined);
  assert.equal(figures.some((f) => f.bench.startsWith('peers.quorum.') && f.bench.includes('_ratio')), false);
});

test('QUORUM_PEERS picks peers in their fixed order and refuses unknown names', () => {
  assert.deepEqual(selectedPeers(undefined), ['quorum', 'ot', 'spotahome']);
  assert.deepEqual(selectedPeers('spotahome, quorum'), ['quorum', 'spotahome']);
  assert.throws(() => selectedPeers('bitnami'), /unknown peer bitnami/);
});

const pod = (name: string, ip: string, extra: Partial<PodView> = {}): PodView => ({ name, uid: `uid-${name}`, ready: true, terminating: false, ip, ...extra });

/** A healthy Redis: r-0 primary with both replicas online, 3 Sentinels naming it by `named`. */
function healthy(named = '10.0.0.1'): Observation {
  const redis = [pod('r-0', '10.0.0.1'), pod('r-1', '10.0.0.2'), pod('r-2', '10.0.0.3')];
  const sentinels = [pod('s-0', '10.0.1.1'), pod('s-1', '10.0.1.2'), pod('s-2', '10.0.1.3')];
  return {
    redis,
    sentinels,
    replication: { 'r-0': { role: 'master', linkUp: false, onlineReplicas: 2 }, 'r-1': { role: 'slave', linkUp: true, onlineReplicas: 0 }, 'r-2': { role: 'slave', linkUp: true, onlineReplicas: 0 } },
    named: { 's-0': named, 's-1': named, 's-2': named },
    write: { pod: 'r-0' },
  };
}
const want: Expectation = { instances: 3, sentinels: 3 };

test('available: 3 Ready Redis pods and Sentinels, one primary named by all, replicas linked, a write on it', () => {
  assert.deepEqual(availability(healthy(), want), { available: true, primary: 'r-0' });
  // Quorum's Sentinels announce hostnames: the first label is the pod's name.
  assert.deepEqual(availability(healthy('r-0.r-headless.ns.svc'), want), { available: true, primary: 'r-0' });
});

test('not available: each missing condition is named', () => {
  const reason = (obs: Observation, w = want): string => {
    const v = availability(obs, w);
    assert.equal(v.available, false);
    return v.available ? '' : v.reason;
  };
  const split = healthy();
  split.named['s-2'] = '10.0.0.2';
  assert.match(reason(split), /the Sentinels name 10\.0\.0\.1, 10\.0\.0\.2/);
  const unlinked = healthy();
  unlinked.replication['r-2'] = { role: 'slave', linkUp: false, onlineReplicas: 0 };
  assert.match(reason(unlinked), /r-2 is slave with its link down/);
  const oneReplica = healthy();
  oneReplica.replication['r-0'] = { role: 'master', linkUp: false, onlineReplicas: 1 };
  assert.match(reason(oneReplica), /1 online replicas, not 2/);
  const unready = healthy();
  unready.sentinels[1] = pod('s-1', '10.0.1.2', { ready: false });
  assert.match(reason(unready), /Sentinel pods not Ready: s-1/);
  assert.match(reason(healthy(), { ...want, absentUids: ['uid-r-1'] }), /a deleted pod is still there/);
  const refused = healthy();
  refused.write = { error: 'NOREPLICAS Not enough good replicas to write.' };
  assert.match(reason(refused), /write refused: NOREPLICAS/);
  const lost = healthy();
  lost.read = null;
  assert.match(reason(lost, { ...want, data: { key: 'k', value: 'v' } }), /k is null, not "v": data lost/);
  const stale = healthy();
  stale.named = { 's-0': '10.9.9.9', 's-1': '10.9.9.9', 's-2': '10.9.9.9' };
  assert.deepEqual(agreedPrimary(stale), { error: 'the Sentinels name 10.9.9.9, no live Redis pod' });
});

test('INFO replication: role, link and online replicas', () => {
  const master = 'role:master\r\nconnected_slaves:2\r\nslave0:ip=10.0.0.2,port=6379,state=online,offset=1,lag=0\r\nslave1:ip=10.0.0.3,port=6379,state=wait_bgsave,offset=0,lag=0\r\n';
  assert.deepEqual(parseReplication(master), { role: 'master', linkUp: false, onlineReplicas: 1 });
  assert.deepEqual(parseReplication('role:slave\r\nmaster_host:10.0.0.1\r\nmaster_link_status:up\r\n'), { role: 'slave', linkUp: true, onlineReplicas: 0 });
});

/** The value at `path` in a plain object (the builders' custom resources are untyped JSON). */
const dig = (obj: unknown, path: string): unknown => path.split('.').reduce<unknown>((o, k) => (o as Record<string, unknown> | undefined)?.[k], obj);

test('the peers\' objects: the same Redis image, pulled only if absent, a claim of Quorum\'s size, Quorum\'s Sentinel timings', () => {
  const [replication, sentinel] = otRedis('r', 'ns');
  assert.deepEqual(dig(replication, 'spec.kubernetesConfig'), { image: PEER_REDIS_IMAGE, imagePullPolicy: 'IfNotPresent' });
  assert.equal(dig(replication, 'spec.storage.volumeClaimTemplate.spec.resources.requests.storage'), PEER_STORAGE_SIZE);
  assert.equal(dig(sentinel, 'spec.redisSentinelConfig.redisReplicationName'), 'r');
  assert.equal(dig(sentinel, 'spec.redisSentinelConfig.downAfterMilliseconds'), String(PEER_DOWN_AFTER_MS));
  assert.equal(otSentinelLabels('r')['app'], 'r-sentinel');
  const failover = spotahomeFailover('r', 'ns');
  for (const side of ['redis', 'sentinel']) {
    assert.equal(dig(failover, `spec.${side}.image`), PEER_REDIS_IMAGE);
    assert.equal(dig(failover, `spec.${side}.imagePullPolicy`), 'IfNotPresent');
    assert.equal(dig(failover, `spec.${side}.replicas`), 3);
  }
  assert.equal(dig(failover, 'spec.redis.storage.persistentVolumeClaim.spec.resources.requests.storage'), PEER_STORAGE_SIZE);
  assert.deepEqual(dig(failover, 'spec.sentinel.customConfig'), [`down-after-milliseconds ${PEER_DOWN_AFTER_MS}`, `failover-timeout ${PEER_FAILOVER_TIMEOUT_MS}`]);
});

test('the peers\' image links each busybox applet once; an operator\'s access binds its ClusterRole to its ServiceAccount', () => {
  const links = appletLinks().map((e) => e.path);
  assert.equal(new Set(links).size, links.length);
  for (const applet of ['sh', 'awk', 'seq', 'hostname', 'tr', 'xargs', 'cut']) assert.ok(links.includes(`bin/${applet}`), applet);
  const [, account, binding] = operatorAccess('op', 'op-system') as [unknown, { metadata: { name: string } }, { roleRef: { name: string }; subjects: { name: string; namespace: string }[] }];
  assert.equal(binding.roleRef.name, 'op');
  assert.deepEqual(binding.subjects, [{ kind: 'ServiceAccount', name: account.metadata.name, namespace: 'op-system' }]);
});

test('the peers\' mirrors: the env override, else the fetch tool\'s path', () => {
  assert.equal(mirrorPath('ot', {}), '/work/.mirror/OT-CONTAINER-KIT+redis-operator/repo');
  assert.equal(mirrorPath('spotahome', { QUORUM_PEERS_SPOTAHOME_MIRROR: '/src/sp.git' }), '/src/sp.git');
});
