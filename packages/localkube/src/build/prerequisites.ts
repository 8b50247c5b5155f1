// Host prerequisites that come from Debian packages. `up` installs what is missing (as root, with apt-get)
// or stops with a message naming exactly what is missing.
import { access, constants } from 'node:fs/promises';
import { commandExists, run } from '../exec.ts';
import { progress } from '../progress.ts';

interface Prerequisite {
  /** A file that must exist (absolute path) or a command that must be on PATH. */
  check: string;
  debianPackage: string;
  why: string;
}

const PREREQUISITES: readonly Prerequisite[] = [
  { check: 'containerd', debianPackage: 'containerd', why: 'container runtime of every node' },
  { check: 'containerd-shim-runc-v2', debianPackage: 'containerd', why: 'containerd runc shim' },
  { check: 'ctr', debianPackage: 'containerd', why: 'image import into each node' },
  { check: 'runc', debianPackage: 'runc', why: 'OCI runtime' },
  { check: '/usr/lib/cni/bridge', debianPackage: 'containernetworking-plugins', why: 'pod network (bridge)' },
  { check: '/usr/lib/cni/host-local', debianPackage: 'containernetworking-plugins', why: 'pod IP allocation' },
  { check: '/usr/lib/cni/loopback', debianPackage: 'containernetworking-plugins', why: 'pod loopback' },
  { check: 'iptables', debianPackage: 'iptables', why: 'kube-proxy and fault injection' },
  { check: 'conntrack', debianPackage: 'conntrack', why: 'kube-proxy stale UDP flow cleanup' },
  { check: 'ip', debianPackage: 'iproute2', why: 'node addresses and routes' },
  { check: 'openssl', debianPackage: 'openssl', why: 'cluster certificates' },
  { check: '/usr/bin/etcd', debianPackage: 'etcd-server', why: 'etcd 3.4 image for upgrade tests' },
  { check: 'go', debianPackage: '', why: 'building Kubernetes, etcd and CoreDNS from the Go module proxy (Go ≥ 1.24)' },
];

async function present(p: Prerequisite): Promise<boolean> {
  if (p.check.startsWith('/')) {
    try {
      await access(p.check, constants.X_OK);
      return true;
    } catch {
      return false;
    }
  }
  return commandExists(p.check);
}

async function missing(): Promise<Prerequisite[]> {
  const results = await Promise.all(PREREQUISITES.map(async (p) => ((await present(p)) ? null : p)));
  return results.filter((p): p is Prerequisite => p !== null);
}

export async function ensurePrerequisites(): Promise<void> {
  let absent = await missing();
  const installable = [...new Set(absent.map((p) => p.debianPackage).filter(Boolean))];
  if (installable.length > 0 && process.getuid?.() === 0 && (await commandExists('apt-get'))) {
    progress(`installing Debian packages: ${installable.join(' ')}`);
    const env = { ...process.env, DEBIAN_FRONTEND: 'noninteractive' };
    await run('apt-get', ['update', '-q'], { env });
    await run('apt-get', ['install', '-y', '-q', '--no-install-recommends', ...installable], { env });
    absent = await missing();
  }
  if (absent.length > 0) {
    const lines = absent.map((p) => `  - ${p.check}${p.debianPackage ? ` (Debian package ${p.debianPackage})` : ''}: ${p.why}`);
    throw new Error(`localkube: missing build prerequisites:\n${lines.join('\n')}`);
  }
}
