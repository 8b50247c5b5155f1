// The storage addons: a real MinIO, fake-gcs-server and Azurite in the cluster, each with its bucket, its
// credentials Secret (copied into a namespace of the test's), idempotent to enable again, reachable from the
// host through addonURL and from pods in other namespaces by the short `.svc` name, and stoppable (a storage
// outage) without losing what was stored.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive addons/s3 addons/gcs addons/azure
// @timeout 30m: three outages of up to 15 minutes each are allowed for, on a loaded machine
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { GetObjectCommand, ListObjectsV2Command, PutObjectCommand, S3Client } from '@aws-sdk/client-s3';
import { BlobServiceClient } from '@azure/storage-blob';
import { Storage } from '@google-cloud/storage';
import { STORAGE_BUCKET, STORAGE_NAMESPACE, azuriteImage, type KubeList, type KubeObject, type LocalKube, type StorageAddonName } from '../../src/index.ts';
import { eventually, podReady, useCluster, type Pod } from '../support.ts';

const suite = useCluster('storage-addons');

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

interface Deployment extends KubeObject {
  metadata: KubeObject['metadata'] & { generation?: number };
  spec: { replicas: number; strategy: { type: string } };
}

const decode = (secret: Secret): Record<string, string> =>
  Object.fromEntries(Object.entries(secret.data ?? {}).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));

const EXPECTED = {
  s3: { endpoint: 'http://s3.localkube-storage.svc:9000', secretName: 's3-credentials', keys: ['accessKeyId', 'secretAccessKey'] },
  gcs: { endpoint: 'http://gcs.localkube-storage.svc:4443', secretName: 'gcs-credentials', keys: [] },
  azure: { endpoint: 'http://azure.localkube-storage.svc:10000/devstoreaccount1', secretName: 'azure-credentials', keys: ['connectionString'] },
} as const;

/** The one object-store operation the tests need, through each SDK from the host: put, list, get. */
interface HostStore {
  put(key: string, body: string): Promise<void>;
  list(): Promise<string[]>;
  get(key: string): Promise<string>;
  close(): void;
}

// One try per call, bounded: right after the server's pod goes, its Service may still send a connection to
// the gone pod's address, which never answers.
const TRY_TIMEOUT_MS = 10_000;

function hostStore(name: StorageAddonName, url: string, secret: Record<string, string>): HostStore {
  switch (name) {
    case 's3': {
      const s3 = new S3Client({
        endpoint: url,
        region: 'us-east-1',
        forcePathStyle: true,
        requestChecksumCalculation: 'WHEN_REQUIRED',
        responseChecksumValidation: 'WHEN_REQUIRED',
        maxAttempts: 1,
        requestHandler: { connectionTimeout: TRY_TIMEOUT_MS, requestTimeout: TRY_TIMEOUT_MS, throwOnRequestTimeout: true },
        credentials: { accessKeyId: secret['accessKeyId']!, secretAccessKey: secret['secretAccessKey']! },
      });
      return {
        put: async (key, body) => void (await s3.send(new PutObjectCommand({ Bucket: STORAGE_BUCKET, Key: key, Body: body }))),
        list: async () => ((await s3.send(new ListObjectsV2Command({ Bucket: STORAGE_BUCKET }))).Contents ?? []).map((o) => o.Key!),
        get: async (key) => (await s3.send(new GetObjectCommand({ Bucket: STORAGE_BUCKET, Key: key }))).Body!.transformToString(),
        close: () => s3.destroy(),
      };
    }
    case 'gcs': {
      const bucket = new Storage({ apiEndpoint: url, projectId: 'test', retryOptions: { autoRetry: false }, timeout: TRY_TIMEOUT_MS }).bucket(STORAGE_BUCKET);
      return {
        // resumable: true goes through the upload session whose URL the server hands back.
        put: async (key, body) => void (await bucket.file(key).save(body, { resumable: true })),
        list: async () => (await bucket.getFiles())[0].map((f) => f.name),
        get: async (key) => (await bucket.file(key).download())[0].toString(),
        close: () => undefined,
      };
    }
    case 'azure': {
      // The Secret's connection string names the in-cluster endpoint; the host uses the same account and key.
      const connection = secret['connectionString']!.replace(/BlobEndpoint=[^;]+/, `BlobEndpoint=${url}`);
      const container = BlobServiceClient.fromConnectionString(connection, { retryOptions: { maxTries: 1, tryTimeoutInMs: TRY_TIMEOUT_MS } }).getContainerClient(STORAGE_BUCKET);
      return {
        // tryTimeoutInMs does not bound a request on a connection whose peer vanished; a signal does.
        put: async (key, body) => void (await container.getBlockBlobClient(key).upload(body, Buffer.byteLength(body), { abortSignal: AbortSignal.timeout(TRY_TIMEOUT_MS) })),
        list: async () => {
          const names: string[] = [];
          for await (const blob of container.listBlobsFlat({ abortSignal: AbortSignal.timeout(TRY_TIMEOUT_MS) })) names.push(blob.name);
          return names;
        },
        get: async (key) => (await container.getBlobClient(key).downloadToBuffer(0, undefined, { abortSignal: AbortSignal.timeout(TRY_TIMEOUT_MS) })).toString(),
        close: () => undefined,
      };
    }
  }
}

const secretIn = (kube: LocalKube, namespace: string, name: string): Promise<Secret | undefined> => kube.client.find<Secret>(`/api/v1/namespaces/${namespace}/secrets/${name}`);
const deployment = (kube: LocalKube, name: StorageAddonName): Promise<Deployment> => kube.client.get<Deployment>(`/apis/apps/v1/namespaces/${STORAGE_NAMESPACE}/deployments/${name}`);
const serverPods = async (kube: LocalKube, name: StorageAddonName): Promise<Pod[]> =>
  (await kube.client.get<KubeList<Pod>>(`/api/v1/namespaces/${STORAGE_NAMESPACE}/pods?labelSelector=${encodeURIComponent(`app.kubernetes.io/name=${name}`)}`)).items;

for (const name of ['s3', 'gcs', 'azure'] as const) {
  test(`addon ${name}: a real server with its bucket and Secret, idempotent, stoppable without losing data`, { timeout: 900_000 }, async (t) => {
    const { kube, namespace } = suite;
    const expected = EXPECTED[name];
    let lapStart = performance.now();
    const lap = (what: string): void => {
      t.diagnostic(`${what}: ${((performance.now() - lapStart) / 1000).toFixed(1)}s`);
      lapStart = performance.now();
    };

    const enabled = await kube.enableAddon(name, { namespaces: [namespace] });
    assert.deepEqual(enabled, { endpoint: expected.endpoint, secretName: expected.secretName, bucket: STORAGE_BUCKET });
    lap('enable');

    // One pod of a Recreate Deployment, on a PVC of the default StorageClass, behind its Service.
    const server = await deployment(kube, name);
    assert.equal(server.spec.replicas, 1);
    assert.equal(server.spec.strategy.type, 'Recreate');
    const claim = await kube.client.get<{ spec: { storageClassName: string }; status: { phase: string } }>(`/api/v1/namespaces/${STORAGE_NAMESPACE}/persistentvolumeclaims/${name}-data`);
    assert.equal(claim.spec.storageClassName, 'local');
    assert.equal(claim.status.phase, 'Bound');
    const [pod, ...others] = await serverPods(kube, name);
    assert.ok(pod && podReady(pod) && others.length === 0, `one ready ${name} pod`);

    // The Secret, with exactly the keys a backup reads, in localkube-storage and copied into the test's namespace.
    const original = await secretIn(kube, STORAGE_NAMESPACE, expected.secretName);
    const copy = await secretIn(kube, namespace, expected.secretName);
    assert.ok(original && copy, 'the Secret is in localkube-storage and in the --namespace');
    const credentials = decode(original);
    assert.deepEqual(Object.keys(credentials).sort(), [...expected.keys].sort());
    assert.deepEqual(decode(copy), credentials, 'the copy holds the same credentials');
    if (name === 'azure') assert.match(credentials['connectionString']!, /AccountName=devstoreaccount1;.*BlobEndpoint=http:\/\/azure\.localkube-storage\.svc:10000\/devstoreaccount1;/);

    // From the host, with the official SDK: the bucket exists (it is empty or holds only what earlier runs put)
    // and takes an object.
    const url = await kube.addonURL(name);
    const store = hostStore(name, url, credentials);
    try {
      const key = `storage-addons/${namespace}.txt`;
      await store.put(key, `stored in ${name}`);
      assert.ok((await store.list()).includes(key), `${key} is listed in ${STORAGE_BUCKET}`);
      lap('put and list from the host');

      // Enabling again changes nothing: same Deployment generation, same pod, same credentials, same Secret version.
      const again = await kube.enableAddon(name, { namespaces: [namespace] });
      assert.deepEqual(again, enabled);
      lap('enable again');
      assert.equal((await deployment(kube, name)).metadata.generation, server.metadata.generation);
      assert.deepEqual((await serverPods(kube, name)).map((p) => p.metadata.uid), [pod.metadata.uid]);
      const originalAfter = await secretIn(kube, STORAGE_NAMESPACE, expected.secretName);
      assert.equal(originalAfter?.metadata.resourceVersion, original.metadata.resourceVersion, 'the Secret was not rewritten');
      assert.equal((await secretIn(kube, namespace, expected.secretName))?.metadata.resourceVersion, copy.metadata.resourceVersion);

      // A storage outage: no pod, no answer; then the server comes back with what it had stored.
      await kube.stopAddon(name);
      lap('stop');
      assert.equal((await deployment(kube, name)).spec.replicas, 0);
      assert.deepEqual(await serverPods(kube, name), []);
      // A new client, as a backup started during the outage would be, is refused at once. (A client that kept
      // a connection to the gone pod waits instead, until its own timeout: no pod is there to reset it.)
      const during = hostStore(name, url, credentials);
      const asked = performance.now();
      await assert.rejects(during.list(), `${name} does not answer while stopped`).finally(() => during.close());
      assert.ok(performance.now() - asked < TRY_TIMEOUT_MS / 2, `${name} refused the connection rather than letting it time out`);
      lap('refused while stopped');
      await kube.startAddon(name);
      lap('start');
      assert.equal((await deployment(kube, name)).spec.replicas, 1);
      const restarted = await eventually(`${key} listed after the restart`, async () => ((await store.list()).includes(key) ? true : undefined));
      assert.ok(restarted);
      assert.equal(await store.get(key), `stored in ${name}`);
      lap('listed and read after the restart');
    } finally {
      store.close();
    }
  });
}

test('pods in another namespace reach every addon by its short .svc name', { timeout: 300_000 }, async () => {
  const { kube, namespace } = suite;
  // Azurite's image has a Node: its fetch resolves each endpoint through the pod's DNS search path, and
  // prints what answered.
  const script = `
    const endpoints = ${JSON.stringify(Object.fromEntries(Object.entries(EXPECTED).map(([n, e]) => [n, e.endpoint])))};
    const answers = {};
    for (const [name, url] of Object.entries(endpoints)) {
      try {
        const res = await fetch(name === 'gcs' ? url + '/storage/v1/b/${STORAGE_BUCKET}' : url, { signal: AbortSignal.timeout(10000) });
        answers[name] = { status: res.status, server: res.headers.get('server'), body: await res.text() };
      } catch (err) { answers[name] = { error: String(err.cause ?? err) }; }
    }
    console.log(JSON.stringify(answers));`;
  await kube.client.create(`/api/v1/namespaces/${namespace}/pods`, {
    apiVersion: 'v1',
    kind: 'Pod',
    metadata: { name: 'storage-client' },
    spec: {
      restartPolicy: 'Never',
      securityContext: { runAsNonRoot: true, runAsUser: 65532, seccompProfile: { type: 'RuntimeDefault' } },
      containers: [
        {
          name: 'client',
          image: azuriteImage,
          imagePullPolicy: 'IfNotPresent',
          command: ['/usr/local/bin/node', '--input-type=module', '-e', script],
          securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
        },
      ],
    },
  });
  const finished = await eventually('the client pod to finish', async () => {
    const p = await kube.client.get<Pod>(`/api/v1/namespaces/${namespace}/pods/storage-client`);
    return p.status?.phase === 'Succeeded' || p.status?.phase === 'Failed' ? p : undefined;
  }, { timeoutMs: 120_000 });
  const log = await kube.client.request<string>('GET', `/api/v1/namespaces/${namespace}/pods/storage-client/log`);
  assert.equal(finished.status?.phase, 'Succeeded', log);
  type Answer = { status?: number; server?: string | null; body?: string; error?: string };
  const answers = (typeof log === 'string' ? JSON.parse(log.trim().split('\n').at(-1)!) : log) as Record<StorageAddonName, Answer>;
  // Each server answered over HTTP. Without credentials MinIO and Azurite refuse, each in its own words;
  // fake-gcs-server, which checks none, returns the bucket.
  assert.equal(answers.s3.server, 'MinIO', JSON.stringify(answers.s3));
  assert.equal(answers.s3.status, 403);
  assert.match(answers.azure.server ?? '', /^Azurite-Blob\/3\.37\.0/, JSON.stringify(answers.azure));
  assert.equal(answers.gcs.status, 200, JSON.stringify(answers.gcs));
  assert.equal((JSON.parse(answers.gcs.body ?? '{}') as { name?: string }).name, STORAGE_BUCKET);
});

test('disabling an addon removes its server, data and every copy of its Secret; enabling makes a fresh one', { timeout: 600_000 }, async () => {
  const { kube, namespace } = suite;
  const found = async (path: string): Promise<boolean> => (await kube.client.find(path)) !== undefined;
  await kube.enableAddon('gcs', { namespaces: [namespace] });
  const url = await kube.addonURL('gcs');
  const before = hostStore('gcs', url, {});
  await before.put('disable/left-behind.txt', 'gone with the volume');

  await kube.disableAddon('gcs');
  for (const path of [
    `/apis/apps/v1/namespaces/${STORAGE_NAMESPACE}/deployments/gcs`,
    `/api/v1/namespaces/${STORAGE_NAMESPACE}/services/gcs`,
    `/api/v1/namespaces/${STORAGE_NAMESPACE}/persistentvolumeclaims/gcs-data`,
    `/api/v1/namespaces/${STORAGE_NAMESPACE}/secrets/gcs-credentials`,
    `/api/v1/namespaces/${namespace}/secrets/gcs-credentials`,
  ]) {
    assert.equal(await eventually(`${path} deleted`, async () => !(await found(path))), true);
  }
  await assert.rejects(kube.addonURL('gcs'), /not enabled/);
  await assert.rejects(kube.stopAddon('gcs'), /not enabled/);

  await kube.enableAddon('gcs');
  const after = hostStore('gcs', await kube.addonURL('gcs'), {});
  assert.deepEqual(await after.list(), [], 'a fresh server has an empty bucket');
});
