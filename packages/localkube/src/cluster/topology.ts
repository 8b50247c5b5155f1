// Names, addresses and ports of one local cluster. Everything localkube creates on the host is derived
// from here, so that `down` can find and remove all of it.
//
// Ranges: 10.215.0.0/16 holds the control plane and node addresses (on a portless bridge), 10.216.0.0/16
// the pods (a /24 per node on one bridge), 10.217.0.0/16 the Services. Routes that lead nowhere cover all
// three, so no packet for them can leave the machine.
import { join } from 'node:path';

export const NODE_NETWORK = '10.215.0.0/16';
export const POD_NETWORK = '10.216.0.0/16';
export const SERVICE_NETWORK = '10.217.0.0/16';
export const CONTROL_PLANE_IP = '10.215.0.1';
export const KUBERNETES_SERVICE_IP = '10.217.0.1';
export const DNS_SERVICE_IP = '10.217.0.10';
export const CLUSTER_DOMAIN = 'cluster.local';

/** Host objects named here are localkube's and nothing else's. */
export const HOST_INTERFACE = 'lkube0';
/** Each node's pods sit on their own bridge, `lkube-br<N>`, as each real node has its own. */
export const BRIDGE_PREFIX = 'lkube-br';
export const IPTABLES_FAULT_CHAIN = 'LOCALKUBE-FAULTS';
export const IPTABLES_EGRESS_CHAIN = 'LOCALKUBE-EGRESS';
/**
 * The NetworkPolicy agent's hooks: `LOCALKUBE-POLICY-INPUT`, `-FORWARD`, `-OUTPUT` stand in for the built-in
 * chains kube-router would hook (tools/kube-router/main.go), so its ACCEPTs come after the egress fence.
 */
export const IPTABLES_POLICY_CHAIN_PREFIX = 'LOCALKUBE-POLICY-';
/** The ipsets of the NetworkPolicy agent (kube-router's own prefixes for its policies' sets). */
export const POLICY_IPSET_PREFIXES = ['KUBE-SRC-', 'KUBE-DST-'] as const;
export const CGROUP_PARENT = 'localkube';

export const PORTS = {
  etcdClient: 22379,
  etcdPeer: 22380,
  apiserver: 6443,
  controllerManager: 10257,
  scheduler: 10259,
  kubeProxyHealthz: 10256,
  kubeProxyMetrics: 10249,
  kubelet: 10250,
  kubeletHealthz: 10248,
  /** localkube's registry stand-in that refuses every pull (registry.ts). */
  registry: 25000,
} as const;

export interface NodeTopology {
  name: string;
  index: number;
  ip: string;
  podCIDR: string;
  podGateway: string;
  zone: string;
  dir: string;
  containerdSocket: string;
  cgroup: string;
  bridge: string;
}

export interface Topology {
  stateDir: string;
  nodes: NodeTopology[];
  apiserverURL: string;
}

export function topology(stateDir: string, nodeCount: number): Topology {
  if (!Number.isInteger(nodeCount) || nodeCount < 1 || nodeCount > 9) throw new Error(`localkube: --nodes must be 1 to 9, got ${nodeCount}`);
  const nodes = Array.from({ length: nodeCount }, (_, i): NodeTopology => {
    const index = i + 1;
    const name = `node-${index}`;
    const dir = join(stateDir, 'nodes', name);
    return {
      name,
      index,
      ip: `10.215.0.${10 + index}`,
      podCIDR: `10.216.${index}.0/24`,
      podGateway: `10.216.${index}.1`,
      zone: `zone-${String.fromCharCode(96 + index)}`,
      dir,
      containerdSocket: join(dir, 'containerd', 'containerd.sock'),
      cgroup: `${CGROUP_PARENT}/${name}`,
      bridge: `${BRIDGE_PREFIX}${index}`,
    };
  });
  return { stateDir, nodes, apiserverURL: `https://${CONTROL_PLANE_IP}:${PORTS.apiserver}` };
}
