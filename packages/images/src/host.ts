// Host prerequisites from one source. Every module that reads a host file or runs a host command declares
// it where it does so, with the Debian package that provides it, by wrapping the path or name it uses:
//
//   const ETCD = hostFile('/usr/bin/etcd', 'etcd-server', 'etcd 3.4 image for upgrade tests');
//
// The declarations collect in this one registry as their modules load, so whoever runs the code (localkube's
// `up`) installs exactly what the loaded code declared, and a unit test checks each path against `dpkg -S`
// and the sources against the registry. A fresh Debian 12 machine failed because a file read by the image
// catalog (etcdctl) was missing from a list kept by hand somewhere else.

export interface HostPrerequisite {
  kind: 'file' | 'command';
  /** An absolute path (file) or a command name looked up on PATH. */
  name: string;
  /** The Debian package that provides it, or null for what the machine brings itself (Go). */
  debianPackage: string | null;
  /** Why it is needed, for the message that names what is missing (every declaring site, joined). */
  why: string;
}

const registry = new Map<string, HostPrerequisite>();

function declare(p: HostPrerequisite): string {
  const key = `${p.kind}:${p.name}`;
  const known = registry.get(key);
  if (!known) registry.set(key, { ...p });
  else if (known.debianPackage !== p.debianPackage) {
    // Two sites disagreeing on the package is a bug in one of them: say so at load time.
    throw new Error(`host ${p.kind} ${p.name} is declared from ${known.debianPackage ?? 'no package'} and from ${p.debianPackage ?? 'no package'}`);
  } else if (!known.why.split('; ').includes(p.why)) known.why += `; ${p.why}`;
  return p.name;
}

/** Declares a host file that the calling module reads; returns `path` so the code uses the declared value. */
export function hostFile(path: string, debianPackage: string, why: string): string {
  if (!path.startsWith('/')) throw new Error(`hostFile: ${path} is not an absolute path`);
  return declare({ kind: 'file', name: path, debianPackage, why });
}

/**
 * Declares a command that the calling module runs (or that a program it starts runs, such as kube-proxy's
 * iptables); returns `name`. `debianPackage` null marks a prerequisite that no Debian package provides here.
 */
export function hostCommand(name: string, debianPackage: string | null, why: string): string {
  if (name.includes('/')) throw new Error(`hostCommand: ${name} is a path; declare it with hostFile`);
  return declare({ kind: 'command', name, debianPackage, why });
}

/** Everything declared by the modules loaded so far, in declaration order. */
export function hostPrerequisites(): HostPrerequisite[] {
  return [...registry.values()].map((p) => ({ ...p }));
}

export function isDeclaredHostFile(path: string): boolean {
  return registry.has(`file:${path}`);
}
