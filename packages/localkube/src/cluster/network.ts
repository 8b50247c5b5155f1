// Host networking of a local cluster: the node addresses, the routes that keep every localkube range on
// this machine, the egress fence, the NetworkPolicy agent's hooks, and the fault-injection chain.
// `teardownNetwork` removes all of it (the agent's rules and ipsets too) and is safe to run any number of
// times, also after a crash.
import { readFile, writeFile } from 'node:fs/promises';
import { hostCommand } from '@quorum/images';
import { output, run } from '../exec.ts';
import { createCgroup } from './cgroups.ts';
import {
  BRIDGE_PREFIX,
  CGROUP_PARENT,
  CONTROL_PLANE_IP,
  HOST_INTERFACE,
  IPTABLES_EGRESS_CHAIN,
  IPTABLES_FAULT_CHAIN,
  IPTABLES_POLICY_CHAIN_PREFIX,
  NODE_NETWORK,
  POD_NETWORK,
  POLICY_IPSET_PREFIXES,
  SERVICE_NETWORK,
  type NodeTopology,
  type Topology,
} from './topology.ts';

const IP = hostCommand('ip', 'iproute2', 'node addresses and routes');
const IPTABLES = hostCommand('iptables', 'iptables', 'egress fence and fault injection');
// Teardown saves and restores whole tables, IPv4 and IPv6 (removeOurRules).
const SAVE = {
  iptables: hostCommand('iptables-save', 'iptables', 'removing our rules at teardown'),
  ip6tables: hostCommand('ip6tables-save', 'iptables', 'removing our rules at teardown'),
};
const RESTORE = {
  iptables: hostCommand('iptables-restore', 'iptables', 'removing our rules at teardown'),
  ip6tables: hostCommand('ip6tables-restore', 'iptables', 'removing our rules at teardown'),
};

const IPSET = hostCommand('ipset', 'ipset', "removing the NetworkPolicy agent's address sets at teardown");

const ip = (...args: string[]): Promise<unknown> => run(IP, args);
const iptables = (...args: string[]): Promise<unknown> => run(IPTABLES, ['-w', ...args]);
const tryIptables = async (...args: string[]): Promise<boolean> =>
  (await run(IPTABLES, ['-w', ...args], { allowFailure: true })).exitCode === 0;

async function sysctl(key: string, value: string): Promise<void> {
  await writeFile(`/proc/sys/${key.replaceAll('.', '/')}`, value);
}

const POLICY_HOOKS = ['INPUT', 'FORWARD', 'OUTPUT'] as const;
const policyChain = (builtin: (typeof POLICY_HOOKS)[number]): string => `${IPTABLES_POLICY_CHAIN_PREFIX}${builtin}`;

/** The jumps from the built-in chains into ours, as [table, chain, ...rule]; each is inserted first, so the last listed is evaluated first. */
function jumps(): string[][] {
  return [
    // The NetworkPolicy agent ACCEPTs what a policy allows: after the egress fence, never before it.
    ...POLICY_HOOKS.map((chain) => ['filter', chain, '-j', policyChain(chain)]),
    // Every process localkube starts (and so every host-network pod, shim and CNI plugin) may reach only
    // loopback and localkube's own ranges; pods likewise when their packets are forwarded.
    ['filter', 'OUTPUT', '-m', 'cgroup', '--path', CGROUP_PARENT, '-j', IPTABLES_EGRESS_CHAIN],
    ['filter', 'FORWARD', '-s', POD_NETWORK, '-j', IPTABLES_EGRESS_CHAIN],
    // Faults live in mangle, which runs before filter: the agent rewrites the whole filter table on every sync
    // (iptables-restore), and a fault rule added meanwhile would be lost; nor may its ACCEPTs pass a cut node.
    ['mangle', 'FORWARD', '-j', IPTABLES_FAULT_CHAIN],
    ['mangle', 'INPUT', '-j', IPTABLES_FAULT_CHAIN],
    ['mangle', 'OUTPUT', '-j', IPTABLES_FAULT_CHAIN],
  ];
}

export async function setupNetwork(topo: Topology): Promise<void> {
  await sysctl('net.ipv4.ip_forward', '1');
  // Bridged pod-to-pod traffic must pass iptables so that Service DNAT is undone on the way back.
  await sysctl('net.bridge.bridge-nf-call-iptables', '1');

  // A bridge without ports: it holds the addresses, and what is routed into it goes nowhere.
  await ip('link', 'add', HOST_INTERFACE, 'type', 'bridge');
  await ip('link', 'set', HOST_INTERFACE, 'up');
  await ip('addr', 'add', `${CONTROL_PLANE_IP}/32`, 'dev', HOST_INTERFACE);
  for (const node of topo.nodes) await ip('addr', 'add', `${node.ip}/32`, 'dev', HOST_INTERFACE);

  // Unassigned node and pod addresses go nowhere. Service addresses are routed into that bridge,
  // which has no ports and so drops everything: a blackhole route would fail connect() before kube-proxy's DNAT could apply.
  await ip('route', 'add', 'blackhole', NODE_NETWORK);
  await ip('route', 'add', 'blackhole', POD_NETWORK);
  await ip('route', 'add', SERVICE_NETWORK, 'dev', HOST_INTERFACE);

  // The cgroup match resolves its path when the rule is added: the cgroup must exist first.
  await createCgroup(CGROUP_PARENT);
  await iptables('-N', IPTABLES_EGRESS_CHAIN);
  for (const dst of ['127.0.0.0/8', NODE_NETWORK, POD_NETWORK, SERVICE_NETWORK]) await iptables('-A', IPTABLES_EGRESS_CHAIN, '-d', dst, '-j', 'RETURN');
  await iptables('-A', IPTABLES_EGRESS_CHAIN, '-j', 'REJECT');
  for (const chain of POLICY_HOOKS) await iptables('-N', policyChain(chain));
  await iptables('-t', 'mangle', '-N', IPTABLES_FAULT_CHAIN);
  for (const [table, chain, ...rule] of jumps()) await iptables('-t', table!, '-I', chain!, '1', ...rule);
}

/** Whether the NetworkPolicy agent has hooked its chains into all of ours (it does so first when it starts). */
export async function policyAgentHooked(): Promise<boolean> {
  for (const chain of POLICY_HOOKS) {
    const rules = await run(IPTABLES, ['-w', '-S', policyChain(chain)], { allowFailure: true });
    if (!rules.stdout.includes('-j KUBE-ROUTER-')) return false;
  }
  return true;
}

const isPolicySet = (name: string): boolean => POLICY_IPSET_PREFIXES.some((prefix) => name.startsWith(prefix));

/** The NetworkPolicy agent's ipsets on the host (none without ipset installed: then the agent never ran). */
async function policySets(): Promise<string[]> {
  const listed = await run(IPSET, ['list', '-n'], { allowFailure: true }).catch(() => undefined);
  return (listed?.stdout ?? '').split('\n').filter(isPolicySet);
}

/** Chains of localkube, kube-proxy, the kubelet and CNI: all of them are this cluster's (one per machine). */
const OUR_CHAIN = /(^|[\s:])(LOCALKUBE-|KUBE-|CNI-)/;

/**
 * Removes every chain and rule of ours from every table, IPv4 and IPv6, by restoring each table without
 * them: one atomic write per table that leaves everyone else's rules as they were.
 */
async function removeOurRules(): Promise<void> {
  for (const family of ['iptables', 'ip6tables'] as const) {
    for (const table of ['filter', 'nat', 'mangle', 'raw']) {
      const saved = await run(SAVE[family], ['-t', table], { allowFailure: true });
      if (saved.exitCode !== 0 || !OUR_CHAIN.test(saved.stdout)) continue;
      const kept = saved.stdout.split('\n').filter((line) => !OUR_CHAIN.test(line));
      await run(RESTORE[family], ['-w', '-T', table], { input: kept.join('\n') + '\n' });
    }
  }
}

export async function teardownNetwork(): Promise<void> {
  await removeOurRules();
  // Only once no rule refers to them: a set in use cannot be destroyed.
  for (const set of await policySets()) await run(IPSET, ['destroy', set], { allowFailure: true });
  for (const route of [['blackhole', NODE_NETWORK], ['blackhole', POD_NETWORK], [SERVICE_NETWORK]]) {
    await run(IP, ['route', 'del', ...route], { allowFailure: true });
  }
  const links = await output(IP, ['-o', 'link', 'show']);
  for (const match of links.matchAll(/^\d+: ([^:@]+)[:@]/gm)) {
    const name = match[1]!;
    if (name === HOST_INTERFACE || name.startsWith(BRIDGE_PREFIX)) await run(IP, ['link', 'del', name], { allowFailure: true });
  }
}

/** What of localkube's networking is present on the host (empty when it is all gone). */
export async function leftoverNetwork(): Promise<string[]> {
  const found: string[] = [];
  const links = await output(IP, ['-o', 'link', 'show']);
  for (const match of links.matchAll(/^\d+: ([^:@]+)[:@]/gm)) {
    if (match[1] === HOST_INTERFACE || match[1]!.startsWith(BRIDGE_PREFIX)) found.push(`link ${match[1]}`);
  }
  const routes = await output(IP, ['route', 'show', 'table', 'all']);
  for (const range of [NODE_NETWORK, POD_NETWORK, SERVICE_NETWORK, '10.216.']) {
    for (const line of routes.split('\n')) if (line.includes(range.replace('/16', '')) && !found.includes(`route ${line}`)) found.push(`route ${line}`);
  }
  for (const family of ['iptables', 'ip6tables'] as const) {
    const rules = await run(SAVE[family], [], { allowFailure: true });
    for (const line of rules.stdout.split('\n')) if (OUR_CHAIN.test(line)) found.push(`${family} ${line}`);
  }
  for (const set of await policySets()) found.push(`ipset ${set}`);
  return found;
}

/** Fault: drop every packet to or from `node`'s pods (a partition of its pod network). */
export async function cutNodeNetwork(node: NodeTopology): Promise<void> {
  for (const dir of ['-s', '-d']) {
    const rule = [IPTABLES_FAULT_CHAIN, dir, node.podCIDR, '-j', 'DROP'];
    if (!(await tryIptables('-t', 'mangle', '-C', ...rule))) await iptables('-t', 'mangle', '-A', ...rule);
  }
}

export async function restoreNodeNetwork(node: NodeTopology): Promise<void> {
  for (const dir of ['-s', '-d']) while (await tryIptables('-t', 'mangle', '-D', IPTABLES_FAULT_CHAIN, dir, node.podCIDR, '-j', 'DROP'));
}

/** The host must not already run another localkube (the names and ranges above are machine-wide). */
export async function networkInUse(): Promise<boolean> {
  const links = await readFile('/proc/net/dev', 'utf8');
  return links.includes(`${HOST_INTERFACE}:`);
}
