// cgroup v1 hierarchies (plus the unified v2 one these hosts mount beside them). Every process localkube
// starts is placed under `localkube/…` in all of them before it runs, so that a node's processes (kubelet,
// containerd, shims and containers) can be found, frozen and killed together, and so that an iptables
// cgroup match can fence all of localkube's host traffic in.
import { mkdir, readFile, readdir, rmdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';

const ROOT = '/sys/fs/cgroup';

let hierarchies: Promise<string[]> | undefined;

/** Mount points of every cgroup hierarchy (v1 controllers and the unified v2 one). */
export function cgroupHierarchies(): Promise<string[]> {
  hierarchies ??= (async () => {
    const mounts = await readFile('/proc/self/mountinfo', 'utf8');
    const points = mounts
      .split('\n')
      .map((line) => line.split(' '))
      .filter((f) => {
        const sep = f.indexOf('-');
        return sep > 0 && (f[sep + 1] === 'cgroup' || f[sep + 1] === 'cgroup2') && f[4]?.startsWith(ROOT);
      })
      .map((f) => f[4]!);
    return [...new Set(points)];
  })();
  return hierarchies;
}

export async function unifiedHierarchy(): Promise<string | undefined> {
  const all = await cgroupHierarchies();
  return all.find((p) => p.endsWith('/unified')) ?? (all.length === 1 ? all[0] : undefined);
}

/** Creates `path` (relative, e.g. `localkube/node-1`) in every hierarchy. */
export async function createCgroup(path: string): Promise<void> {
  for (const h of await cgroupHierarchies()) {
    const parts = path.split('/');
    for (let i = 1; i <= parts.length; i++) {
      const dir = join(h, ...parts.slice(0, i));
      await mkdir(dir, { recursive: true });
      // A new v1 cpuset has no CPUs or memory nodes until it inherits them; tasks cannot join it before.
      if (h.endsWith('/cpuset')) {
        const parent = join(dir, '..');
        for (const f of ['cpuset.cpus', 'cpuset.mems']) {
          const current = (await readFile(join(dir, f), 'utf8')).trim();
          if (!current) await writeFile(join(dir, f), (await readFile(join(parent, f), 'utf8')).trim());
        }
      }
    }
  }
}

/** The cgroup.procs files a process must write its PID to, to join `path` in every hierarchy. */
export async function cgroupProcsFiles(path: string): Promise<string[]> {
  return (await cgroupHierarchies()).map((h) => join(h, path, 'cgroup.procs'));
}

async function subtree(dir: string): Promise<string[]> {
  const out = [dir];
  let entries: import('node:fs').Dirent[];
  try {
    entries = await readdir(dir, { withFileTypes: true });
  } catch {
    return [];
  }
  for (const e of entries) if (e.isDirectory()) out.push(...(await subtree(join(dir, e.name))));
  return out;
}

export async function cgroupPids(path: string): Promise<number[]> {
  const pids = new Set<number>();
  for (const h of await cgroupHierarchies()) {
    for (const dir of await subtree(join(h, path))) {
      try {
        for (const line of (await readFile(join(dir, 'cgroup.procs'), 'utf8')).split('\n')) if (line) pids.add(Number(line));
      } catch {
        /* vanished meanwhile */
      }
    }
  }
  return [...pids];
}

/**
 * Kills every process under `path` at once, as a power cut would: the freezer stops them first so that
 * none can fork or react, then SIGKILL, then thaw so the kills are delivered. Then removes the cgroups.
 */
export async function killCgroup(path: string, options: { remove?: boolean } = {}): Promise<number> {
  const freezer = (await cgroupHierarchies()).find((h) => h.endsWith('/freezer'));
  const state = freezer ? join(freezer, path, 'freezer.state') : undefined;
  let killed = 0;
  for (let round = 0; round < 50; round++) {
    const pids = await cgroupPids(path);
    if (pids.length === 0) break;
    if (state) await writeFile(state, 'FROZEN').catch(() => undefined);
    for (const pid of pids) {
      try {
        process.kill(pid, 'SIGKILL');
        killed++;
      } catch {
        /* already gone */
      }
    }
    if (state) await writeFile(state, 'THAWED').catch(() => undefined);
    await new Promise((r) => setTimeout(r, 100));
  }
  if (options.remove !== false) await removeCgroup(path);
  return killed;
}

/** Removes `path` and everything below it from every hierarchy (they must be empty of processes). */
export async function removeCgroup(path: string): Promise<void> {
  for (const h of await cgroupHierarchies()) {
    const dirs = (await subtree(join(h, path))).reverse();
    for (const dir of dirs) {
      for (let i = 0; i < 20; i++) {
        try {
          await rmdir(dir);
          break;
        } catch (err) {
          if ((err as NodeJS.ErrnoException).code === 'ENOENT') break;
          await new Promise((r) => setTimeout(r, 100));
        }
      }
    }
  }
}
