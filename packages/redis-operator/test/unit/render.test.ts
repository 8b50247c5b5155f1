// What the operator renders: redis.conf and sentinel.conf from the spec, and the pods, claims and Services, with
// deterministic names, the restricted pod security of the kit, and no password anywhere in a spec or a ConfigMap.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { applyDefaults } from '../../src/api/defaults.ts';
import { confValue, quantityBytes, redisConf, sentinelConf, sentinelQuorum } from '../../src/render/config.ts';
import { configMap, instanceClaim, instancePod, podHashes, sentinelPod, services, type Rendering } from '../../src/render/objects.ts';

const rendering = (spec: unknown = {}): Rendering => ({
  redis: { name: 'cache', namespace: 'ns', uid: 'u-1' },
  spec: applyDefaults(spec),
  image: 'quorum.dev/redis:7.0.15',
  auth: { secretName: 'cache-auth', key: 'password' },
});

test('redis.conf: persistence, memory, the write-loss bound with replicas, and allowlisted extras quoted', () => {
  const conf = redisConf(applyDefaults({ maxmemory: '64Mi', maxmemoryPolicy: 'allkeys-lru', persistence: { rdb: false, aof: true }, config: [{ name: 'notify-keyspace-events', value: 'Ex' }, { name: 'client-output-buffer-limit', value: 'pubsub 32mb 8mb 60' }] }));
  for (const line of ['save ""', 'appendonly yes', 'maxmemory 67108864', 'maxmemory-policy allkeys-lru', 'min-replicas-to-write 1', 'min-replicas-max-lag 10', 'dir /data', 'notify-keyspace-events Ex', 'client-output-buffer-limit "pubsub 32mb 8mb 60"']) {
    assert.ok(conf.split('\n').includes(line), `${line} in\n${conf}`);
  }
  assert.match(redisConf(applyDefaults({ replicas: 0 })), /^min-replicas-to-write 0$/m, 'a lone primary takes writes');
  assert.match(redisConf(applyDefaults({})), /^save 3600 1 300 100 60 10000$/m);
  assert.doesNotMatch(redisConf(applyDefaults({})), /requirepass|replicaof/);
  assert.equal(quantityBytes('1Gi'), 2 ** 30);
  assert.equal(quantityBytes('500M'), 5e8);
  assert.equal(confValue('say "hi"\\'), '"say \\"hi\\"\\\\"');
});

test('sentinel.conf monitors the recorded primary by hostname with a majority quorum', () => {
  const conf = sentinelConf('cache', applyDefaults({ sentinel: { replicas: 5, downAfterMilliseconds: 3000 } }), 'cache-1.cache-headless.ns.svc');
  assert.match(conf, /^sentinel monitor cache cache-1\.cache-headless\.ns\.svc 6379 3$/m);
  assert.match(conf, /^sentinel down-after-milliseconds cache 3000$/m);
  assert.match(conf, /^sentinel resolve-hostnames yes$/m);
  assert.deepEqual([1, 2, 3, 4, 5].map(sentinelQuorum), [1, 2, 2, 3, 3]);
});

test('instance and Sentinel pods: stable hostnames under the headless Service, restricted security, the password only by reference', () => {
  const r = rendering({ resources: { requests: { memory: '128Mi' } } });
  const pod = instancePod(r, 'cache-1', 'h');
  assert.equal(pod.metadata.name, 'cache-1');
  assert.equal(pod.spec?.hostname, 'cache-1');
  assert.equal(pod.spec?.subdomain, 'cache-headless');
  assert.equal(pod.spec?.securityContext?.runAsNonRoot, true);
  assert.equal(pod.spec?.securityContext?.seccompProfile?.type, 'RuntimeDefault');
  for (const c of [...(pod.spec?.containers ?? []), ...(pod.spec?.initContainers ?? [])]) {
    assert.equal(c.securityContext?.readOnlyRootFilesystem, true, c.name);
    assert.deepEqual(c.securityContext?.capabilities?.drop, ['ALL'], c.name);
  }
  assert.deepEqual(pod.spec?.volumes?.find((v) => v.name === 'data')?.persistentVolumeClaim, { claimName: 'data-cache-1' });
  assert.deepEqual(pod.spec?.containers[0]?.resources, { requests: { memory: '128Mi' } });
  assert.deepEqual(pod.metadata.ownerReferences?.[0]?.name, 'cache');
  const spec = JSON.stringify([pod, sentinelPod(r, 'cache-sentinel-0', 'h'), configMap(r, { redisConf: 'x', sentinelConf: 'y' }, 'cache-0')]);
  assert.doesNotMatch(spec, /secret-value/);
  assert.match(spec, /"secretKeyRef":\{"name":"cache-auth","key":"password"\}/);
  assert.equal(sentinelPod(r, 'cache-sentinel-0', 'h').metadata.labels['app.kubernetes.io/component'], 'sentinel');
});

test('claims are owned by the Redis only with reclaimPolicy Delete; Services select the primary by role label', () => {
  assert.equal(instanceClaim(rendering(), 'cache-0').metadata.ownerReferences, undefined);
  assert.equal(instanceClaim(rendering({ storage: { reclaimPolicy: 'Delete' } }), 'cache-0').metadata.ownerReferences?.[0]?.kind, 'Redis');
  assert.equal(instanceClaim(rendering({ storage: { size: '5Gi', storageClassName: 'fast' } }), 'cache-0').spec?.storageClassName, 'fast');
  const byName = new Map(services(rendering()).map((s) => [s.metadata.name, s]));
  assert.deepEqual([...byName.keys()], ['cache', 'cache-replicas', 'cache-sentinel', 'cache-headless']);
  assert.equal(byName.get('cache')?.spec?.selector?.['redis.quorum.dev/role'], 'primary');
  assert.equal(byName.get('cache-headless')?.spec?.publishNotReadyAddresses, true);
  assert.ok(!services(rendering({ sentinel: { replicas: 0 } })).some((s) => s.metadata.name === 'cache-sentinel'));
});

test('a Redis bootstrapped from a backup: every instance pod fetches before its config step, the hash says so', () => {
  const bootstrap = { backup: 'b1', destination: { s3: { bucket: 'bk', prefix: '', credentialsSecret: 's3' } }, key: 'k.rdb', sha256: 'd'.repeat(64), sizeBytes: 9 };
  const plain = rendering({ bootstrap: { fromBackup: { backupName: 'b1' } } });
  const restored: Rendering = { ...plain, restore: { bootstrap, agentImage: 'op:dev' } };
  const pod = instancePod(restored, 'cache-1', 'h');
  assert.deepEqual(pod.spec?.initContainers?.map((c) => c.name), ['restore', 'config']);
  assert.equal(pod.spec?.initContainers?.[0]?.image, 'op:dev');
  assert.ok(pod.spec?.volumes?.some((v) => v.name === 'restore-credentials' && v.secret?.secretName === 's3'));
  assert.deepEqual(instancePod(plain, 'cache-1', 'h').spec?.initContainers?.map((c) => c.name), ['config']);
  const files = { redisConf: '', sentinelConf: '' };
  assert.notEqual(podHashes(restored, files).redis, podHashes(plain, files).redis);
  assert.equal(podHashes(restored, files).sentinel, podHashes(plain, files).sentinel);
});

test('a changed user password rolls the instances (their hash counts the users\' fingerprint), not the Sentinels', () => {
  const users = rendering({ users: [{ name: 'app', passwordSecret: { name: 'app-pw', key: 'password' }, rules: '~* +@read' }] });
  const files = { redisConf: '', sentinelConf: '' };
  const before = podHashes({ ...users, usersFingerprint: 'aaaaaaaaaaaaaaaa' }, files);
  const after = podHashes({ ...users, usersFingerprint: 'bbbbbbbbbbbbbbbb' }, files);
  assert.notEqual(after.redis, before.redis);
  assert.equal(after.sentinel, before.sentinel);
  assert.equal(podHashes({ ...users, usersFingerprint: 'aaaaaaaaaaaaaaaa' }, files).redis, before.redis, 'the same passwords, the same hash');
});
