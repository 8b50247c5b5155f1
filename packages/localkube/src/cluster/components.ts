// The command lines and configuration files of every component, as a production cluster built from
// binaries would have them, with short timings so that node-failure tests finish in seconds.
import { mkdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { hostCommand, hostFile } from '@quorum/images';
import { pauseImage } from '../images/catalog.ts';
import { writeKubeconfig } from './kubeconfig.ts';
import type { Pki } from './pki.ts';
import type { ProcessSpec } from './processes.ts';
import {
  CGROUP_PARENT,
  CLUSTER_DOMAIN,
  CONTROL_PLANE_IP,
  DNS_SERVICE_IP,
  IPTABLES_POLICY_CHAIN_PREFIX,
  PORTS,
  POD_NETWORK,
  SERVICE_NETWORK,
  type NodeTopology,
  type Topology,
} from './topology.ts';

// What the node components run from the host, declared here because this module starts them or points them
// at it: containerd (with its runc shim and runc), the CNI plugins containerd calls, and the tools the
// kubelet (volume mounts) and kube-proxy (Service rules, stale UDP flows) run themselves.
const CONTAINERD = hostCommand('containerd', 'containerd', 'container runtime of every node');
hostCommand('containerd-shim-runc-v2', 'containerd', 'containerd runc shim');
hostCommand('runc', 'runc', 'OCI runtime that containerd runs');
const CNI_BIN_DIR = hostFile('/usr/lib/cni', 'containernetworking-plugins', 'CNI plugin directory of every node');
hostFile(`${CNI_BIN_DIR}/bridge`, 'containernetworking-plugins', 'pod network (bridge)');
hostFile(`${CNI_BIN_DIR}/host-local`, 'containernetworking-plugins', 'pod IP allocation');
hostFile(`${CNI_BIN_DIR}/loopback`, 'containernetworking-plugins', 'pod loopback');
hostCommand('mount', 'mount', 'kubelet volume mounts');
hostCommand('umount', 'mount', 'kubelet volume unmounts');
hostCommand('iptables', 'iptables', 'kube-proxy Service rules');
hostCommand('iptables-save', 'iptables', 'kube-proxy Service rules');
hostCommand('iptables-restore', 'iptables', 'kube-proxy Service rules');
hostCommand('conntrack', 'conntrack', 'kube-proxy stale UDP flow cleanup');
// kube-router's network policy controller saves and restores the filter table and keeps its policies' address sets in ipsets.
hostCommand('iptables-save', 'iptables', 'NetworkPolicy agent (kube-router) rules');
hostCommand('iptables-restore', 'iptables', 'NetworkPolicy agent (kube-router) rules');
hostCommand('ipset', 'ipset', 'NetworkPolicy agent (kube-router) address sets');

export interface ComponentContext {
  topo: Topology;
  pki: Pki;
  /** Directory of the Kubernetes binaries. */
  kubeBin: string;
  /** Directory of the control plane's etcd binaries. */
  etcdBin: string;
  /** Port of localkube's image-pull refusal endpoint (see registry.ts). */
  registryPort: number;
  /** Directory of tools/kube-router's binary, the NetworkPolicy agent. */
  kubeRouterBin: string;
}

const kubeconfigPath = (topo: Topology, name: string): string => join(topo.stateDir, 'kubeconfigs', `${name}.kubeconfig`);
export const adminKubeconfig = (topo: Topology): string => join(topo.stateDir, 'kubeconfig');

export async function writeKubeconfigs(ctx: ComponentContext): Promise<void> {
  const { topo, pki } = ctx;
  await mkdir(join(topo.stateDir, 'kubeconfigs'), { recursive: true });
  const write = (path: string, user: string, clientCert: { cert: string; key: string }): Promise<void> =>
    writeKubeconfig(path, topo.apiserverURL, pki.ca.cert, user, { clientCert });
  await write(adminKubeconfig(topo), 'admin', pki.admin);
  await write(kubeconfigPath(topo, 'controller-manager'), 'controller-manager', pki.controllerManager);
  await write(kubeconfigPath(topo, 'scheduler'), 'scheduler', pki.scheduler);
  await write(kubeconfigPath(topo, 'kube-proxy'), 'kube-proxy', pki.kubeProxy);
  await write(kubeconfigPath(topo, 'network-policy'), 'network-policy', pki.networkPolicy);
  for (const n of topo.nodes) await write(kubeconfigPath(topo, n.name), n.name, pki.nodeClients[n.name]!);
  await writeAdmissionConfiguration(ctx);
}

/** The API server's admission configuration: the file its --admission-control-config-file names. */
export const admissionConfigPath = (topo: Topology): string => join(topo.stateDir, 'admission', 'admission-config.json');

/**
 * The API server authenticates to admission webhooks, as upstream documents it ("Authenticate apiservers"): a
 * WebhookAdmissionConfiguration for both webhook plugins whose kubeconfig gives the client certificate for
 * every in-cluster Service (`*.svc`: webhooks are called as `<service>.<namespace>.svc`). A webhook that
 * asks for client certificates of pki.webhookClientCA then knows its caller is the API server.
 */
async function writeAdmissionConfiguration(ctx: ComponentContext): Promise<void> {
  const dir = join(ctx.topo.stateDir, 'admission');
  await mkdir(dir, { recursive: true, mode: 0o700 });
  const kubeconfig = join(dir, 'webhook-clients.kubeconfig');
  const user = { 'client-certificate': ctx.pki.apiserverWebhookClient.cert, 'client-key': ctx.pki.apiserverWebhookClient.key };
  await writeFile(kubeconfig, JSON.stringify({ apiVersion: 'v1', kind: 'Config', users: [{ name: '*.svc', user }] }, null, 2) + '\n', { mode: 0o600 });
  const webhooks = { apiVersion: 'apiserver.config.k8s.io/v1', kind: 'WebhookAdmissionConfiguration', kubeConfigFile: kubeconfig };
  const config = {
    apiVersion: 'apiserver.config.k8s.io/v1',
    kind: 'AdmissionConfiguration',
    plugins: [
      { name: 'ValidatingAdmissionWebhook', configuration: webhooks },
      { name: 'MutatingAdmissionWebhook', configuration: webhooks },
    ],
  };
  await writeFile(admissionConfigPath(ctx.topo), JSON.stringify(config, null, 2) + '\n', { mode: 0o600 });
}

export function etcdProcess(ctx: ComponentContext): ProcessSpec {
  const dir = join(ctx.topo.stateDir, 'etcd');
  return {
    name: 'etcd',
    command: join(ctx.etcdBin, 'etcd'),
    args: [
      '--name=control-plane',
      `--data-dir=${dir}`,
      `--listen-client-urls=http://127.0.0.1:${PORTS.etcdClient}`,
      `--advertise-client-urls=http://127.0.0.1:${PORTS.etcdClient}`,
      `--listen-peer-urls=http://127.0.0.1:${PORTS.etcdPeer}`,
      `--initial-advertise-peer-urls=http://127.0.0.1:${PORTS.etcdPeer}`,
      `--initial-cluster=control-plane=http://127.0.0.1:${PORTS.etcdPeer}`,
      '--listen-metrics-urls=',
      '--quota-backend-bytes=4294967296',
      '--log-level=warn',
    ],
    cgroup: `${CGROUP_PARENT}/control-plane/etcd`,
  };
}

export function apiserverProcess(ctx: ComponentContext): ProcessSpec {
  const { pki } = ctx;
  return {
    name: 'kube-apiserver',
    command: join(ctx.kubeBin, 'kube-apiserver'),
    args: [
      `--advertise-address=${CONTROL_PLANE_IP}`,
      `--bind-address=${CONTROL_PLANE_IP}`,
      `--secure-port=${PORTS.apiserver}`,
      `--etcd-servers=http://127.0.0.1:${PORTS.etcdClient}`,
      `--service-cluster-ip-range=${SERVICE_NETWORK}`,
      `--client-ca-file=${pki.ca.cert}`,
      `--tls-cert-file=${pki.apiserver.cert}`,
      `--tls-private-key-file=${pki.apiserver.key}`,
      `--kubelet-client-certificate=${pki.apiserverKubeletClient.cert}`,
      `--kubelet-client-key=${pki.apiserverKubeletClient.key}`,
      `--kubelet-certificate-authority=${pki.ca.cert}`,
      '--kubelet-preferred-address-types=InternalIP',
      `--service-account-issuer=https://kubernetes.default.svc.${CLUSTER_DOMAIN}`,
      `--service-account-key-file=${pki.serviceAccountPub}`,
      `--service-account-signing-key-file=${pki.serviceAccountKey}`,
      '--authorization-mode=Node,RBAC',
      '--enable-admission-plugins=NodeRestriction',
      `--admission-control-config-file=${admissionConfigPath(ctx.topo)}`,
      '--allow-privileged=true',
      // Pods leave a NotReady or unreachable node after 10 s instead of 5 min, so node-failure tests are quick.
      '--default-not-ready-toleration-seconds=10',
      '--default-unreachable-toleration-seconds=10',
      '--profiling=false',
      '--v=1',
    ],
    cgroup: `${CGROUP_PARENT}/control-plane/kube-apiserver`,
  };
}

export function controllerManagerProcess(ctx: ComponentContext): ProcessSpec {
  const { pki, topo } = ctx;
  const kubeconfig = kubeconfigPath(topo, 'controller-manager');
  return {
    name: 'kube-controller-manager',
    command: join(ctx.kubeBin, 'kube-controller-manager'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${PORTS.controllerManager}`,
      `--cluster-signing-cert-file=${pki.ca.cert}`,
      `--cluster-signing-key-file=${pki.ca.key}`,
      `--root-ca-file=${pki.ca.cert}`,
      `--service-account-private-key-file=${pki.serviceAccountKey}`,
      '--use-service-account-credentials=true',
      '--controllers=*,bootstrapsigner,tokencleaner',
      `--cluster-cidr=${POD_NETWORK}`,
      `--service-cluster-ip-range=${SERVICE_NETWORK}`,
      // Node lifecycle: NotReady 10 s after the last heartbeat (the kubelets renew their Lease every 2 s).
      '--node-monitor-period=2s',
      '--node-monitor-grace-period=10s',
      '--leader-elect=false',
      '--profiling=false',
      '--v=1',
    ],
    cgroup: `${CGROUP_PARENT}/control-plane/kube-controller-manager`,
  };
}

export function schedulerProcess(ctx: ComponentContext): ProcessSpec {
  const kubeconfig = kubeconfigPath(ctx.topo, 'scheduler');
  return {
    name: 'kube-scheduler',
    command: join(ctx.kubeBin, 'kube-scheduler'),
    args: [
      `--kubeconfig=${kubeconfig}`,
      `--authentication-kubeconfig=${kubeconfig}`,
      `--authorization-kubeconfig=${kubeconfig}`,
      '--bind-address=127.0.0.1',
      `--secure-port=${PORTS.scheduler}`,
      '--leader-elect=false',
      '--profiling=false',
      '--v=1',
    ],
    cgroup: `${CGROUP_PARENT}/control-plane/kube-scheduler`,
  };
}

/** Paths of one node's private directories. */
export function nodeDirs(node: NodeTopology) {
  return {
    containerdRoot: join(node.dir, 'containerd', 'root'),
    containerdState: join(node.dir, 'containerd', 'state'),
    containerdConfig: join(node.dir, 'containerd', 'config.toml'),
    registryHosts: join(node.dir, 'containerd', 'certs.d'),
    cniConf: join(node.dir, 'cni', 'net.d'),
    cniIpam: join(node.dir, 'cni', 'ipam'),
    kubeletRoot: join(node.dir, 'kubelet'),
    kubeletConfig: join(node.dir, 'kubelet-config.json'),
    podLogs: join(node.dir, 'pod-logs'),
    volumes: join(node.dir, 'volumes'),
  };
}

export async function writeNodeConfig(ctx: ComponentContext, node: NodeTopology): Promise<void> {
  const dirs = nodeDirs(node);
  for (const d of [dirs.containerdRoot, dirs.containerdState, dirs.cniConf, dirs.cniIpam, dirs.kubeletRoot, dirs.podLogs, dirs.volumes, dirs.registryHosts]) {
    await mkdir(d, { recursive: true });
  }
  await writeFile(
    dirs.containerdConfig,
    `version = 2
root = "${dirs.containerdRoot}"
state = "${dirs.containerdState}"

[grpc]
  address = "${node.containerdSocket}"

[plugins."io.containerd.grpc.v1.cri"]
  sandbox_image = "${pauseImage}"
  # Pod network namespaces live under this node's state, not in the host's /var/run/netns.
  netns_mounts_under_state_dir = true
  # These machines withhold CAP_SYS_RESOURCE, so no process may lower its OOM score: clamp the kubelet's
  # negative scores (sandboxes, Guaranteed pods) to containerd's own, as kind does for rootless nodes.
  restrict_oom_score_adj = true
  [plugins."io.containerd.grpc.v1.cri".containerd]
    snapshotter = "overlayfs"
    default_runtime_name = "runc"
    [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc]
      runtime_type = "io.containerd.runc.v2"
      [plugins."io.containerd.grpc.v1.cri".containerd.runtimes.runc.options]
        SystemdCgroup = false
  [plugins."io.containerd.grpc.v1.cri".cni]
    bin_dir = "${CNI_BIN_DIR}"
    conf_dir = "${dirs.cniConf}"
    max_conf_num = 1
  [plugins."io.containerd.grpc.v1.cri".registry]
    config_path = "${dirs.registryHosts}"
`,
  );
  // The only registry a node knows is localkube's own refusal endpoint (registry.ts): images come from
  // \`localkube load-image\`, and no pull may leave the machine.
  for (const host of ['docker.io', 'registry.k8s.io', 'gcr.io', 'quay.io', 'ghcr.io', 'registry-1.docker.io', 'k8s.gcr.io', 'public.ecr.aws', 'mcr.microsoft.com']) {
    await mkdir(join(dirs.registryHosts, host), { recursive: true });
    await writeFile(
      join(dirs.registryHosts, host, 'hosts.toml'),
      `server = "http://127.0.0.1:${ctx.registryPort}"\n\n[host."http://127.0.0.1:${ctx.registryPort}"]\n  capabilities = ["pull", "resolve"]\n`,
    );
  }
  await writeFile(
    join(dirs.cniConf, '10-localkube.conflist'),
    JSON.stringify(
      {
        cniVersion: '1.0.0',
        name: 'localkube',
        plugins: [
          {
            type: 'bridge',
            bridge: node.bridge,
            isGateway: true,
            ipMasq: false,
            hairpinMode: true,
            ipam: {
              type: 'host-local',
              ranges: [[{ subnet: node.podCIDR, gateway: node.podGateway }]],
              routes: [{ dst: '0.0.0.0/0' }],
              dataDir: dirs.cniIpam,
            },
          },
        ],
      },
      null,
      2,
    ),
  );
  const pki = ctx.pki;
  await writeFile(
    dirs.kubeletConfig,
    JSON.stringify(
      {
        apiVersion: 'kubelet.config.k8s.io/v1beta1',
        kind: 'KubeletConfiguration',
        address: node.ip,
        port: PORTS.kubelet,
        readOnlyPort: 0,
        healthzBindAddress: node.ip,
        healthzPort: PORTS.kubeletHealthz,
        authentication: { anonymous: { enabled: false }, webhook: { enabled: true }, x509: { clientCAFile: pki.ca.cert } },
        authorization: { mode: 'Webhook' },
        tlsCertFile: pki.nodeServing[node.name]!.cert,
        tlsPrivateKeyFile: pki.nodeServing[node.name]!.key,
        containerRuntimeEndpoint: `unix://${node.containerdSocket}`,
        cgroupDriver: 'cgroupfs',
        cgroupRoot: `/${node.cgroup}`,
        cgroupsPerQOS: true,
        // These hosts mount cgroup v1; Kubernetes 1.34 still supports it when told so.
        failCgroupV1: false,
        failSwapOn: false,
        clusterDNS: [DNS_SERVICE_IP],
        clusterDomain: CLUSTER_DOMAIN,
        // An empty resolv.conf: pods with dnsPolicy Default (CoreDNS itself) get no upstream resolver.
        resolvConf: join(ctx.topo.stateDir, 'resolv.conf'),
        podLogsDir: dirs.podLogs,
        // Nodes share one disk: thresholds sized for a real node would evict everything at once.
        evictionHard: { 'memory.available': '100Mi', 'nodefs.available': '1%', 'imagefs.available': '1%', 'nodefs.inodesFree': '1%' },
        imageGCHighThresholdPercent: 100,
        imageGCLowThresholdPercent: 99,
        serializeImagePulls: false,
        nodeStatusUpdateFrequency: '4s',
        nodeStatusReportFrequency: '10s',
        nodeLeaseDurationSeconds: 8,
        syncFrequency: '10s',
        fileCheckFrequency: '10s',
        maxPods: 110,
        shutdownGracePeriod: '0s',
        rotateCertificates: false,
        serverTLSBootstrap: false,
        registerNode: true,
        volumeStatsAggPeriod: '30s',
      },
      null,
      2,
    ),
  );
}

export function containerdProcess(node: NodeTopology): ProcessSpec {
  return {
    name: `${node.name}-containerd`,
    command: CONTAINERD,
    args: ['--config', nodeDirs(node).containerdConfig, '--log-level', 'warn'],
    cgroup: `${node.cgroup}/runtime`,
  };
}

export function kubeletProcess(ctx: ComponentContext, node: NodeTopology): ProcessSpec {
  const dirs = nodeDirs(node);
  return {
    name: `${node.name}-kubelet`,
    command: join(ctx.kubeBin, 'kubelet'),
    args: [
      `--config=${dirs.kubeletConfig}`,
      `--kubeconfig=${kubeconfigPath(ctx.topo, node.name)}`,
      `--hostname-override=${node.name}`,
      `--node-ip=${node.ip}`,
      `--root-dir=${dirs.kubeletRoot}`,
      `--cert-dir=${join(dirs.kubeletRoot, 'pki')}`,
      `--node-labels=topology.kubernetes.io/zone=${node.zone},topology.kubernetes.io/region=localkube`,
      '--v=1',
    ],
    cgroup: `${node.cgroup}/kubelet`,
  };
}

export async function kubeProxyProcess(ctx: ComponentContext): Promise<ProcessSpec> {
  const config = join(ctx.topo.stateDir, 'kube-proxy-config.json');
  await writeFile(
    config,
    JSON.stringify(
      {
        apiVersion: 'kubeproxy.config.k8s.io/v1alpha1',
        kind: 'KubeProxyConfiguration',
        clientConnection: { kubeconfig: kubeconfigPath(ctx.topo, 'kube-proxy') },
        mode: 'iptables',
        clusterCIDR: POD_NETWORK,
        hostnameOverride: ctx.topo.nodes[0]!.name,
        healthzBindAddress: `127.0.0.1:${PORTS.kubeProxyHealthz}`,
        metricsBindAddress: `127.0.0.1:${PORTS.kubeProxyMetrics}`,
        // Leave the host's conntrack sysctls alone.
        conntrack: { maxPerCore: 0, min: 0 },
        iptables: { syncPeriod: '10s', minSyncPeriod: '0s' },
        nodePortAddresses: [`${CONTROL_PLANE_IP}/32`],
      },
      null,
      2,
    ),
  );
  return {
    name: 'kube-proxy',
    command: join(ctx.kubeBin, 'kube-proxy'),
    args: [`--config=${config}`, '--v=1'],
    cgroup: `${CGROUP_PARENT}/control-plane/kube-proxy`,
  };
}

/**
 * The NetworkPolicy agent: kube-router's network policy controller (tools/kube-router). One for all nodes, as
 * kube-proxy is, because the nodes share one network stack: it firewalls every node's pods, shown to it as
 * the first node's (see tools/kube-router/main.go for why agents per node cannot share a stack).
 */
export function networkPolicyProcess(ctx: ComponentContext): ProcessSpec {
  return {
    name: 'network-policy',
    command: join(ctx.kubeRouterBin, 'kube-router'),
    args: [
      `--kubeconfig=${kubeconfigPath(ctx.topo, 'network-policy')}`,
      `--node=${ctx.topo.nodes[0]!.name}`,
      `--service-cluster-ip-range=${SERVICE_NETWORK}`,
      `--hook-prefix=${IPTABLES_POLICY_CHAIN_PREFIX}`,
      // At --v=1 it logs about ten lines per sync, and it syncs on every pod change.
      '--v=0',
    ],
    cgroup: `${CGROUP_PARENT}/control-plane/network-policy`,
  };
}
