// The storage addons: a real object-store server in the cluster for backups to talk to, with a bucket and
// a credentials Secret. `s3` is MinIO, `gcs` is fake-gcs-server, `azure` is Azurite (blob service), each a
// Deployment of one pod with its data on a PVC of the default `local` StorageClass, behind a Service in the
// `localkube-storage` namespace. Everything is applied with server-side apply, so enabling twice changes
// nothing; the bucket is created from the host through the Service's cluster IP (kube-proxy's rules make
// it reachable from the host, as etcd clients in the operator's tests reach etcd), with the official SDKs.
import { randomBytes } from 'node:crypto';
import { createConnection } from 'node:net';
import { CreateBucketCommand, HeadBucketCommand, S3Client, S3ServiceException } from '@aws-sdk/client-s3';
import { BlobServiceClient, type ContainerClient } from '@azure/storage-blob';
import { Storage } from '@google-cloud/storage';
import { KubeApiError, type KubeClient, type KubeList, type KubeObject } from '../client/kube.ts';
import { STORAGE_CLASS } from '../cluster/provisioner.ts';
import { progress } from '../progress.ts';
import { eventually } from '../wait.ts';
import { NONROOT_UID, storageServerImages, type StorageServerImage } from './servers.ts';

export type StorageAddonName = 's3' | 'gcs' | 'azure';
export const STORAGE_ADDONS: readonly StorageAddonName[] = ['s3', 'gcs', 'azure'];
export const isStorageAddonName = (name: string): name is StorageAddonName => (STORAGE_ADDONS as readonly string[]).includes(name);

/** The namespace every storage server runs in. */
export const STORAGE_NAMESPACE = 'localkube-storage';
/** The bucket (S3, GCS) or container (Azure) each addon creates. */
export const STORAGE_BUCKET = 'quorum';

/** What an enabled addon offers to pods. */
export interface StorageAddon {
  /** The server's URL inside the cluster, e.g. `http://s3.localkube-storage.svc:9000`. */
  endpoint: string;
  /** The credentials Secret, in `localkube-storage` and in every namespace it was copied into. */
  secretName: string;
  /** The bucket (S3, GCS) or blob container (Azure). */
  bucket: string;
}

export interface EnableStorageAddonOptions {
  /** Namespaces to copy the credentials Secret into (created if missing). */
  namespaces?: readonly string[];
}

/** What the addons need of a running cluster: its API and a way to import an image into every node. */
export interface StorageCluster {
  client: KubeClient;
  loadImage(archive: string): Promise<string>;
}

// Azurite's one built-in account (documented by Microsoft for the emulator; not a secret).
const AZURITE_ACCOUNT = 'devstoreaccount1';
const AZURITE_KEY = 'Eby8vdM02xNOcqFlqUwJPLlmEtlCDXJ1OUzFT50uSRZ6IFsuFq2UVErCz4I6tq/K1SZFPTOtr/KBHBeksoGMGw==';
const azureConnectionString = (blobEndpoint: string): string =>
  `DefaultEndpointsProtocol=http;AccountName=${AZURITE_ACCOUNT};AccountKey=${AZURITE_KEY};BlobEndpoint=${blobEndpoint};`;

const MANAGED_BY = { 'app.kubernetes.io/managed-by': 'localkube' };
const ADDON_LABEL = 'localkube.quorum.dev/storage-addon';
const labelsOf = (name: StorageAddonName): Record<string, string> => ({ 'app.kubernetes.io/name': name, ...MANAGED_BY });
const selectorOf = (name: StorageAddonName): Record<string, string> => ({ 'app.kubernetes.io/name': name, 'app.kubernetes.io/managed-by': 'localkube' });

interface AddonDefinition {
  port: number;
  /** What follows host:port in the endpoint (Azurite addresses the account as the first path segment). */
  path: string;
  server: StorageServerImage;
  secretName: string;
  /** The Secret's data: kept from `existing` where it is already there, so a re-enable changes nothing. */
  secretData(existing: Record<string, string> | undefined): Record<string, string>;
  container(): Record<string, unknown>;
  resources: { requests: Record<string, string>; limits: Record<string, string> };
  readinessProbe: Record<string, unknown>;
  /** Whether the bucket exists, asked through `url` (reachable from the host); rejects when the server does not answer. */
  bucketExists(url: string, secret: Record<string, string>): Promise<boolean>;
  /** Creates the bucket through `url`; a bucket that is already there is not an error. */
  createBucket(url: string, secret: Record<string, string>): Promise<void>;
}

const serviceHost = (name: StorageAddonName): string => `${name}.${STORAGE_NAMESPACE}.svc`;

// The SDK clients: one bounded try per call, and the callers' polls do the retrying. (A Service whose pod
// just went may still route a connection to the gone pod's address for a moment, which never answers.)
const REQUEST_TIMEOUT_MS = 10_000;
const s3Client = (url: string, secret: Record<string, string>): S3Client =>
  new S3Client({
    endpoint: url,
    region: 'us-east-1',
    forcePathStyle: true,
    requestChecksumCalculation: 'WHEN_REQUIRED',
    maxAttempts: 1,
    requestHandler: { connectionTimeout: REQUEST_TIMEOUT_MS, requestTimeout: REQUEST_TIMEOUT_MS, throwOnRequestTimeout: true },
    credentials: { accessKeyId: secret['accessKeyId'] ?? '', secretAccessKey: secret['secretAccessKey'] ?? '' },
  });
// A custom apiEndpoint makes the SDK skip authentication (useAuthWithCustomEndpoint defaults to false).
const gcsClient = (url: string): Storage => new Storage({ apiEndpoint: url, projectId: 'localkube', retryOptions: { autoRetry: false }, timeout: REQUEST_TIMEOUT_MS });
const azureContainer = (url: string): ContainerClient =>
  BlobServiceClient.fromConnectionString(azureConnectionString(url), { retryOptions: { maxTries: 1, tryTimeoutInMs: REQUEST_TIMEOUT_MS } }).getContainerClient(STORAGE_BUCKET);

const DEFINITIONS: Record<StorageAddonName, AddonDefinition> = {
  s3: {
    port: 9000,
    path: '',
    server: storageServerImages.minio,
    secretName: 's3-credentials',
    // MinIO's root credentials, random on first enable; accessKeyId/secretAccessKey is what backups read.
    secretData: (existing) => ({
      accessKeyId: existing?.['accessKeyId'] ?? `localkube${randomBytes(8).toString('hex')}`,
      secretAccessKey: existing?.['secretAccessKey'] ?? randomBytes(24).toString('base64url'),
    }),
    container: () => ({
      args: ['server', '/data', '--address', ':9000', '--certs-dir', '/tmp/certs'],
      env: [
        { name: 'MINIO_ROOT_USER', valueFrom: { secretKeyRef: { name: 's3-credentials', key: 'accessKeyId' } } },
        { name: 'MINIO_ROOT_PASSWORD', valueFrom: { secretKeyRef: { name: 's3-credentials', key: 'secretAccessKey' } } },
        // The web console would listen on a second, random port; nothing here uses it.
        { name: 'MINIO_BROWSER', value: 'off' },
      ],
    }),
    resources: { requests: { cpu: '100m', memory: '256Mi' }, limits: { memory: '1Gi' } },
    readinessProbe: { httpGet: { path: '/minio/health/ready', port: 9000 }, periodSeconds: 2, failureThreshold: 3 },
    async bucketExists(url, secret) {
      const s3 = s3Client(url, secret);
      try {
        await s3.send(new HeadBucketCommand({ Bucket: STORAGE_BUCKET }));
        return true;
      } catch (err) {
        if (err instanceof S3ServiceException && err.$metadata.httpStatusCode === 404) return false;
        throw err;
      } finally {
        s3.destroy();
      }
    },
    async createBucket(url, secret) {
      const s3 = s3Client(url, secret);
      try {
        await s3.send(new CreateBucketCommand({ Bucket: STORAGE_BUCKET }));
      } catch (err) {
        // A create that raced with another enable (or whose answer was lost) finds the bucket made.
        if (!(err instanceof S3ServiceException && err.name === 'BucketAlreadyOwnedByYou')) throw err;
      } finally {
        s3.destroy();
      }
    },
  },
  gcs: {
    port: 4443,
    path: '',
    server: storageServerImages.fakeGcsServer,
    secretName: 'gcs-credentials',
    // fake-gcs-server checks no credentials, so there is no service account key to give: the Secret exists
    // (a backup's credentialsSecret must name one) and is empty.
    secretData: () => ({}),
    container: () => ({
      args: [
        '-scheme', 'http',
        '-port', '4443',
        '-backend', 'filesystem',
        '-filesystem-root', '/data',
        '-public-host', `${serviceHost('gcs')}:4443`,
        // The URL in objects' selfLink and mediaLink. (Resumable upload sessions point at the Host header the
        // client used, so they work from the host through the cluster IP as well as from pods.)
        '-external-url', `http://${serviceHost('gcs')}:4443`,
      ],
    }),
    resources: { requests: { cpu: '50m', memory: '64Mi' }, limits: { memory: '1Gi' } },
    readinessProbe: { httpGet: { path: '/_internal/healthcheck', port: 4443 }, periodSeconds: 2, failureThreshold: 3 },
    async bucketExists(url) {
      const [exists] = await gcsClient(url).bucket(STORAGE_BUCKET).exists();
      return exists;
    },
    async createBucket(url) {
      try {
        await gcsClient(url).createBucket(STORAGE_BUCKET);
      } catch (err) {
        if ((err as { code?: number }).code !== 409) throw err;
      }
    },
  },
  azure: {
    port: 10000,
    path: `/${AZURITE_ACCOUNT}`,
    server: storageServerImages.azurite,
    secretName: 'azure-credentials',
    secretData: () => ({ connectionString: azureConnectionString(`http://${serviceHost('azure')}:10000/${AZURITE_ACCOUNT}`) }),
    container: () => ({
      args: [
        '--blobHost', '0.0.0.0',
        '--blobPort', '10000',
        '--location', '/data',
        '--skipApiVersionCheck',
        '--loose',
        // Otherwise Azurite takes the account name from the first label of a host name with dots, and
        // `azure.localkube-storage.svc` would address an account named `azure`.
        '--disableProductStyleUrl',
        // Telemetry would try to reach Microsoft; nothing may leave the machine.
        '--disableTelemetry',
      ],
    }),
    resources: { requests: { cpu: '100m', memory: '128Mi' }, limits: { memory: '1Gi' } },
    readinessProbe: { tcpSocket: { port: 10000 }, periodSeconds: 2, failureThreshold: 3 },
    // tryTimeoutInMs does not bound a request on a kept-alive connection whose pod vanished; a signal does.
    bucketExists: (url) => azureContainer(url).exists({ abortSignal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) }),
    async createBucket(url) {
      await azureContainer(url).createIfNotExists({ abortSignal: AbortSignal.timeout(REQUEST_TIMEOUT_MS) });
    },
  },
};

/** The in-cluster endpoint of an addon (Services resolve by their short `.svc` name through the pods' DNS search path). */
export const storageEndpoint = (name: StorageAddonName): string => `http://${serviceHost(name)}:${DEFINITIONS[name].port}${DEFINITIONS[name].path}`;

// ---- the objects ----

const nsPath = (ns: string): string => `/api/v1/namespaces/${ns}`;
const deploymentPath = (name: StorageAddonName): string => `/apis/apps/v1/namespaces/${STORAGE_NAMESPACE}/deployments/${name}`;

interface Secret extends KubeObject {
  data?: Record<string, string>;
}

interface Deployment extends KubeObject {
  metadata: KubeObject['metadata'] & { generation?: number };
  spec: { replicas?: number; template?: { metadata?: { annotations?: Record<string, string>; [field: string]: unknown }; [field: string]: unknown }; [field: string]: unknown };
  status?: { observedGeneration?: number; replicas?: number; updatedReplicas?: number; availableReplicas?: number };
}

interface Service extends KubeObject {
  spec: { clusterIP?: string; [field: string]: unknown };
}

function secretObject(name: StorageAddonName, namespace: string, data: Record<string, string>): Secret {
  return {
    apiVersion: 'v1',
    kind: 'Secret',
    metadata: {
      name: DEFINITIONS[name].secretName,
      namespace,
      labels: { ...MANAGED_BY, [ADDON_LABEL]: name },
      annotations: { 'localkube.quorum.dev/endpoint': storageEndpoint(name), 'localkube.quorum.dev/bucket': STORAGE_BUCKET },
    },
    type: 'Opaque',
    data: Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v).toString('base64')])),
  };
}

function claimObject(name: StorageAddonName): KubeObject {
  return {
    apiVersion: 'v1',
    kind: 'PersistentVolumeClaim',
    metadata: { name: `${name}-data`, namespace: STORAGE_NAMESPACE, labels: labelsOf(name) },
    spec: { storageClassName: STORAGE_CLASS, accessModes: ['ReadWriteOnce'], resources: { requests: { storage: '2Gi' } } },
  };
}

// What the pod's image is made from (StorageServerImage.inputs): an image rebuilt under the same tag (a new
// Node, a changed dependency) changes the pod template, and so replaces the running pod; the same inputs
// on a running pod tell a re-enable that the image is in place.
const IMAGE_INPUTS_ANNOTATION = 'localkube.quorum.dev/image-inputs';

function deploymentObject(name: StorageAddonName, replicas: number, imageInputs: string): Deployment {
  const addon = DEFINITIONS[name];
  return {
    apiVersion: 'apps/v1',
    kind: 'Deployment',
    metadata: { name, namespace: STORAGE_NAMESPACE, labels: labelsOf(name) },
    spec: {
      replicas,
      selector: { matchLabels: selectorOf(name) },
      // One pod owns the data volume (ReadWriteOnce, pinned to its node): the old pod goes before the new one.
      strategy: { type: 'Recreate' },
      template: {
        metadata: { labels: labelsOf(name), annotations: { [IMAGE_INPUTS_ANNOTATION]: imageInputs } },
        spec: {
          automountServiceAccountToken: false,
          enableServiceLinks: false,
          terminationGracePeriodSeconds: 10,
          // Restricted Pod Security: the namespace enforces it. fsGroup makes the new volume writable by the user.
          securityContext: { runAsNonRoot: true, runAsUser: NONROOT_UID, runAsGroup: NONROOT_UID, fsGroup: NONROOT_UID, seccompProfile: { type: 'RuntimeDefault' } },
          containers: [
            {
              name: 'server',
              image: addon.server.name,
              imagePullPolicy: 'IfNotPresent',
              ...addon.container(),
              ports: [{ name: 'http', containerPort: addon.port, protocol: 'TCP' }],
              resources: addon.resources,
              readinessProbe: addon.readinessProbe,
              securityContext: { allowPrivilegeEscalation: false, readOnlyRootFilesystem: true, capabilities: { drop: ['ALL'] } },
              volumeMounts: [
                { name: 'data', mountPath: '/data' },
                { name: 'tmp', mountPath: '/tmp' },
              ],
            },
          ],
          volumes: [
            { name: 'data', persistentVolumeClaim: { claimName: `${name}-data` } },
            { name: 'tmp', emptyDir: { sizeLimit: '256Mi' } },
          ],
        },
      },
    },
  };
}

function serviceObject(name: StorageAddonName): Service {
  const { port } = DEFINITIONS[name];
  return {
    apiVersion: 'v1',
    kind: 'Service',
    metadata: { name, namespace: STORAGE_NAMESPACE, labels: labelsOf(name) },
    spec: { selector: selectorOf(name), ports: [{ name: 'http', port, targetPort: 'http', protocol: 'TCP' }] },
  };
}

async function ensureNamespace(client: KubeClient, namespace: string, labels: Record<string, string> = {}): Promise<void> {
  if (Object.keys(labels).length > 0) {
    await client.apply(nsPath(namespace), { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace, labels } });
    return;
  }
  // Namespaces of the user's are only created, never re-labelled or taken over.
  if (await client.find(nsPath(namespace))) return;
  try {
    await client.create('/api/v1/namespaces', { apiVersion: 'v1', kind: 'Namespace', metadata: { name: namespace } });
  } catch (err) {
    if (!(err instanceof KubeApiError && err.status === 409)) throw err;
  }
}

const decode = (data: Record<string, string> | undefined): Record<string, string> | undefined =>
  data && Object.fromEntries(Object.entries(data).map(([k, v]) => [k, Buffer.from(v, 'base64').toString()]));

// ---- waiting ----

const DEPLOYMENT_TIMEOUT_MS = 180_000;

async function waitAvailable(client: KubeClient, name: StorageAddonName): Promise<void> {
  await eventually(
    `the ${name} addon's pod to be ready`,
    async () => {
      const d = await client.get<Deployment>(deploymentPath(name));
      const s = d.status ?? {};
      return (s.observedGeneration ?? 0) >= (d.metadata.generation ?? 1) && s.updatedReplicas === 1 && (s.availableReplicas ?? 0) >= 1 && s.replicas === 1;
    },
    { timeoutMs: DEPLOYMENT_TIMEOUT_MS, intervalMs: 500 },
  ).catch(async (err: unknown) => {
    throw new Error(`${(err as Error).message}\n${await podDiagnosis(client, name)}`, { cause: err });
  });
}

/** What the addon's pods are waiting on, for an error message that says why it is not ready. */
async function podDiagnosis(client: KubeClient, name: StorageAddonName): Promise<string> {
  const selector = encodeURIComponent(Object.entries(selectorOf(name)).map(([k, v]) => `${k}=${v}`).join(','));
  type Pod = KubeObject & { status?: { phase?: string; conditions?: { type: string; status: string; message?: string }[]; containerStatuses?: { state?: Record<string, { reason?: string; message?: string }> }[] } };
  const pods = await client.get<KubeList<Pod>>(`${nsPath(STORAGE_NAMESPACE)}/pods?labelSelector=${selector}`).catch(() => undefined);
  const events = await client.get<KubeList<KubeObject & { reason?: string; message?: string }>>(`${nsPath(STORAGE_NAMESPACE)}/events`).catch(() => undefined);
  const lines = (pods?.items ?? []).map((p) => {
    const state = p.status?.containerStatuses?.[0]?.state ?? {};
    const [phase, detail] = Object.entries(state)[0] ?? [p.status?.phase ?? 'unknown', {}];
    const unscheduled = p.status?.conditions?.find((c) => c.type === 'PodScheduled' && c.status === 'False')?.message;
    return `pod ${p.metadata.name}: ${phase} ${detail.reason ?? ''} ${detail.message ?? unscheduled ?? ''}`.trim();
  });
  const recent = (events?.items ?? []).slice(-5).map((e) => `event ${e.reason ?? ''}: ${e.message ?? ''}`);
  return [...lines, ...recent].join('\n') || `no pods for ${name} in ${STORAGE_NAMESPACE}`;
}

async function waitStopped(client: KubeClient, name: StorageAddonName): Promise<void> {
  const selector = encodeURIComponent(Object.entries(selectorOf(name)).map(([k, v]) => `${k}=${v}`).join(','));
  await eventually(
    `the ${name} addon's pod to be gone`,
    async () => (await client.get<KubeList>(`${nsPath(STORAGE_NAMESPACE)}/pods?labelSelector=${selector}`)).items.length === 0,
    { timeoutMs: 120_000, intervalMs: 250 },
  );
}

// ---- the operations ----

/** A URL that this host can reach the addon's server by: its Service's cluster IP, routed by kube-proxy. */
export async function storageAddonURL(client: KubeClient, name: StorageAddonName): Promise<string> {
  const service = await client.find<Service>(`${nsPath(STORAGE_NAMESPACE)}/services/${name}`);
  const ip = service?.spec.clusterIP;
  if (!ip || ip === 'None') throw new Error(`the ${name} storage addon is not enabled (\`localkube addon enable ${name}\`)`);
  return `http://${ip}:${DEFINITIONS[name].port}${DEFINITIONS[name].path}`;
}

/** The Secret's data as it is in localkube-storage (decoded), or undefined when the addon was never enabled. */
export async function storageAddonCredentials(client: KubeClient, name: StorageAddonName): Promise<Record<string, string> | undefined> {
  const secret = await client.find<Secret>(`${nsPath(STORAGE_NAMESPACE)}/secrets/${DEFINITIONS[name].secretName}`);
  return secret && (decode(secret.data) ?? {});
}

/**
 * Deploys the addon's server (building its binary and image the first time), creates its bucket and its
 * Secret, and copies the Secret into `options.namespaces`. Idempotent; returns once the server answers and
 * the bucket exists.
 */
export async function enableStorageAddon(cluster: StorageCluster, name: StorageAddonName, options: EnableStorageAddonOptions = {}): Promise<StorageAddon> {
  const { client } = cluster;
  const addon = DEFINITIONS[name];
  const inputs = await addon.server.inputs();
  const current = await client.find<Deployment>(deploymentPath(name));
  // A pod that runs is on the one node its volume allows, which has the image: nothing to load. Otherwise
  // the image goes to every node, since the scheduler has yet to pick one.
  const running = current?.spec.template?.metadata?.annotations?.[IMAGE_INPUTS_ANNOTATION] === inputs && (current.status?.availableReplicas ?? 0) > 0;
  if (!running) {
    const image = await addon.server.archive();
    progress(`loading ${image.name} into the nodes`);
    await cluster.loadImage(image.archive);
  }

  await ensureNamespace(client, STORAGE_NAMESPACE, {
    ...MANAGED_BY,
    'pod-security.kubernetes.io/enforce': 'restricted',
    'pod-security.kubernetes.io/enforce-version': 'latest',
  });
  const secretPath = `${nsPath(STORAGE_NAMESPACE)}/secrets/${addon.secretName}`;
  const data = addon.secretData(await storageAddonCredentials(client, name));
  await client.apply(secretPath, secretObject(name, STORAGE_NAMESPACE, data));
  await client.apply(`${nsPath(STORAGE_NAMESPACE)}/persistentvolumeclaims/${name}-data`, claimObject(name));
  await client.apply(`${nsPath(STORAGE_NAMESPACE)}/services/${name}`, serviceObject(name));
  await client.apply(deploymentPath(name), deploymentObject(name, 1, inputs));
  progress(`waiting for the ${name} server (${addon.server.name}) to be ready`);
  await waitAvailable(client, name);

  const url = await storageAddonURL(client, name);
  // Ready means the pod's probe passed; kube-proxy may take a moment more to route the Service to it.
  if (!(await answer(name, url, data))) await addon.createBucket(url, data);
  if (!(await addon.bucketExists(url, data))) throw new Error(`the ${name} server at ${url} created ${STORAGE_BUCKET} but does not find it`);

  for (const namespace of options.namespaces ?? []) {
    await ensureNamespace(client, namespace);
    await client.apply(`${nsPath(namespace)}/secrets/${addon.secretName}`, secretObject(name, namespace, data));
  }
  return { endpoint: storageEndpoint(name), secretName: addon.secretName, bucket: STORAGE_BUCKET };
}

/** Removes the addon: its server, Service, data volume (and so every object in it) and every copy of its Secret. */
export async function disableStorageAddon(client: KubeClient, name: StorageAddonName): Promise<void> {
  const addon = DEFINITIONS[name];
  await client.delete(deploymentPath(name));
  await waitStopped(client, name);
  await client.delete(`${nsPath(STORAGE_NAMESPACE)}/services/${name}`);
  await client.delete(`${nsPath(STORAGE_NAMESPACE)}/persistentvolumeclaims/${name}-data`);
  const selector = encodeURIComponent(`${ADDON_LABEL}=${name},app.kubernetes.io/managed-by=localkube`);
  const copies = await client.get<KubeList<Secret>>(`/api/v1/secrets?labelSelector=${selector}`);
  for (const secret of copies.items) {
    if (secret.metadata.name === addon.secretName && secret.metadata.namespace) await client.delete(`${nsPath(secret.metadata.namespace)}/secrets/${secret.metadata.name}`);
  }
}

/** Polls the server through its Service until it answers whether the bucket exists. */
function answer(name: StorageAddonName, url: string, secret: Record<string, string>): Promise<boolean> {
  return eventually(`the ${name} server at ${url} to answer`, async () => ({ exists: await DEFINITIONS[name].bucketExists(url, secret) }), {
    timeoutMs: 60_000,
    intervalMs: 1000,
  }).then((r) => r.exists);
}

/** Scales the enabled addon's Deployment, keeping the image it was enabled with. */
async function scale(client: KubeClient, name: StorageAddonName, replicas: number): Promise<void> {
  const current = await client.find<Deployment>(deploymentPath(name));
  if (!current) throw new Error(`the ${name} storage addon is not enabled (\`localkube addon enable ${name}\`)`);
  const inputs = current.spec.template?.metadata?.annotations?.[IMAGE_INPUTS_ANNOTATION] ?? '';
  await client.apply(deploymentPath(name), deploymentObject(name, replicas, inputs));
}

/** Resolves `refused` when a TCP connection to host:port is refused, `other` on any other outcome. */
function connectOutcome(host: string, port: number): Promise<'refused' | 'other'> {
  return new Promise((resolve) => {
    const socket = createConnection({ host, port, timeout: 1000 });
    const done = (outcome: 'refused' | 'other'): void => {
      socket.destroy();
      resolve(outcome);
    };
    socket.once('connect', () => done('other'));
    socket.once('timeout', () => done('other'));
    socket.once('error', (err: NodeJS.ErrnoException) => done(err.code === 'ECONNREFUSED' ? 'refused' : 'other'));
  });
}

/**
 * Scales the addon's server to 0 and waits until its pod is gone (its data stays) and a new connection to
 * its Service is refused: a storage outage as clients see it. (For a moment after the pod goes, kube-proxy
 * still sends connections to its address, where nothing answers or refuses.)
 */
export async function stopStorageAddon(client: KubeClient, name: StorageAddonName): Promise<void> {
  await scale(client, name, 0);
  await waitStopped(client, name);
  const { hostname, port } = new URL(await storageAddonURL(client, name));
  await eventually(`connections to the stopped ${name} server to be refused`, async () => (await connectOutcome(hostname, Number(port))) === 'refused', {
    timeoutMs: 60_000,
    intervalMs: 250,
  });
}

/** Scales the addon's server back to 1 and waits until it is ready and answers through its Service. */
export async function startStorageAddon(client: KubeClient, name: StorageAddonName): Promise<void> {
  await scale(client, name, 1);
  await waitAvailable(client, name);
  const url = await storageAddonURL(client, name);
  // The data volume outlives the pod: a bucket missing now was lost, and is not silently made again.
  if (!(await answer(name, url, (await storageAddonCredentials(client, name)) ?? {}))) {
    throw new Error(`the ${name} server at ${url} answers, but its ${STORAGE_BUCKET} bucket is gone`);
  }
}
