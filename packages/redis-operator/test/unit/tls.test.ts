// TLS of a Redis (src/tls/certificates.ts, render/): the names the served certificate covers, what the operator
// issues and when (a CA only while no pod trusts one; a Secret of its names that is not its own is never used or
// replaced), redis.conf and sentinel.conf with TLS only on their ports, and the pods that mount and probe it.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import type { Client } from '@quorum/runtime';
import { applyDefaults } from '../../src/api/defaults.ts';
import { redisConf, sentinelConf } from '../../src/render/config.ts';
import { instancePod, podHashes, sentinelPod, type Rendering } from '../../src/render/objects.ts';
import { observeTLS, servingSANs, writeTLS } from '../../src/tls/certificates.ts';

const redis = { name: 'cache', namespace: 'ns', uid: 'u-1' };

test('the certificate covers every pod by its stable name, the Services, and loopback; never a pod IP', () => {
  const { dnsNames, ipAddresses } = servingSANs('cache', 'ns', 'cluster.local.');
  for (const name of ['*.cache-headless.ns.svc', '*.cache-headless.ns.svc.cluster.local', 'cache', 'cache.ns.svc', 'cache-replicas.ns.svc.cluster.local', 'cache-sentinel.ns', 'localhost']) {
    assert.ok(dnsNames.includes(name), `${name} in ${dnsNames.join(', ')}`);
  }
  assert.deepEqual(ipAddresses, ['127.0.0.1', '::1']);
});

test('redis.conf and sentinel.conf: TLS only on 6379 and 26379 (port 0), replication and Sentinel links over TLS; plaintext when disabled', () => {
  const conf = redisConf(applyDefaults({})).split('\n');
  for (const line of ['port 0', 'tls-port 6379', 'tls-cert-file /tls/tls.crt', 'tls-key-file /tls/tls.key', 'tls-ca-cert-file /tls/ca.crt', 'tls-auth-clients no', 'tls-replication yes']) assert.ok(conf.includes(line), line);
  const sentinel = sentinelConf('cache', applyDefaults({}), 'cache-0.cache-headless.ns.svc').split('\n');
  for (const line of ['port 0', 'tls-port 26379', 'tls-replication yes', 'tls-ca-cert-file /tls/ca.crt']) assert.ok(sentinel.includes(line), line);
  const plain = redisConf(applyDefaults({ tls: { disabled: true } }));
  assert.match(plain, /^port 6379$/m);
  assert.doesNotMatch(plain, /tls-/);
});

test('pods mount the served Secret whole and probe over TLS; a new certificate rolls the Sentinels (instances reload it)', () => {
  const r: Rendering = { redis, spec: applyDefaults({}), image: 'i', auth: { secretName: 'cache-auth', key: 'password' }, tls: { secretName: 'cache-tls', fingerprint: 'a' } };
  for (const pod of [instancePod(r, 'cache-0', 'h'), sentinelPod(r, 'cache-sentinel-0', 'h')]) {
    assert.deepEqual(pod.spec?.volumes?.find((v) => v.name === 'tls')?.secret, { secretName: 'cache-tls', defaultMode: 0o440 });
    const container = pod.spec.containers[0]!;
    assert.ok(container.volumeMounts?.some((m) => m.name === 'tls' && m.mountPath === '/tls' && m.readOnly && m.subPath === undefined));
    assert.match(container.readinessProbe?.exec?.command?.[2] ?? '', /redis-cli -h 127\.0\.0\.1 .*--tls --cacert \/tls\/ca\.crt/);
  }
  const files = { redisConf: 'r', sentinelConf: 's' };
  const before = podHashes(r, files);
  const after = podHashes({ ...r, tls: { secretName: 'cache-tls', fingerprint: 'b' } }, files);
  assert.equal(before.redis, after.redis, 'an instance reloads its certificate (CONFIG SET): no restart');
  assert.notEqual(before.sentinel, after.sentinel, 'a Sentinel cannot: it is rolled');
});

test('spec.users: each password reaches only the config init container, by a Secret reference, as a quoted user line', () => {
  const r: Rendering = { redis, spec: applyDefaults({ users: [{ name: 'app', passwordSecret: { name: 'app-pw', key: 'pw' }, rules: '~app:* +@read' }] }), image: 'i', auth: { secretName: 'cache-auth', key: 'password' } };
  const pod = instancePod(r, 'cache-0', 'h');
  const init = pod.spec!.initContainers!.find((c) => c.name === 'config')!;
  assert.deepEqual(init.env?.find((e) => e.name === 'REDIS_USER_PASSWORD_0')?.valueFrom, { secretKeyRef: { name: 'app-pw', key: 'pw' } });
  assert.match(init.command?.[2] ?? '', /printf 'user %s on ">%s" %s\\n' 'app' .*REDIS_USER_PASSWORD_0.* '~app:\* \+@read' >> \/etc\/redis\/redis\.conf/);
  assert.ok(!pod.spec!.containers[0]!.env?.some((e) => e.name.startsWith('REDIS_USER_PASSWORD')), 'not in the server container');
  assert.ok(!sentinelPod(r, 'cache-sentinel-0', 'h').spec!.initContainers!.some((c) => c.env?.some((e) => e.name.startsWith('REDIS_USER_PASSWORD'))), 'nor in a Sentinel');
});

/** An API client over a map of Secrets, enough for observeTLS and writeTLS. */
type StoredSecret = { metadata: Record<string, unknown>; data?: Record<string, string> };
function fakeClient(secrets = new Map<string, StoredSecret>()): Pick<Client, 'find' | 'create' | 'replace'> & { secrets: Map<string, StoredSecret> } {
  let version = 0;
  const key = (k: { name: string } | string): string => (typeof k === 'string' ? k : k.name);
  const client = {
    secrets,
    find: (_type: unknown, k: { name: string } | string) => Promise.resolve(secrets.get(key(k)) as never),
    create: (_type: unknown, obj: { metadata: { name: string } }) => {
      if (secrets.has(obj.metadata.name)) return Promise.reject(new Error('exists'));
      secrets.set(obj.metadata.name, { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } });
      return Promise.resolve(obj as never);
    },
    replace: (_type: unknown, obj: { metadata: { name: string } }) => {
      secrets.set(obj.metadata.name, { ...obj, metadata: { ...obj.metadata, resourceVersion: String(++version) } });
      return Promise.resolve(obj as never);
    },
  };
  return client as unknown as Pick<Client, 'find' | 'create' | 'replace'> & { secrets: Map<string, StoredSecret> };
}

const contents = (s: { data?: Record<string, string> } | undefined, k: string): string => Buffer.from(s?.data?.[k] ?? '', 'base64').toString('utf8');

test('a new Redis gets a CA and a certificate it signed; nothing more is issued until the certificate nears its end', async () => {
  const client = fakeClient();
  const now = new Date('2026-01-01T00:00:00Z');
  const input = { client, redis, spec: applyDefaults({}), podsExist: false, clusterDomain: 'cluster.local', now };
  const first = await observeTLS(input);
  assert.deepEqual(first?.issue.map((i) => i.name), ['cache-ca', 'cache-tls']);
  await writeTLS({ ...input, fieldManager: 'test', signal: new AbortController().signal });
  const leaf = new X509Certificate(contents(client.secrets.get('cache-tls'), 'tls.crt'));
  const ca = new X509Certificate(contents(client.secrets.get('cache-ca'), 'tls.crt'));
  assert.ok(leaf.verify(ca.publicKey));
  assert.equal(contents(client.secrets.get('cache-tls'), 'ca.crt'), contents(client.secrets.get('cache-ca'), 'ca.crt'));
  assert.equal(leaf.checkHost('cache-2.cache-headless.ns.svc'), '*.cache-headless.ns.svc', 'every pod, present and future');
  const settled = await observeTLS({ ...input, podsExist: true });
  assert.deepEqual(settled?.issue, []);
  assert.equal(settled?.ca, contents(client.secrets.get('cache-ca'), 'ca.crt'));
  // 300 days on, less than a third of 365 is left: a new certificate from the same CA.
  const later = await observeTLS({ ...input, podsExist: true, now: new Date('2026-10-28T00:00:00Z') });
  assert.deepEqual(later?.issue, [{ name: 'cache-tls', reason: 'Expiring' }]);
});

test('a lost CA under running pods is reported, not replaced; a Secret of our names that is not ours is never used', async () => {
  const now = new Date('2026-01-01T00:00:00Z');
  const lost = await observeTLS({ client: fakeClient(), redis, spec: applyDefaults({}), podsExist: true, clusterDomain: 'cluster.local', now });
  assert.equal(lost?.problem?.reason, 'TLSSecretInvalid');
  assert.deepEqual(lost?.issue, []);
  const foreign = fakeClient(new Map([['cache-ca', { metadata: { name: 'cache-ca', labels: {} }, data: {} }]]));
  const seen = await observeTLS({ client: foreign, redis, spec: applyDefaults({}), podsExist: false, clusterDomain: 'cluster.local', now });
  assert.equal(seen?.problem?.reason, 'TLSSecretConflict');
  assert.match(seen?.problem?.message ?? '', /Secret cache-ca is in the way of the one the operator manages for Redis cache/);
  await assert.rejects(writeTLS({ client: foreign, redis, podsExist: false, clusterDomain: 'cluster.local', now, fieldManager: 'test', signal: new AbortController().signal }), /in the way/);
  assert.deepEqual(foreign.secrets.get('cache-ca')?.data, {}, 'left as it was');
  assert.equal(await observeTLS({ client: foreign, redis, spec: applyDefaults({ tls: { disabled: true } }), podsExist: false, clusterDomain: 'cluster.local', now }), undefined);
});
