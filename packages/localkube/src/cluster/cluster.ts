// One local cluster's lifecycle: bring every component up in order, inject faults, and take it all down
// again. Runs inside the supervisor process (supervisor.ts), which owns every child process.
import { Resolver } from 'node:dns/promises';
import { access, mkdir, rm, symlink, writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import { join } from 'node:path';
import type { Binaries } from '../build/go-binaries.ts';
import { KubeClient, type KubeList, type KubeObject } from '../client/kube.ts';
import { hostCommand } from '@quorum/images';
import { output, run } from '../exec.ts';
import type { ImageArchive } from '../images/catalog.ts';
import { killCgroup, removeCgroup } from './cgroups.ts';
import { addonsReady, applyAddons, applyNetworkPolicyAgentRbac } from './addons.ts';
import {
  adminKubeconfig,
  apiserverProcess,
  containerdProcess,
  controllerManagerProcess,
  etcdProcess,
  kubeletProcess,
  kubeProxyProcess,
  networkPolicyProcess,
  schedulerProcess,
  writeKubeconfigs,
  writeNodeConfig,
  type ComponentContext,
} from './components.ts';
import { unmountUnder } from './mounts.ts';
import { eventually } from '../wait.ts';
import { cutNodeNetwork, policyAgentHooked, restoreNodeNetwork, setupNetwork, teardownNetwork } from './network.ts';
import { createPki } from './pki.ts';
import { Processes } from './processes.ts';
import { LocalVolumeProvisioner } from './provisioner.ts';
import { startRegistryRefusal } from './registry.ts';
import { CGROUP_PARENT, CLUSTER_DOMAIN, DNS_SERVICE_IP, KUBERNETES_SERVICE_IP, PORTS, type NodeTopology, type Topology } from './topology.ts';

const CTR = hostCommand('ctr', 'containerd', 'image import into each node, container kills (faults)');
const NSENTER = hostCommand('nsenter', 'util-linux', "commands in a pod's network namespace (faults)");
/** Commands a fault may run in a pod's network namespace: its own packet filter, its sockets. */
const POD_NETWORK_COMMANDS: Record<string, string> = {
  iptables: hostCommand('iptables', 'iptables', "rules that cut part of one pod's traffic (faults)"),
};

export type Log = (message: string) => void;

/** localkube's waits: the shared poll, at 200 ms. */
function until<T>(what: string, timeoutMs: number, probe: () => Promise<T | undefined | false>): Promise<T> {
  return eventually(what, probe, { timeoutMs, intervalMs: 200 });
}

interface Condition {
  type: string;
  status: string;
}

/** The control plane's components that localkube runs as host processes (etcd aside). */
export const CONTROL_PLANE_COMPONENTS = ['kube-apiserver', 'kube-controller-manager', 'kube-scheduler'] as const;
export type ControlPlaneComponent = (typeof CONTROL_PLANE_COMPONENTS)[number];

export class Cluster {
  readonly topo: Topology;
  readonly processes: Processes;
  readonly #bins: Binaries;
  readonly #images: ImageArchive[];
  readonly #log: Log;
  #ctx?: ComponentContext;
  #client?: KubeClient;
  #registry?: Server;
  #provisioner?: LocalVolumeProvisioner;
  readonly #stopProvisioner = new AbortController();
  readonly #stoppedNodes = new Set<string>();

  constructor(topo: Topology, bins: Binaries, images: ImageArchive[], log: Log) {
    this.topo = topo;
    this.#bins = bins;
    this.#images = images;
    this.#log = log;
    this.processes = new Processes(topo.stateDir);
    this.processes.onUnexpectedExit = (name, code) => {
      if (!this.#stoppedNodes.has(name.split('-containerd')[0]!.split('-kubelet')[0]!)) log(`${name} exited unexpectedly (code ${code}); see ${this.processes.logFile(name)}`);
    };
  }

  get client(): KubeClient {
    if (!this.#client) throw new Error('cluster is not up');
    return this.#client;
  }

  get kubeconfig(): string {
    return adminKubeconfig(this.topo);
  }

  node(name: string): NodeTopology {
    const node = this.topo.nodes.find((n) => n.name === name);
    if (!node) throw new Error(`no node ${name} (nodes: ${this.topo.nodes.map((n) => n.name).join(', ')})`);
    return node;
  }

  async up(step: (name: string) => void): Promise<void> {
    const { topo } = this;
    await mkdir(join(topo.stateDir, 'bin'), { recursive: true });
    await rm(join(topo.stateDir, 'bin', 'kubectl'), { force: true });
    await symlink(join(this.#bins.kubernetes, 'kubectl'), join(topo.stateDir, 'bin', 'kubectl'));
    await writeFile(join(topo.stateDir, 'resolv.conf'), '# localkube: pods with dnsPolicy Default get no upstream resolver\n');

    step('host network');
    await setupNetwork(topo);
    step('certificates');
    const pki = await createPki(topo);
    const ctx: ComponentContext = {
      topo,
      pki,
      kubeBin: this.#bins.kubernetes,
      etcdBin: Object.values(this.#bins.etcd).at(-1)!,
      registryPort: PORTS.registry,
      kubeRouterBin: this.#bins.kubeRouter,
    };
    this.#ctx = ctx;
    await writeKubeconfigs(ctx);
    this.#registry = await startRegistryRefusal(PORTS.registry);

    step('etcd');
    await this.processes.start(etcdProcess(ctx));
    await until('etcd', 30_000, async () => {
      const res = await fetch(`http://127.0.0.1:${PORTS.etcdClient}/health`);
      return ((await res.json()) as { health?: string }).health === 'true';
    });

    step('containerd on every node');
    await Promise.all(topo.nodes.map((n) => this.#startRuntime(n)));

    step('kube-apiserver');
    await this.processes.start(apiserverProcess(ctx));
    this.#client = await KubeClient.fromKubeconfig(this.kubeconfig);
    await until('kube-apiserver /readyz', 60_000, async () => (await this.client.get<string>('/readyz')) === 'ok');

    step('controller-manager, scheduler, kube-proxy, kubelets');
    await this.processes.start(controllerManagerProcess(ctx));
    await this.processes.start(schedulerProcess(ctx));
    await this.processes.start(await kubeProxyProcess(ctx));
    for (const node of topo.nodes) await this.processes.start(kubeletProcess(ctx, node));
    this.#provisioner = new LocalVolumeProvisioner(this.client, topo);
    void this.#provisioner.run(this.#stopProvisioner.signal, 500, this.#log);

    step('nodes Ready');
    await this.waitNodesReady(topo.nodes.map((n) => n.name), 90_000);

    // Before any workload: a pod that starts before the agent runs is unprotected until the agent's first sync.
    step('NetworkPolicy agent');
    await applyNetworkPolicyAgentRbac(this.client);
    await this.processes.start(networkPolicyProcess(ctx));
    await until('NetworkPolicy agent hooked into iptables', 30_000, policyAgentHooked);

    step('CoreDNS');
    await applyAddons(this.client);
    await until('CoreDNS ready', 90_000, () => addonsReady(this.client));
    await until('CoreDNS answering', 30_000, async () => {
      const resolver = new Resolver({ timeout: 1000, tries: 1 });
      resolver.setServers([DNS_SERVICE_IP]);
      const addresses = await resolver.resolve4(`kubernetes.default.svc.${CLUSTER_DOMAIN}`);
      return addresses.includes(KUBERNETES_SERVICE_IP);
    });
  }

  async #startRuntime(node: NodeTopology): Promise<void> {
    await writeNodeConfig(this.#ctx!, node);
    await this.processes.start(containerdProcess(node));
    await until(`containerd of ${node.name}`, 30_000, async () => {
      await access(node.containerdSocket);
      return (await run(CTR, ['--address', node.containerdSocket, 'version'], { allowFailure: true })).exitCode === 0;
    });
    for (const image of this.#images) await this.#importImage(node, image.archive);
  }

  async #importImage(node: NodeTopology, archive: string): Promise<string> {
    const out = await output(CTR, ['--address', node.containerdSocket, '-n', 'k8s.io', 'images', 'import', archive]);
    return out;
  }

  async waitNodesReady(names: string[], timeoutMs: number, ready = true): Promise<void> {
    await until(`nodes ${names.join(', ')} ${ready ? 'Ready' : 'NotReady'}`, timeoutMs, async () => {
      const nodes = await this.client.get<KubeList<KubeObject & { status?: { conditions?: Condition[] } }>>('/api/v1/nodes');
      return names.every((name) => {
        const node = nodes.items.find((n) => n.metadata.name === name);
        const isReady = node?.status?.conditions?.some((c) => c.type === 'Ready' && c.status === 'True') ?? false;
        return node !== undefined && isReady === ready;
      });
    });
  }

  /** Imports an OCI archive into every node's containerd; returns what ctr printed. */
  async loadImage(archive: string): Promise<string> {
    const outputs = await Promise.all(this.topo.nodes.filter((n) => !this.#stoppedNodes.has(n.name)).map((n) => this.#importImage(n, archive)));
    return outputs[0] ?? '';
  }

  /** Fault: SIGKILL a container's process (by namespace, pod and container name). */
  async killContainer(namespace: string, pod: string, container?: string): Promise<void> {
    const obj = await this.client.get<KubeObject & { spec: { nodeName?: string }; status?: { containerStatuses?: { name: string; containerID?: string }[] } }>(
      `/api/v1/namespaces/${namespace}/pods/${pod}`,
    );
    const statuses = obj.status?.containerStatuses ?? [];
    const status = container ? statuses.find((s) => s.name === container) : statuses[0];
    const id = status?.containerID?.replace(/^containerd:\/\//, '');
    if (!id || !obj.spec.nodeName) throw new Error(`pod ${namespace}/${pod} has no running container${container ? ` ${container}` : ''}`);
    await run(CTR, ['--address', this.node(obj.spec.nodeName).containerdSocket, '-n', 'k8s.io', 'tasks', 'kill', '--signal', 'SIGKILL', id]);
  }

  /**
   * Fault: runs `argv` (an iptables command) in the network namespace of a pod, found through its first
   * running container's process on its node, so a test can drop one pod's DNS or refuse one peer's
   * connections while everything else on the node goes on. Returns what the command printed.
   */
  async inPodNetwork(namespace: string, pod: string, argv: string[]): Promise<string> {
    const command = POD_NETWORK_COMMANDS[argv[0] ?? ''];
    if (!command) throw new Error(`in-pod-network: only ${Object.keys(POD_NETWORK_COMMANDS).join(', ')} may run, not ${argv[0] ?? '(nothing)'}`);
    const obj = await this.client.get<KubeObject & { spec: { nodeName?: string }; status?: { containerStatuses?: { name: string; containerID?: string }[] } }>(
      `/api/v1/namespaces/${namespace}/pods/${pod}`,
    );
    const id = obj.status?.containerStatuses?.find((s) => s.containerID)?.containerID?.replace(/^containerd:\/\//, '');
    if (!id || !obj.spec.nodeName) throw new Error(`pod ${namespace}/${pod} has no running container`);
    const tasks = (await run(CTR, ['--address', this.node(obj.spec.nodeName).containerdSocket, '-n', 'k8s.io', 'tasks', 'ls'])).stdout;
    const pid = tasks.split('\n').map((l) => l.trim().split(/\s+/)).find((f) => f[0] === id)?.[1];
    if (!pid || !/^\d+$/.test(pid)) throw new Error(`pod ${namespace}/${pod}: no task for container ${id}`);
    return (await run(NSENTER, ['-t', pid, '-n', command, ...argv.slice(1)])).stdout;
  }

  /** Fault: power a node off. Its kubelet, containerd, shims and containers all die at once; its pods drop off the network. */
  async stopNode(name: string): Promise<void> {
    const node = this.node(name);
    this.#stoppedNodes.add(name);
    await cutNodeNetwork(node);
    await killCgroup(node.cgroup, { remove: false });
    await this.processes.forget(`${name}-kubelet`);
    await this.processes.forget(`${name}-containerd`);
  }

  /** Power the node back on: containerd and kubelet restart on the node's surviving disk state. */
  async startNode(name: string): Promise<void> {
    const node = this.node(name);
    await restoreNodeNetwork(node);
    await this.processes.start(containerdProcess(node));
    await until(`containerd of ${name}`, 30_000, async () => (await run(CTR, ['--address', node.containerdSocket, 'version'], { allowFailure: true })).exitCode === 0);
    await this.processes.start(kubeletProcess(this.#ctx!, node));
    this.#stoppedNodes.delete(name);
  }

  async cutNetwork(name: string): Promise<void> {
    await cutNodeNetwork(this.node(name));
  }

  async restoreNetwork(name: string): Promise<void> {
    await restoreNodeNetwork(this.node(name));
  }

  async wipeVolume(namespace: string, claim: string): Promise<string> {
    if (!this.#provisioner) throw new Error('cluster is not up');
    return this.#provisioner.wipe(namespace, claim);
  }

  async restartApiserver(): Promise<void> {
    await this.restartComponent('kube-apiserver');
  }

  /** Each control-plane component and whether its process runs (one that exited is not started again by itself). */
  controlPlane(): { name: ControlPlaneComponent; running: boolean }[] {
    const running = new Set(this.processes.names());
    return CONTROL_PLANE_COMPONENTS.map((name) => ({ name, running: running.has(name) }));
  }

  /** Stops a control-plane component (if it runs) and starts it again; the API server is waited for until ready. */
  async restartComponent(name: ControlPlaneComponent): Promise<void> {
    const spec = { 'kube-apiserver': apiserverProcess, 'kube-controller-manager': controllerManagerProcess, 'kube-scheduler': schedulerProcess }[name](this.#ctx!);
    await this.processes.stop(name, 10_000);
    await this.processes.start(spec);
    if (name === 'kube-apiserver') await until('kube-apiserver /readyz', 60_000, async () => (await this.client.get<string>('/readyz')) === 'ok');
  }

  /** Stops everything and removes every process, mount, cgroup, link, route and iptables rule of the cluster. */
  async down(): Promise<void> {
    this.#stopProvisioner.abort();
    // Nodes first, all at once: kubelet, containerd, shims and containers of a node share its cgroup.
    await Promise.all(this.topo.nodes.map((n) => killCgroup(n.cgroup)));
    for (const name of ['network-policy', 'kube-proxy', 'kube-scheduler', 'kube-controller-manager', 'kube-apiserver', 'etcd']) await this.processes.stop(name, 5000);
    await killCgroup(CGROUP_PARENT);
    this.#client?.close();
    await new Promise<void>((resolve) => (this.#registry ? this.#registry.close(() => resolve()) : resolve()));
    await teardown(this.topo.stateDir);
  }
}

/**
 * Everything `down` removes, callable without a Cluster object: `localkube down` uses it directly when
 * the supervisor is already gone (it crashed, or was killed).
 */
export async function teardown(stateDir: string): Promise<void> {
  await killCgroup(CGROUP_PARENT);
  await unmountUnder(stateDir);
  await teardownNetwork();
  await removeCgroup(CGROUP_PARENT);
  // The nodes' container stores are large and useless once the cluster is gone; logs stay for post-mortems.
  await rm(join(stateDir, 'nodes'), { recursive: true, force: true });
  await rm(join(stateDir, 'etcd'), { recursive: true, force: true });
}
