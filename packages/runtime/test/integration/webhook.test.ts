// Admission webhooks against a real API server: the suite's localkube calls back to a WebhookServer on
// the host address, through configurations whose caBundle patchCaBundle sets.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
import assert from 'node:assert/strict';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { LocalKube, topology } from '@quorum/localkube';
import { Client } from '../../src/client/client.ts';
import { NotFoundError } from '../../src/client/errors.ts';
import { ConfigMaps, MutatingWebhookConfigurations, Namespaces, ValidatingWebhookConfigurations } from '../../src/client/resources.ts';
import type { KubeObject } from '../../src/object.ts';
import { generateCertificates, patchCaBundle, WebhookServer, writeCertificates } from '../../src/webhook/index.ts';
import { eventually as poll } from '../../src/testing/index.ts';

const eventually = <T>(what: string, probe: () => Promise<T | undefined | false>, timeoutMs = 60_000): Promise<T> => poll(what, probe, { timeoutMs, intervalMs: 250 });

type ConfigMap = KubeObject & { data?: Record<string, string> };
type WebhookConfiguration = KubeObject & { webhooks?: { clientConfig: { caBundle?: string } }[] };

/** The API server reaches the host here (see localkube's topology). */
const HOST = topology.CONTROL_PLANE_IP;
const DENIED = "data key 'bad' is not allowed";

let kube: LocalKube;
let client: Client;
let server: WebhookServer;
let certDir: string;
let caCert: string;
const suffix = `${Date.now().toString(36)}-${Math.floor(Math.random() * 1296).toString(36)}`;
const namespace = `webhook-${suffix}`;
const configName = `quorum-webhook-test-${suffix}`;

before(async () => {
  const stateDir = process.env['LOCALKUBE_STATE_DIR'];
  if (!stateDir) throw new Error('LOCALKUBE_STATE_DIR is not set: run integration tests through `npm test`');
  kube = await LocalKube.attach(stateDir);
  client = await Client.connect({ kubeconfig: kube.kubeconfig });
  await client.create(Namespaces, { metadata: { name: namespace } });

  const certs = await generateCertificates({ ipAddresses: [HOST] });
  caCert = certs.caCert;
  certDir = await mkdtemp(join(tmpdir(), 'webhook-it-'));
  await writeCertificates(certDir, certs);
  server = new WebhookServer({ port: 0, host: HOST, certFile: join(certDir, 'tls.crt'), keyFile: join(certDir, 'tls.key'), logger: () => {} });
  server.registerValidating<ConfigMap>('/validate', ({ object }) =>
    object?.data?.['bad'] !== undefined ? { allowed: false, message: DENIED } : { allowed: true },
  );
  server.registerMutating<ConfigMap>('/mutate', ({ object }) => {
    object.metadata.labels = { defaulted: 'yes', ...object.metadata.labels };
    object.data = { default: 'value', ...object.data };
    return object;
  });
  await server.start();

  const webhook = (path: string) => ({
    // No caBundle yet: patchCaBundle sets it, which is what this suite also tests.
    clientConfig: { url: `https://${HOST}:${server.port}${path}` },
    rules: [{ apiGroups: [''], apiVersions: ['v1'], operations: ['CREATE', 'UPDATE'], resources: ['configmaps'], scope: 'Namespaced' }],
    namespaceSelector: { matchLabels: { 'kubernetes.io/metadata.name': namespace } },
    sideEffects: 'None',
    admissionReviewVersions: ['v1'],
    failurePolicy: 'Fail',
    timeoutSeconds: 5,
  });
  await client.create(ValidatingWebhookConfigurations, { metadata: { name: configName }, webhooks: [{ name: 'reject-bad.webhook.quorum.test', ...webhook('/validate') }] });
  await client.create(MutatingWebhookConfigurations, {
    metadata: { name: configName },
    webhooks: [{ name: 'default.webhook.quorum.test', reinvocationPolicy: 'Never', ...webhook('/mutate') }],
  });
  await patchCaBundle(client, { validating: [configName], mutating: [configName] }, caCert);
});

after(async () => {
  // Cluster-scoped: they outlive the namespace, and with failurePolicy Fail a leftover would refuse writes.
  for (const type of [ValidatingWebhookConfigurations, MutatingWebhookConfigurations]) {
    await client?.delete(type, configName).catch((err: unknown) => {
      if (!(err instanceof NotFoundError)) throw err;
    });
  }
  await server?.stop();
  await client?.delete(Namespaces, namespace).catch(() => undefined);
  client?.close();
  kube?.client.close();
  if (certDir) await rm(certDir, { recursive: true, force: true });
});

test('patchCaBundle sets the CA in every webhook, and writes nothing when it is already set', async () => {
  const expected = Buffer.from(caCert).toString('base64');
  for (const type of [ValidatingWebhookConfigurations, MutatingWebhookConfigurations]) {
    const config = (await client.get(type, configName)) as WebhookConfiguration;
    assert.deepEqual(config.webhooks?.map((w) => w.clientConfig.caBundle), [expected]);
  }
  const before = (await client.get(ValidatingWebhookConfigurations, configName)).metadata.resourceVersion;
  await patchCaBundle(client, { validating: [configName] }, caCert);
  assert.equal((await client.get(ValidatingWebhookConfigurations, configName)).metadata.resourceVersion, before);
});

test('the validating webhook rejects a ConfigMap with data key bad', async () => {
  const bad: ConfigMap = { metadata: { name: 'bad', namespace }, data: { bad: 'x' } };
  // The API server picks up new configurations asynchronously; a dry run calls the webhooks without storing.
  await eventually('the validating webhook to be called', async () => {
    try {
      await client.create(ConfigMaps, bad, { dryRun: true });
      return false;
    } catch (err) {
      if ((err as Error).message.includes(DENIED)) return true;
      throw err;
    }
  });
  await assert.rejects(client.create(ConfigMaps, bad), (err: Error) => err.message.includes(DENIED));
  assert.equal(await client.find(ConfigMaps, { namespace, name: 'bad' }), undefined);
});

test('the mutating webhook defaults a label and a data key, and updates are validated too', async () => {
  await eventually('the mutating webhook to be called', async () => {
    const dryRun = await client.create(ConfigMaps, { metadata: { name: 'probe', namespace }, data: {} }, { dryRun: true });
    return dryRun.metadata.labels?.['defaulted'] === 'yes';
  });
  await client.create(ConfigMaps, { metadata: { name: 'good', namespace, labels: { app: 'test' } }, data: { own: 'data' } });
  const stored = await client.get(ConfigMaps, { namespace, name: 'good' });
  assert.deepEqual(stored.metadata.labels, { app: 'test', defaulted: 'yes' });
  assert.deepEqual(stored.data, { own: 'data', default: 'value' });

  await assert.rejects(client.mergePatch(ConfigMaps, { namespace, name: 'good' }, { data: { bad: 'x' } }), (err: Error) => err.message.includes(DENIED));
  const kept = await client.create(ConfigMaps, { metadata: { name: 'explicit', namespace, labels: { defaulted: 'no' } }, data: { default: 'mine' } });
  assert.equal(kept.metadata.labels?.['defaulted'], 'no');
  assert.equal(kept.data?.['default'], 'mine');
});
