// The TypeScript API for tests and tools:
//
//   await using kube = await LocalKube.start({ nodes: 3, signal });
//   await kube.kubectl(['get', 'nodes']);
//   await kube.stopNode('node-2');
//
// `start` builds or reuses binaries and images, then runs a supervisor process that owns the cluster.
// That supervisor watches this process: if it exits or is killed, the cluster is torn down with it.
import { spawn, type ChildProcess } from 'node:child_process';
import { mkdir, open, readFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { ensureBinaries } from './build/go-binaries.ts';
import { ensurePrerequisites } from './build/prerequisites.ts';
import { KubeClient, type KubeObject } from './client/kube.ts';
import { teardown, type ControlPlaneComponent } from './cluster/cluster.ts';
import { control, readStatus, type SupervisorStatus } from './cluster/control.ts';
import { writeKubeconfig } from './cluster/kubeconfig.ts';
import { networkInUse } from './cluster/network.ts';
import { recordedPids } from './cluster/processes.ts';
import { run } from './exec.ts';
import { ensureImages } from './images/catalog.ts';
import { defaultStateDir } from './paths.ts';
import { progress, step } from './progress.ts';
import {
  disableStorageAddon,
  enableStorageAddon,
  startStorageAddon,
  stopStorageAddon,
  storageAddonURL,
  type EnableStorageAddonOptions,
  type StorageAddon,
  type StorageAddonName,
} from './storage/addons.ts';
import { disablePrometheusAddon, enablePrometheusAddon, prometheusAddonURL, type EnablePrometheusOptions, type PrometheusAddon } from './monitoring/prometheus.ts';

export interface StartOptions {
  nodes?: number;
  stateDir?: string;
  signal?: AbortSignal;
  /** Keep the cluster running after this process exits (the CLI's `up`). Default false. */
  detach?: boolean;
}

const alive = (pid: number): boolean => {
  try {
    process.kill(pid, 0);
    return true;
  } catch {
    return false;
  }
};

/** Builds or finds everything a cluster needs before any process starts: prerequisites, binaries, images. */
export async function prepare(): Promise<void> {
  await step('prerequisites', ensurePrerequisites);
  const bins = await step('upstream binaries (cached by version)', ensureBinaries);
  await step('images', () => ensureImages(bins));
}

/** Cleans up after a supervisor that died without tearing down (crash, SIGKILL of the supervisor itself). */
export async function recoverStale(stateDir: string): Promise<boolean> {
  const status = await readStatus(stateDir);
  if (status && alive(status.pid)) return false;
  const pids = await recordedPids(stateDir);
  if (pids.length === 0 && !(await networkInUse())) return false;
  for (const pid of pids) if (alive(pid)) process.kill(pid, 'SIGKILL');
  await teardown(stateDir);
  return true;
}

export class LocalKube {
  readonly stateDir: string;
  readonly kubeconfig: string;
  readonly nodes: string[];
  readonly client: KubeClient;
  readonly upSeconds: number;
  readonly #supervisor: ChildProcess | undefined;
  readonly #pid: number;

  private constructor(stateDir: string, status: SupervisorStatus, client: KubeClient, supervisor?: ChildProcess) {
    this.stateDir = stateDir;
    this.kubeconfig = status.kubeconfig;
    this.nodes = status.nodes;
    this.client = client;
    this.upSeconds = status.upSeconds ?? 0;
    this.#supervisor = supervisor;
    this.#pid = status.pid;
  }

  static async start(options: StartOptions = {}): Promise<LocalKube> {
    const stateDir = resolve(options.stateDir ?? defaultStateDir());
    const nodes = options.nodes ?? 3;
    await prepare();
    await mkdir(stateDir, { recursive: true });
    const existing = await readStatus(stateDir);
    if (existing && alive(existing.pid) && existing.phase !== 'stopped') {
      throw new Error(`localkube is already running in ${stateDir} (pid ${existing.pid}); \`npx localkube down --state-dir ${stateDir}\` stops it`);
    }
    if (await recoverStale(stateDir)) progress('cleaned up after a localkube that did not shut down');
    await mkdir(join(stateDir, 'logs'), { recursive: true });
    const log = await open(join(stateDir, 'logs', 'supervisor.log'), 'a');
    const supervisor = spawn(
      process.execPath,
      [join(import.meta.dirname, 'supervisor.ts'), '--state-dir', stateDir, '--nodes', String(nodes), ...(options.detach ? [] : ['--watch-parent'])],
      { stdio: [options.detach ? 'ignore' : 'pipe', log.fd, log.fd], detached: true },
    );
    await log.close();
    supervisor.unref();
    // Held open (never written) so the supervisor sees EOF when we die; unref'd so it never keeps us alive.
    (supervisor.stdin as (NodeJS.WritableStream & { unref?: () => void }) | null)?.unref?.();
    const status = await LocalKube.#waitReady(stateDir, supervisor, options.signal);
    const kube = new LocalKube(stateDir, status, await KubeClient.fromKubeconfig(status.kubeconfig), options.detach ? undefined : supervisor);
    options.signal?.addEventListener('abort', () => void kube.stop(), { once: true });
    return kube;
  }

  /** Attaches to a running cluster (started by `localkube up`). */
  static async attach(stateDir = defaultStateDir()): Promise<LocalKube> {
    const dir = resolve(stateDir);
    const status = await readStatus(dir);
    if (!status || status.phase !== 'ready' || !alive(status.pid)) throw new Error(`no running localkube in ${dir} (run \`npx localkube up\`)`);
    return new LocalKube(dir, status, await KubeClient.fromKubeconfig(status.kubeconfig));
  }

  static async #waitReady(stateDir: string, supervisor: ChildProcess, signal?: AbortSignal): Promise<SupervisorStatus> {
    let lastStep = '';
    const t0 = Date.now();
    for (;;) {
      signal?.throwIfAborted();
      const status = await readStatus(stateDir);
      if (status && status.pid === supervisor.pid) {
        if (status.step && status.step !== lastStep) {
          lastStep = status.step;
          progress(`cluster: ${status.step}`);
        }
        if (status.phase === 'ready') {
          progress(`cluster ready in ${status.upSeconds}s (supervisor pid ${status.pid})`);
          return status;
        }
        if (status.phase === 'failed') throw new Error(`localkube failed to start: ${status.error}\n(logs: ${join(stateDir, 'logs')})`);
      }
      if (supervisor.exitCode !== null) throw new Error(`localkube supervisor exited (${supervisor.exitCode}); see ${join(stateDir, 'logs', 'supervisor.log')}`);
      if (Date.now() - t0 > 600_000) throw new Error('localkube: not ready after 10 minutes');
      await new Promise((r) => setTimeout(r, 250));
    }
  }

  /** Runs the pinned kubectl against this cluster; resolves with stdout. */
  async kubectl(args: string[], options: { input?: string; allowFailure?: boolean } = {}): Promise<string> {
    const result = await run(join(this.stateDir, 'bin', 'kubectl'), args, {
      env: { ...process.env, KUBECONFIG: this.kubeconfig },
      input: options.input,
      allowFailure: options.allowFailure,
    });
    return options.allowFailure ? result.stdout + result.stderr : result.stdout;
  }

  /** Mints a token for a ServiceAccount (TokenRequest) and writes a kubeconfig that acts as exactly that account. */
  async serviceAccountKubeconfig(namespace: string, name: string, expirationSeconds = 3600): Promise<string> {
    const request = await this.client.create<KubeObject & { status: { token: string } }>(`/api/v1/namespaces/${namespace}/serviceaccounts/${name}/token`, {
      apiVersion: 'authentication.k8s.io/v1',
      kind: 'TokenRequest',
      spec: { expirationSeconds },
    });
    const path = join(this.stateDir, 'kubeconfigs', `sa-${namespace}-${name}.kubeconfig`);
    await writeKubeconfig(path, this.client.server, join(this.stateDir, 'pki', 'ca.crt'), `${namespace}-${name}`, { token: request.status.token });
    return path;
  }

  loadImage(archive: string): Promise<string> {
    return control<string>(this.stateDir, 'load-image', { archive: resolve(archive) });
  }
  killContainer(namespace: string, pod: string, container?: string): Promise<void> {
    return control(this.stateDir, 'kill-container', { namespace, pod, container });
  }
  /**
   * The CA (PEM) of the client certificate the API server presents to admission webhooks, and nothing else:
   * a webhook that requires client certificates of it is callable by the API server only (its certificate's
   * common name is APISERVER_WEBHOOK_CLIENT_NAME). The recorder's users webhook takes it as `webhookClientCA`.
   */
  webhookClientCA(): Promise<string> {
    return readFile(join(this.stateDir, 'pki', 'webhook-client-ca.crt'), 'utf8');
  }
  /** Runs an iptables command in a pod's network namespace (to drop its DNS, or refuse one peer): a fault. */
  inPodNetwork(namespace: string, pod: string, argv: string[]): Promise<string> {
    return control<string>(this.stateDir, 'in-pod-network', { namespace, pod, argv: JSON.stringify(argv) });
  }
  stopNode(node: string): Promise<void> {
    return control(this.stateDir, 'stop-node', { node });
  }
  startNode(node: string): Promise<void> {
    return control(this.stateDir, 'start-node', { node });
  }
  cutNetwork(node: string): Promise<void> {
    return control(this.stateDir, 'cut-network', { node });
  }
  restoreNetwork(node: string): Promise<void> {
    return control(this.stateDir, 'restore-network', { node });
  }
  /** Deletes the data of the volume bound to a claim; returns the volume's path on the node. */
  wipeVolume(namespace: string, claim: string): Promise<string> {
    return control<string>(this.stateDir, 'wipe-volume', { namespace, claim });
  }
  restartApiserver(): Promise<void> {
    return control(this.stateDir, 'restart-apiserver');
  }
  /** Each control-plane component (API server, controller manager, scheduler) and whether its process runs. */
  controlPlane(): Promise<{ name: ControlPlaneComponent; running: boolean }[]> {
    return control(this.stateDir, 'control-plane');
  }
  /** Stops a control-plane component and starts it again (the API server: until it is ready). */
  restartComponent(name: ControlPlaneComponent): Promise<void> {
    return control(this.stateDir, 'restart-component', { name });
  }
  /** The file a host process of the cluster (e.g. kube-controller-manager) writes its log to. */
  processLog(name: string): string {
    return join(this.stateDir, 'logs', `${name}.log`);
  }

  /**
   * Runs a real object-store server in the cluster (s3: MinIO, gcs: fake-gcs-server, azure: Azurite) with a
   * bucket `quorum` and a credentials Secret, copied into `options.namespaces`. Builds the server the first
   * time (minutes for MinIO). Idempotent; returns once the server answers and the bucket exists.
   */
  enableAddon(name: StorageAddonName, options: EnableStorageAddonOptions = {}): Promise<StorageAddon> {
    return enableStorageAddon({ client: this.client, loadImage: (archive) => this.loadImage(archive) }, name, options);
  }
  /** Removes the addon's server, Service, data and every copy of its Secret. */
  disableAddon(name: StorageAddonName): Promise<void> {
    return disableStorageAddon(this.client, name);
  }
  /** A storage outage: scales the addon's server to 0 and waits until its pod is gone (the data stays). */
  stopAddon(name: StorageAddonName): Promise<void> {
    return stopStorageAddon(this.client, name);
  }
  /** Ends the outage: scales the server back to 1 and waits until it answers with its bucket. */
  startAddon(name: StorageAddonName): Promise<void> {
    return startStorageAddon(this.client, name);
  }
  /** A URL this host reaches the addon's server by (its Service's cluster IP), e.g. to list a bucket from a test. */
  addonURL(name: StorageAddonName): Promise<string> {
    return storageAddonURL(this.client, name);
  }

  /**
   * Runs Prometheus in the cluster (`localkube addon enable prometheus`) with the given scrape configs and
   * rule files, by default Quorum's deploy/monitoring/. Builds it the first time. Idempotent; returns once it
   * answers ready from this host.
   */
  enablePrometheus(options: EnablePrometheusOptions = {}): Promise<PrometheusAddon> {
    return enablePrometheusAddon({ client: this.client, loadImage: (archive) => this.loadImage(archive) }, options);
  }
  /** Removes Prometheus and its data. */
  disablePrometheus(): Promise<void> {
    return disablePrometheusAddon(this.client);
  }
  /** A URL this host reaches Prometheus by (its Service's cluster IP), for its HTTP API. */
  prometheusURL(): Promise<string> {
    return prometheusAddonURL(this.client);
  }

  /** Tears the cluster down and waits until the supervisor has removed everything and exited. */
  async stop(): Promise<void> {
    this.client.close();
    if (!alive(this.#pid)) return;
    await control(this.stateDir, 'down').catch(() => process.kill(this.#pid, 'SIGTERM'));
    while (alive(this.#pid)) await new Promise((r) => setTimeout(r, 100));
    this.#supervisor?.stdin?.destroy();
  }

  async [Symbol.asyncDispose](): Promise<void> {
    await this.stop();
  }
}

/** Stops the cluster in `stateDir` whether or not its supervisor is still alive. */
export async function down(stateDir = defaultStateDir()): Promise<void> {
  const dir = resolve(stateDir);
  const status = await readStatus(dir);
  if (status && alive(status.pid)) {
    await control(dir, 'down').catch(() => process.kill(status.pid, 'SIGTERM'));
    const t0 = Date.now();
    while (alive(status.pid) && Date.now() - t0 < 120_000) await new Promise((r) => setTimeout(r, 100));
    if (alive(status.pid)) process.kill(status.pid, 'SIGKILL');
  }
  await recoverStale(dir);
}
