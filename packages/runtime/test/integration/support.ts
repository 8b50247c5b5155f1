// Faults for the runtime's integration tests, made with the host's own tools: silencing chosen TCP
// connections to the API server (iptables DROP both ways), compacting the API server's etcd.
import { join } from 'node:path';
import { binCache } from '../../../localkube/src/paths.ts';
import { CONTROL_PLANE_IP, PORTS } from '../../../localkube/src/cluster/topology.ts';
import { versions } from '@quorum/localkube';
import { run } from '../../../localkube/src/exec.ts';

const ruleFor = (localPort: number): string[][] => [
  ['-p', 'tcp', '-s', CONTROL_PLANE_IP, '--sport', String(PORTS.apiserver), '--dport', String(localPort), '-j', 'DROP'],
  ['-p', 'tcp', '-d', CONTROL_PLANE_IP, '--dport', String(PORTS.apiserver), '--sport', String(localPort), '-j', 'DROP'],
];

/** Drops every packet of the given connections (by local port): they go silent, neither closed nor answered. */
export async function silence(localPorts: number[]): Promise<() => Promise<void>> {
  const rules = localPorts.flatMap(ruleFor);
  for (const rule of rules) await run('iptables', ['-w', '-I', 'OUTPUT', ...rule]);
  return async () => {
    for (const rule of rules) await run('iptables', ['-w', '-D', 'OUTPUT', ...rule], { allowFailure: true });
  };
}

const etcdctl = (): string => join(binCache, `etcd-${versions.CONTROL_PLANE_ETCD}`, 'etcdctl');

/** Compacts the API server's etcd up to its current revision: every older resourceVersion is gone. */
export async function compactControlPlaneEtcd(): Promise<number> {
  const endpoint = `--endpoints=http://127.0.0.1:${PORTS.etcdClient}`;
  const status = JSON.parse((await run(etcdctl(), [endpoint, 'endpoint', 'status', '-w', 'json'])).stdout) as { Status: { header: { revision: number } } }[];
  const revision = status[0]!.Status.header.revision;
  await run(etcdctl(), [endpoint, 'compact', String(revision), '--physical']);
  return revision;
}
