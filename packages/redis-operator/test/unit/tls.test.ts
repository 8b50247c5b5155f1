// TLS of a Redis (src/tls/certificates.ts, render/): the names the served certificate covers, what the operator
// issues and when (a CA only while no pod trusts one; a Secret of its names that is not its own is never used or
// replaced), redis.conf and sentinel.conf with TLS only on their ports, the pods that mount and probe it, and the
// Secrets through a CA rotation and a requested renewal.
import assert from 'node:assert/strict';
import { X509Certificate } from 'node:crypto';
import { test } from 'node:test';
import { pemCertificates } from '@quorum/kit';
import type { Client } from '@quorum/runtime';
import { applyDefaults } from '../../src/api/defaults.ts';
import { redisConf, sentinelConf } from '../../src/render/config.ts';
import { instancePod, podHashes, sentinelPod, type Rendering } from '../../src/render/objects.ts';
import { observeTLS, rotateCA, servingSANs, writeTLS, type RotationTokens } from '../../src/tls/certificates.ts';

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

test('a CA rotation, step by step in the Secrets: both CAs trusted, then the certificate signed by the new one, then the old one dropped; each step taken once', async () => {
  const client = fakeClient();
  const start = new Date('2026-01-01T00:00:00Z');
  const signal = new AbortController().signal;
  const base = { client, redis, spec: applyDefaults({}), clusterDomain: 'cluster.local' };
  await writeTLS({ ...base, podsExist: false, now: start, fieldManager: 'test', signal });
  const oldCA = new X509Certificate(contents(client.secrets.get('cache-ca'), 'tls.crt'));
  const bundleOf = (secret: string): string[] => pemCertificates(contents(client.secrets.get(secret), 'ca.crt')).map((p) => new X509Certificate(p).fingerprint256).sort();
  const leaf = (): X509Certificate => new X509Certificate(contents(client.secrets.get('cache-tls'), 'tls.crt'));
  const at = (now: Date, tokens: RotationTokens = { ca: 't1' }) => observeTLS({ ...base, podsExist: true, now, tokens });
  /** One rotation step, then the certificate the observation says must follow it. */
  const step = async (s: 'TrustNew' | 'Reissue' | 'DropOld', now: Date): Promise<void> => {
    assert.equal(await rotateCA({ client, redis, step: s, token: 't1', now, fieldManager: 'test', signal }), true);
    assert.equal(await rotateCA({ client, redis, step: s, token: 't1', now, fieldManager: 'test', signal }), false, `${s} again changes nothing`);
    assert.deepEqual((await at(now))?.issue, [{ name: 'cache-tls', reason: 'IssuerChanged' }], `the certificate follows ${s}`);
    await writeTLS({ ...base, podsExist: true, now, fieldManager: 'test', signal });
    assert.deepEqual((await at(now))?.issue, []);
  };

  assert.deepEqual((await at(start))?.caRotation, { phase: 'Start', why: 'redis.quorum.dev/rotate-ca is t1' });
  assert.equal((await at(start, { ca: undefined }))?.caRotation, undefined, 'nothing asked, nothing due');
  const t1 = new Date('2026-01-02T00:00:00Z');
  await step('TrustNew', t1);
  assert.deepEqual((await at(t1))?.caRotation, { phase: 'TrustNew', why: 'under way', since: t1.toISOString() });
  assert.equal(bundleOf('cache-tls').length, 2, 'clients read both CAs');
  assert.deepEqual(bundleOf('cache-tls'), bundleOf('cache-ca'));
  assert.ok(leaf().verify(oldCA.publicKey), 'still signed by the old CA');

  const t2 = new Date('2026-01-09T00:00:00Z');
  await step('Reissue', t2);
  const newCA = new X509Certificate(contents(client.secrets.get('cache-ca'), 'tls.crt'));
  assert.notEqual(newCA.fingerprint256, oldCA.fingerprint256);
  assert.deepEqual((await at(t2))?.caRotation, { phase: 'Reissue', why: 'under way', since: t2.toISOString() });
  assert.ok(leaf().verify(newCA.publicKey), 'signed by the new CA');
  assert.equal(bundleOf('cache-tls').length, 2, 'both still trusted');

  await step('DropOld', t2);
  assert.deepEqual(bundleOf('cache-tls'), [newCA.fingerprint256], 'the old CA is gone from the bundle');
  assert.ok(leaf().verify(newCA.publicKey));
  assert.equal((await at(t2))?.caRotation, undefined, 't1 was answered: no other rotation');
  assert.equal((await at(t2, { ca: 't2' }))?.caRotation?.phase, 'Start', 'a new value asks for another');
  // Seven years on, less than a third of the new CA's ten years is left: a rotation is due by itself.
  assert.match((await at(new Date('2033-02-01T00:00:00Z')))?.caRotation?.why ?? '', /the CA nears its end/);
});

test('redis.quorum.dev/rotate-certificates: a new value issues the certificate again from the same CA, once, recorded on the Secret', async () => {
  const client = fakeClient();
  const now = new Date('2026-01-01T00:00:00Z');
  const signal = new AbortController().signal;
  const base = { client, redis, spec: applyDefaults({}), clusterDomain: 'cluster.local', podsExist: true, now };
  await writeTLS({ ...base, podsExist: false, fieldManager: 'test', signal });
  const before = contents(client.secrets.get('cache-tls'), 'tls.crt');
  const tokens = { certificates: 'r1' };
  assert.deepEqual((await observeTLS({ ...base, tokens }))?.issue, [{ name: 'cache-tls', reason: 'RotationRequested' }]);
  await writeTLS({ ...base, tokens, fieldManager: 'test', signal });
  assert.notEqual(contents(client.secrets.get('cache-tls'), 'tls.crt'), before);
  assert.equal((client.secrets.get('cache-tls')?.metadata['annotations'] as Record<string, string> | undefined)?.['redis.quorum.dev/rotate-certificates'], 'r1');
  assert.deepEqual((await observeTLS({ ...base, tokens }))?.issue, []);
  assert.ok(new X509Certificate(contents(client.secrets.get('cache-tls'), 'tls.crt')).verify(new X509Certificate(contents(client.secrets.get('cache-ca'), 'tls.crt')).publicKey));
});
