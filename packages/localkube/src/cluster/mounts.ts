// Mounts made under a state directory (kubelet volumes, container root filesystems, pod network namespaces):
// listed from the kernel's own table and unmounted deepest first.
import { readFile } from 'node:fs/promises';
import { hostCommand } from '@quorum/images';
import { run } from '../exec.ts';

const UMOUNT = hostCommand('umount', 'mount', 'unmounting what a cluster left under its state directory');

/** Mount points at or below `dir`, deepest first. */
export async function mountsUnder(dir: string): Promise<string[]> {
  const table = await readFile('/proc/self/mountinfo', 'utf8');
  const prefix = dir.endsWith('/') ? dir : `${dir}/`;
  const points = table
    .split('\n')
    .map((line) => line.split(' ')[4])
    .filter((p): p is string => p !== undefined)
    // mountinfo escapes spaces and the like as octal.
    .map((p) => p.replace(/\\([0-7]{3})/g, (_, o: string) => String.fromCharCode(parseInt(o, 8))))
    .filter((p) => p === dir || p.startsWith(prefix));
  return [...new Set(points)].sort((a, b) => b.length - a.length);
}

export async function unmountUnder(dir: string): Promise<void> {
  for (let round = 0; round < 10; round++) {
    const points = await mountsUnder(dir);
    if (points.length === 0) return;
    for (const point of points) {
      const plain = await run(UMOUNT, [point], { allowFailure: true });
      if (plain.exitCode !== 0) await run(UMOUNT, ['-l', point], { allowFailure: true });
    }
  }
  const left = await mountsUnder(dir);
  if (left.length > 0) throw new Error(`could not unmount: ${left.join(', ')}`);
}
