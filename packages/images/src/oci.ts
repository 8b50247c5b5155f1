// OCI image archives assembled in process: one uncompressed layer, a config, a manifest, and an index
// whose annotations carry the name users pull by, so `ctr images import` stores it under that name.
import { createHash } from 'node:crypto';
import { lstat, readFile, readdir, readlink } from 'node:fs/promises';
import { join, posix } from 'node:path';
import { tar, type TarEntry } from './tar.ts';

export interface ImageConfig {
  Entrypoint?: string[];
  Cmd?: string[];
  Env?: string[];
  User?: string;
  WorkingDir?: string;
  ExposedPorts?: Record<string, Record<string, never>>;
  Labels?: Record<string, string>;
}

export interface ImageSpec {
  /** The full reference users would use, e.g. `gcr.io/etcd-development/etcd:v3.6.16`. */
  name: string;
  /** Layer contents; parent directories are added automatically. */
  entries: TarEntry[];
  config: ImageConfig;
}

const sha256 = (data: Buffer | string): string => `sha256:${createHash('sha256').update(data).digest('hex')}`;

function withParents(entries: readonly TarEntry[]): TarEntry[] {
  const dirs = new Map<string, TarEntry>();
  const rest: TarEntry[] = [];
  for (const entry of entries) {
    const path = entry.path.replace(/^\/+/, '').replace(/\/+$/, '');
    const parts = path.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (!dirs.has(dir)) dirs.set(dir, { type: 'dir', path: dir, mode: 0o755 });
    }
    if (entry.type === 'dir') dirs.set(path, { ...entry, path });
    else rest.push({ ...entry, path });
  }
  const byPath = (a: TarEntry, b: TarEntry): number => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0);
  return [...[...dirs.values()].sort(byPath), ...rest.sort(byPath)];
}

/** Builds the OCI archive (a tar of an OCI image layout) for `spec`; same spec, same bytes. */
export function buildImageArchive(spec: ImageSpec): Buffer {
  const layer = tar(withParents(spec.entries));
  const layerDigest = sha256(layer);
  const config = Buffer.from(
    JSON.stringify({
      created: '1970-01-01T00:00:00Z',
      architecture: 'amd64',
      os: 'linux',
      config: spec.config,
      rootfs: { type: 'layers', diff_ids: [layerDigest] },
      history: [{ created: '1970-01-01T00:00:00Z', created_by: 'localkube (assembled from locally built binaries)' }],
    }),
  );
  const manifest = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.manifest.v1+json',
      config: { mediaType: 'application/vnd.oci.image.config.v1+json', digest: sha256(config), size: config.length },
      layers: [{ mediaType: 'application/vnd.oci.image.layer.v1.tar', digest: layerDigest, size: layer.length }],
    }),
  );
  const tag = spec.name.slice(spec.name.lastIndexOf(':') + 1);
  const index = Buffer.from(
    JSON.stringify({
      schemaVersion: 2,
      mediaType: 'application/vnd.oci.image.index.v1+json',
      manifests: [
        {
          mediaType: 'application/vnd.oci.image.manifest.v1+json',
          digest: sha256(manifest),
          size: manifest.length,
          platform: { architecture: 'amd64', os: 'linux' },
          annotations: { 'io.containerd.image.name': spec.name, 'org.opencontainers.image.ref.name': tag },
        },
      ],
    }),
  );
  const blob = (data: Buffer): TarEntry => ({ type: 'file', path: `blobs/sha256/${sha256(data).slice(7)}`, mode: 0o644, data });
  return tar([
    { type: 'file', path: 'oci-layout', mode: 0o644, data: Buffer.from('{"imageLayoutVersion":"1.0.0"}') },
    { type: 'file', path: 'index.json', mode: 0o644, data: index },
    { type: 'dir', path: 'blobs', mode: 0o755 },
    { type: 'dir', path: 'blobs/sha256', mode: 0o755 },
    blob(layer),
    blob(config),
    blob(manifest),
  ]);
}

/** Every file, directory and symlink under `dir`, as layer entries rooted at `/` (or at `under`). */
export async function entriesFromDirectory(dir: string, under = ''): Promise<TarEntry[]> {
  const entries: TarEntry[] = [];
  const walk = async (relative: string): Promise<void> => {
    for (const name of (await readdir(join(dir, relative))).sort()) {
      const rel = relative ? `${relative}/${name}` : name;
      const full = join(dir, rel);
      const path = posix.join(under, rel);
      const stat = await lstat(full);
      if (stat.isSymbolicLink()) entries.push({ type: 'symlink', path, target: await readlink(full) });
      else if (stat.isDirectory()) {
        entries.push({ type: 'dir', path, mode: stat.mode & 0o7777 });
        await walk(rel);
      } else if (stat.isFile()) entries.push({ type: 'file', path, mode: stat.mode & 0o7777, data: await readFile(full) });
    }
  };
  await walk('');
  return entries;
}
