// The images every localkube node carries, assembled with @quorum/images from the binaries we built (and,
// for etcd 3.4, Debian's), under the names users pull by. Archives are cached by their inputs.
import { basename, join } from 'node:path';
import { baseImageEntries as base, cachedImage, fileEntry as file, hostFile, sharedLibraries, type ImageArchive, type ImageSpec } from '@quorum/images';
import type { Binaries } from '../build/go-binaries.ts';
import { COREDNS_VERSION, DEBIAN_ETCD_VERSION, ETCD_VERSIONS, PAUSE_TAG } from '../versions.ts';

export type { ImageArchive } from '@quorum/images';

const PATH_ENV = 'PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin';
// etcd 3.4, the third version for upgrade tests, is Debian bookworm's build (versions.ts): its image copies the
// package's files, and their shared libraries (sharedLibraries declares those).
const DEBIAN_ETCD = hostFile('/usr/bin/etcd', 'etcd-server', 'etcd 3.4 image for upgrade tests');
const DEBIAN_ETCDCTL = hostFile('/usr/bin/etcdctl', 'etcd-client', 'etcdctl in the etcd 3.4 image');

export const pauseImage = `registry.k8s.io/pause:${PAUSE_TAG}`;
export const etcdImage = (version: string): string => `gcr.io/etcd-development/etcd:v${version}`;
export const corednsImage = `registry.k8s.io/coredns/coredns:${COREDNS_VERSION}`;

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
      await file('usr/local/bin/etcd', DEBIAN_ETCD),
      await file('usr/local/bin/etcdctl', DEBIAN_ETCDCTL),
      ...(await sharedLibraries(DEBIAN_ETCD)),
      { type: 'dir', path: 'var/etcd', mode: 0o700 },
      { type: 'dir', path: 'var/lib/etcd', mode: 0o700 },
    ],
    config: { Cmd: ['/usr/local/bin/etcd'], Env: [PATH_ENV, 'ETCDCTL_API=3'], ExposedPorts: { '2379/tcp': {}, '2380/tcp': {} } },
  };
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
