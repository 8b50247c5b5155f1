// The Redis server image, assembled as an OCI archive from Debian 12's own packages, the way localkube's Debian
// etcd 3.4 image is: redis-tools (which ships the one redis binary that redis-server and redis-sentinel link to),
// redis-server and redis-sentinel, the libraries Debian ships beside them (jemalloc, lzf), and busybox-static for
// the pods' small start-up scripts. The packages are downloaded with apt into a cache directory keyed by their
// exact Debian version and unpacked there; nothing is installed on the host. The libraries the binary takes from
// the host are declared in @quorum/images (base.ts), so that localkube's `up` installs them.
import { access, mkdir, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { baseImageEntries, cacheRoot, fileEntry, hostCommand, imageFromEntries, isDeclaredHostFile, output, run, type ImageArchive, type TarEntry } from '@quorum/images';
import { DEFAULT_VERSION } from '../api/redis.ts';
import { redisImage } from './names.ts';

export { redisImage };

export const APT_GET = hostCommand('apt-get', 'apt', 'downloading Debian packages (Redis) into the cache for images, without installing them');
export const APT_CACHE = hostCommand('apt-cache', 'apt', 'finding the Debian Redis version to download');
const DPKG_DEB = hostCommand('dpkg-deb', 'dpkg', 'unpacking downloaded Debian packages for images');
const LDD = hostCommand('ldd', 'libc-bin', 'listing the shared libraries copied into images');

/** The Debian packages the image is made of; jemalloc and lzf are Redis's own dependencies, not the host's. */
const PACKAGES = ['redis-tools', 'redis-server', 'redis-sentinel', 'libjemalloc2', 'liblzf1', 'busybox-static'] as const;
export const LIBRARY_DIR = 'usr/lib/x86_64-linux-gnu';
export const BUSYBOX_APPLETS = ['sh', 'cat', 'cp', 'cut', 'sha1sum'] as const;


/** The candidate Debian version of a package (`5:7.0.15-1~deb12u10`), from the host's apt lists (or those `aptOptions` name). */
export async function candidateVersion(pkg: string, aptOptions: readonly string[] = []): Promise<string> {
  const policy = await output(APT_CACHE, [...aptOptions, 'policy', pkg]);
  const candidate = /Candidate:\s*(\S+)/.exec(policy)?.[1];
  if (candidate === undefined || candidate === '(none)') throw new Error(`apt has no candidate for ${pkg}; run apt-get update (apt-cache policy ${pkg}: ${policy.trim()})`);
  return candidate;
}

/** `5:7.0.15-1~deb12u10` → `7.0.15`. */
export function upstreamVersion(debianVersion: string): string {
  return debianVersion.replace(/^\d+:/, '').replace(/-[^-]*$/, '');
}

/**
 * Downloads and unpacks the packages once per exact Debian version of redis-tools; returns the unpacked root.
 */
export async function debianRedisRoot(version: string = DEFAULT_VERSION): Promise<{ root: string; debianVersion: string }> {
  const debianVersion = await candidateVersion('redis-tools');
  if (upstreamVersion(debianVersion) !== version) {
    throw new Error(`Debian 12 offers Redis ${debianVersion} (upstream ${upstreamVersion(debianVersion)}), not ${version}`);
  }
  const root = join(cacheRoot, 'debian', `redis-${debianVersion.replace(/[^A-Za-z0-9.+-]/g, '_')}`);
  // redis-tools, redis-server and redis-sentinel at the same Debian version; the libraries at their candidates.
  const pinned = PACKAGES.map((p) => (p.startsWith('redis-') ? `${p}=${debianVersion}` : p));
  await unpackedOnce(root, 'usr/bin/redis-check-rdb', (debs) => run(APT_GET, ['download', '-q', ...pinned], { cwd: debs }));
  return { root, debianVersion };
}

/**
 * `root`, unless `marker` is in it already: `download` fills a directory with .deb files, which are unpacked
 * into a partial directory of this process's own and renamed into place, so a crash never leaves a half-made root.
 */
export async function unpackedOnce(root: string, marker: string, download: (debs: string) => Promise<unknown>): Promise<void> {
  if (await access(join(root, marker)).then(() => true, () => false)) return;
  const partial = `${root}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  const debs = join(partial, 'debs');
  await mkdir(debs, { recursive: true });
  await download(debs);
  const unpacked = join(partial, 'root');
  for (const deb of (await readdir(debs)).filter((f) => f.endsWith('.deb')).sort()) await run(DPKG_DEB, ['-x', join(debs, deb), unpacked]);
  await rm(root, { recursive: true, force: true });
  await rename(unpacked, root);
  await rm(partial, { recursive: true, force: true });
}

/**
 * The shared libraries `binary` needs: those unpacked beside it from `root`, then the host's, which must be
 * declared (in @quorum/images' base.ts) so that `up` installs their packages.
 */
export async function libraries(binary: string, root: string): Promise<TarEntry[]> {
  const ldd = await output(LDD, [binary], { env: { ...process.env, LD_LIBRARY_PATH: join(root, LIBRARY_DIR) } });
  const missing = [...ldd.matchAll(/^\s*(\S+) => not found/gm)].map((m) => m[1]!);
  if (missing.length > 0) throw new Error(`${binary} needs libraries neither its packages nor the host have: ${missing.join(', ')}`);
  const entries: TarEntry[] = [];
  for (const [, path] of ldd.matchAll(/(\/\S+) \(0x/g)) {
    if (path!.startsWith(root + '/')) {
      entries.push(await fileEntry(path!.slice(root.length + 1), path!));
      continue;
    }
    if (!isDeclaredHostFile(path!)) throw new Error(`${binary} needs ${path}, which no hostFile declaration names: declare it in packages/images/src/base.ts with the package \`dpkg -S\` names`);
    entries.push(await fileEntry(path!.slice(1), path!));
  }
  return entries;
}

/**
 * The Redis image's files from the unpacked Debian packages at `root`, with busybox linked under each of
 * `applets` (Debian's busybox runs an applet only by its name), deduplicated by path. The peers benchmark's
 * image is these files with more applets.
 */
export async function redisImageEntries(root: string, applets: readonly string[]): Promise<TarEntry[]> {
  const server = join(root, 'usr/bin/redis-check-rdb'); // redis-server and redis-sentinel are symlinks to it
  const entries: TarEntry[] = [
    ...baseImageEntries,
    await fileEntry('usr/bin/redis-server', server),
    { type: 'symlink', path: 'usr/bin/redis-sentinel', target: 'redis-server' },
    await fileEntry('usr/bin/redis-cli', join(root, 'usr/bin/redis-cli')),
    await fileEntry('bin/busybox', join(root, 'bin/busybox')),
    ...applets.map((applet): TarEntry => ({ type: 'symlink', path: `bin/${applet}`, target: 'busybox' })),
    ...(await libraries(server, root)),
    ...(await libraries(join(root, 'usr/bin/redis-cli'), root)),
    { type: 'dir', path: 'data', mode: 0o777 },
  ];
  return [...new Map(entries.map((e) => [e.path, e])).values()];
}

/** Builds the image (or finds it in the image cache): redis-server, redis-sentinel, redis-cli and busybox. */
export async function buildRedisImage(version: string = DEFAULT_VERSION): Promise<ImageArchive> {
  const { root, debianVersion } = await debianRedisRoot(version);
  // The applets the pods' scripts use (objects.ts).
  const unique = await redisImageEntries(root, BUSYBOX_APPLETS);
  return imageFromEntries(redisImage(version), unique, {
    Entrypoint: ['/usr/bin/redis-server'],
    Env: ['PATH=/usr/local/bin:/usr/bin:/bin'],
    WorkingDir: '/data',
    User: '65532:65532',
    ExposedPorts: { '6379/tcp': {}, '26379/tcp': {} },
    Labels: { 'org.opencontainers.image.title': 'Redis (Debian 12)', 'org.opencontainers.image.version': debianVersion },
  });
}
