// The images every localkube node carries, assembled from the binaries we built (and, for etcd 3.4,
// Debian's), under the names users pull by. Archives are cached by their inputs in imageCache.
import { createHash } from 'node:crypto';
import { access, mkdir, readFile, rename, writeFile } from 'node:fs/promises';
import { basename, join } from 'node:path';
import type { Binaries } from '../build/go-binaries.ts';
import { output } from '../exec.ts';
import { imageCache } from '../paths.ts';
import { COREDNS_VERSION, DEBIAN_ETCD_VERSION, ETCD_VERSIONS, PAUSE_TAG } from '../versions.ts';
import { buildImageArchive, entriesFromDirectory, type ImageConfig, type ImageSpec } from './oci.ts';
import type { TarEntry } from './tar.ts';

/** Bump when the way images are assembled changes, so cached archives are rebuilt. */
const FORMAT = 1;
const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';

export interface ImageArchive {
  name: string;
  archive: string;
}

export const pauseImage = `registry.k8s.io/pause:${PAUSE_TAG}`;
export const etcdImage = (version: string): string => `gcr.io/etcd-development/etcd:v${version}`;
export const corednsImage = `registry.k8s.io/coredns/coredns:${COREDNS_VERSION}`;

const file = async (path: string, from: string, mode = 0o755): Promise<TarEntry> => ({ type: 'file', path, mode, data: await readFile(from) });
const text = (path: string, content: string, mode = 0o644): TarEntry => ({ type: 'file', path, mode, data: Buffer.from(content) });

/** The files of a minimal distroless-like base: users, name service switch, a writable /tmp. */
export const base: TarEntry[] = [
  text('etc/passwd', 'root:x:0:0:root:/root:/sbin/nologin\nnobody:x:65534:65534:nobody:/nonexistent:/sbin/nologin\nnonroot:x:65532:65532:nonroot:/home/nonroot:/sbin/nologin\n'),
  text('etc/group', 'root:x:0:\nnobody:x:65534:\nnonroot:x:65532:\n'),
  text('etc/nsswitch.conf', 'hosts: files dns\n'),
  { type: 'dir', path: 'tmp', mode: 0o1777 },
  { type: 'dir', path: 'root', mode: 0o700 },
  { type: 'dir', path: 'home/nonroot', mode: 0o700 },
];

/** The shared libraries a dynamically linked binary needs (Debian's etcd 3.4 is one). */
export async function sharedLibraries(binary: string): Promise<TarEntry[]> {
  const ldd = await output('ldd', [binary]);
  const paths = [...ldd.matchAll(/(\/\S+) \(0x/g)].map((m) => m[1]!);
  const entries: TarEntry[] = [];
  for (const path of paths) {
    const real = await output('readlink', ['-f', path]);
    entries.push(await file(path.slice(1), real));
  }
  return entries;
}

async function etcdSpec(version: string, dir: string): Promise<ImageSpec> {
  return {
    name: etcdImage(version),
    entries: [
      ...base,
      ...(await Promise.all(['etcd', 'etcdctl', 'etcdutl'].map((b) => file(`usr/local/bin/${b}`, join(dir, b))))),
      { type: 'dir', path: 'var/etcd', mode: 0o700 },
      { type: 'dir', path: 'var/lib/etcd', mode: 0o700 },
    ],
    config: { Cmd: ['/usr/local/bin/etcd'], Env: [PATH_ENV], ExposedPorts: { '2379/tcp': {}, '2380/tcp': {} } },
  };
}

async function debianEtcdSpec(): Promise<ImageSpec> {
  return {
    name: etcdImage(DEBIAN_ETCD_VERSION),
    entries: [
      ...base,
      await file('usr/local/bin/etcd', '/usr/bin/etcd'),
      await file('usr/local/bin/etcdctl', '/usr/bin/etcdctl'),
      ...(await sharedLibraries('/usr/bin/etcd')),
      { type: 'dir', path: 'var/etcd', mode: 0o700 },
      { type: 'dir', path: 'var/lib/etcd', mode: 0o700 },
    ],
    config: { Cmd: ['/usr/local/bin/etcd'], Env: [PATH_ENV, 'ETCDCTL_API=3'], ExposedPorts: { '2379/tcp': {}, '2380/tcp': {} } },
  };
}

/** Writes `spec`'s archive to the cache unless an archive for the same inputs is there; returns its path. */
export async function cachedImage(spec: ImageSpec, inputsKey: string): Promise<ImageArchive> {
  const key = createHash('sha256').update(`${FORMAT}\n${spec.name}\n${inputsKey}`).digest('hex').slice(0, 16);
  const archive = join(imageCache, `${spec.name.replace(/[^a-zA-Z0-9.-]+/g, '_')}-${key}.tar`);
  try {
    await access(archive);
  } catch {
    await mkdir(imageCache, { recursive: true });
    await writeFile(`${archive}.partial`, buildImageArchive(spec));
    await rename(`${archive}.partial`, archive);
  }
  return { name: spec.name, archive };
}

/** Every image a node starts with. Inputs are keyed by the version-named binary cache directories. */
export async function ensureImages(bins: Binaries): Promise<ImageArchive[]> {
  const images: Promise<ImageArchive>[] = [
    (async () =>
      cachedImage(
        { name: pauseImage, entries: [...base, await file('pause', join(bins.pause, 'pause'))], config: { Entrypoint: ['/pause'], User: '65535:65535' } },
        basename(bins.pause),
      ))(),
    (async () =>
      cachedImage(
        {
          name: corednsImage,
          entries: [...base, await file('coredns', join(bins.coredns, 'coredns'))],
          config: { Entrypoint: ['/coredns'], ExposedPorts: { '53/tcp': {}, '53/udp': {} } },
        },
        basename(bins.coredns),
      ))(),
    ...ETCD_VERSIONS.map(async (v) => cachedImage(await etcdSpec(v, bins.etcd[v]!), basename(bins.etcd[v]!))),
    (async () => cachedImage(await debianEtcdSpec(), `debian-etcd-${DEBIAN_ETCD_VERSION}`))(),
  ];
  return Promise.all(images);
}

/**
 * Builds an image named `name` whose root filesystem is the contents of `dir` (the operator's image is made
 * this way); returns the cached archive, rebuilt only when the directory's contents change.
 */
export async function imageFromDirectory(dir: string, name: string, config: ImageConfig): Promise<ImageArchive> {
  return imageFromEntries(name, await entriesFromDirectory(dir), config);
}

/** Builds (or finds in the cache) an image from layer entries; the cache key is a hash of the entries. */
export async function imageFromEntries(name: string, entries: TarEntry[], config: ImageConfig): Promise<ImageArchive> {
  return cachedImage({ name, entries, config }, contentDigest(entries, config));
}

/** A digest of an image's contents and config: the same inputs give the same digest. */
export function contentDigest(entries: readonly TarEntry[], config: ImageConfig): string {
  const hash = createHash('sha256').update(JSON.stringify(config));
  for (const e of entries) {
    hash.update(`${e.type}\0${e.path}\0${e.type === 'symlink' ? e.target : e.mode}\0`);
    if (e.type === 'file') hash.update(e.data);
  }
  return hash.digest('hex');
}
