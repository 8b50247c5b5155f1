// An image archive's files and command on this machine, for a bench that measures an operator process as its
// image runs it (the same compiled files, production dependencies, node flags and environment) without a
// cluster to schedule it on: the layer's /app written into a folder, and the entrypoint rewritten to run there.
// The archives are @quorum/images' own (an OCI layout of uncompressed ustar, one layer), read here in process.
import { mkdir, mkdtemp, readFile, symlink, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import type { ImageArchive, ImageConfig, TarEntry } from '@quorum/images';

export interface UnpackedImage {
  /** The folder that stands for the image's root: its /app is `<root>/app`. */
  root: string;
  /** The entrypoint's arguments after the node binary, with `/app/…` paths under `root`. */
  args: string[];
  /** The image's environment but PATH (the host's node and tools stay reachable). */
  env: Record<string, string>;
}

const BLOCK = 512;
const field = (block: Buffer, offset: number, length: number): string => block.subarray(offset, offset + length).toString('utf8').replace(/\0.*$/s, '');

/** The entries of a ustar archive as @quorum/images writes them (files, directories, symlinks; prefix + name). */
export function untar(archive: Buffer): TarEntry[] {
  const entries: TarEntry[] = [];
  for (let at = 0; at + BLOCK <= archive.length; ) {
    const block = archive.subarray(at, at + BLOCK);
    if (block.every((b) => b === 0)) break;
    const name = field(block, 0, 100);
    const prefix = field(block, 345, 155);
    const path = (prefix ? `${prefix}/${name}` : name).replace(/\/$/, '');
    const mode = parseInt(field(block, 100, 8), 8);
    const size = parseInt(field(block, 124, 12), 8);
    const type = field(block, 156, 1);
    if (type === '5') entries.push({ type: 'dir', path, mode });
    else if (type === '2') entries.push({ type: 'symlink', path, target: field(block, 157, 100) });
    else if (type === '0' || type === '') entries.push({ type: 'file', path, mode, data: archive.subarray(at + BLOCK, at + BLOCK + size) });
    else throw new Error(`untar: ${path} has entry type ${JSON.stringify(type)}, which @quorum/images does not write`);
    at += BLOCK + Math.ceil(size / BLOCK) * BLOCK;
  }
  return entries;
}

/** Unpacks the image's /app into a new folder under `parent` (default: the system's temp dir); remove it when done. */
export async function unpackImage(image: ImageArchive, parent = tmpdir()): Promise<UnpackedImage> {
  const layout = new Map(untar(await readFile(image.archive)).flatMap((e) => (e.type === 'file' ? [[e.path, e.data] as const] : [])));
  const json = <T>(path: string): T => {
    const data = layout.get(path.startsWith('sha256:') ? `blobs/sha256/${path.slice('sha256:'.length)}` : path);
    if (data === undefined) throw new Error(`${image.archive} has no ${path}`);
    return JSON.parse(data.toString('utf8')) as T;
  };
  const manifest = json<{ config: { digest: string }; layers: { digest: string }[] }>(json<{ manifests: { digest: string }[] }>('index.json').manifests[0]!.digest);
  const { config } = json<{ config: ImageConfig }>(manifest.config.digest);
  const layer = layout.get(`blobs/sha256/${manifest.layers[0]!.digest.slice('sha256:'.length)}`)!;
  const root = await mkdtemp(join(parent, 'unpacked-image-'));
  for (const entry of untar(layer).filter((e) => e.path === 'app' || e.path.startsWith('app/'))) {
    const path = join(root, entry.path);
    if (entry.type === 'dir') await mkdir(path, { recursive: true, mode: entry.mode });
    else await mkdir(dirname(path), { recursive: true });
    if (entry.type === 'file') await writeFile(path, entry.data, { mode: entry.mode });
    if (entry.type === 'symlink') await symlink(entry.target, path);
  }
  const [, ...args] = config.Entrypoint ?? [];
  const env = Object.fromEntries((config.Env ?? []).map((kv) => [kv.slice(0, kv.indexOf('=')), kv.slice(kv.indexOf('=') + 1)]));
  delete env['PATH'];
  return { root, args: args.map((a) => (a.startsWith('/app/') ? join(root, a) : a)), env };
}
