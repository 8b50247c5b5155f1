// The images of the Redis peers benchmark, assembled locally with @quorum/images under names of our own.
//
// redis: the same Redis as Quorum's image (src/image/redis.ts: Debian 12's redis-server, redis-sentinel and
// redis-cli 7.0.15 with their libraries, and Debian's busybox-static), with more busybox applets: the peers' pod
// scripts run `sh`, `awk`, `seq`, `hostname`, `sleep` (OT-CONTAINER-KIT's probes and preStop hook) and `tr`,
// `cut`, `xargs`, `grep`, `head`, `hostname -i` (spotahome's probes, readiness and shutdown scripts). The
// applets are links to the same busybox binary, so no other host file is copied in. WORKDIR /data, where both
// mount the volume: spotahome's redis.conf has no `dir`, so the RDB goes to the working directory.
// ot-operator: OT-CONTAINER-KIT's static binary at exactly /operator, where its init container (`init-config`,
// image INIT_CONTAINER_IMAGE) runs `/operator agent bootstrap` to write the Redis and Sentinel configuration.
// spotahome-operator: spotahome's static binary, at the path its own Dockerfile puts it.
import { baseImageEntries, fileEntry, imageFromEntries, type ImageArchive, type TarEntry } from '@quorum/images';
import { DEFAULT_VERSION } from '../../src/api/redis.ts';
import { BUSYBOX_APPLETS, debianRedisRoot, redisImageEntries } from '../../src/image/redis.ts';
import type { BuiltPeer } from './build.ts';

export const PEER_REDIS_VERSION = DEFAULT_VERSION;
export const PEER_REDIS_IMAGE = `quorum.local/peers/redis:${PEER_REDIS_VERSION}`;
/** Besides Quorum's image's applets (BUSYBOX_APPLETS). */
export const PEER_APPLETS = ['awk', 'seq', 'hostname', 'sleep', 'tr', 'xargs', 'grep', 'head'] as const;
const PATH_ENV = 'PATH=/usr/local/bin:/usr/bin:/bin';

export const otOperatorImage = (commit: string): string => `quorum.local/peers/ot-redis-operator:${commit.slice(0, 12)}`;
export const spotahomeOperatorImage = (commit: string): string => `quorum.local/peers/spotahome-redis-operator:${commit.slice(0, 12)}`;

/** The applet symlinks of the peers' image (pure): Quorum's and the peers', once each. */
export function appletLinks(): TarEntry[] {
  return [...new Set([...BUSYBOX_APPLETS, ...PEER_APPLETS])].map((applet): TarEntry => ({ type: 'symlink', path: `bin/${applet}`, target: 'busybox' }));
}

/** Quorum's Redis files (the same Debian packages, unpacked in the same cache) and the peers' applets. */
export async function buildPeerRedisImage(): Promise<ImageArchive> {
  const { root, debianVersion } = await debianRedisRoot(PEER_REDIS_VERSION);
  const unique = await redisImageEntries(root, [...new Set([...BUSYBOX_APPLETS, ...PEER_APPLETS])]);
  return imageFromEntries(PEER_REDIS_IMAGE, unique, {
    Entrypoint: ['/usr/bin/redis-server'],
    Env: [PATH_ENV],
    WorkingDir: '/data',
    User: '65532:65532',
    ExposedPorts: { '6379/tcp': {}, '26379/tcp': {} },
    Labels: { 'org.opencontainers.image.title': 'Redis (Debian 12), for the peers benchmark', 'org.opencontainers.image.version': debianVersion },
  });
}

export async function buildOtOperatorImage(peer: BuiltPeer): Promise<ImageArchive> {
  return imageFromEntries(otOperatorImage(peer.commit), [...baseImageEntries, await fileEntry('operator', peer.binary)], { Entrypoint: ['/operator'], User: '65532:65532', Env: [PATH_ENV] });
}

export async function buildSpotahomeOperatorImage(peer: BuiltPeer): Promise<ImageArchive> {
  const entries = [...baseImageEntries, await fileEntry('usr/local/bin/redis-operator', peer.binary)];
  return imageFromEntries(spotahomeOperatorImage(peer.commit), entries, { Entrypoint: ['/usr/local/bin/redis-operator'], User: '65532:65532', Env: [PATH_ENV] });
}
