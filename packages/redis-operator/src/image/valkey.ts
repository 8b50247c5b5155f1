// The Valkey server image, assembled like the Redis one (redis.ts) from Debian's own packages: Valkey 8.0.1 from
// the bookworm-backports suite. The suite is added for the download only: apt runs with a sources list, lists
// and cache of its own under the cache directory (Dir::Etc::SourceList, Dir::State::Lists, Dir::Cache), so the
// host's sources and lists are never changed. Debian's valkey-server and valkey-sentinel are symlinks: the binary
// ships in valkey-tools (as valkey-check-rdb). The image also answers to the Redis names (redis-server,
// redis-sentinel, redis-cli, which Valkey recognises, as Debian's valkey-compat-redis does), so the pods run the
// same commands on either engine and an engine change is a rollout like any other.
import { mkdir, readdir, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { baseImageEntries, cacheRoot, fileEntry, imageFromEntries, run, type ImageArchive, type TarEntry } from '@quorum/images';
import { serverImage } from './names.ts';
import { APT_GET, BUSYBOX_APPLETS, candidateVersion, libraries, unpackedOnce, upstreamVersion } from './redis.ts';

export const VALKEY_VERSION = '8.0.1';
const SUITE = 'deb http://deb.debian.org/debian bookworm-backports main';
/** From the backports suite, pinned to one Debian version. */
const VALKEY_PACKAGES = ['valkey-tools', 'valkey-server', 'valkey-sentinel'] as const;
/** From the host's own lists (bookworm), as for Redis. */
const LIBRARY_PACKAGES = ['libjemalloc2', 'liblzf1', 'busybox-static'] as const;

/** apt options that read the backports suite alone, from lists and a cache of the image builder's own. */
async function backportsApt(): Promise<string[]> {
  const dir = join(cacheRoot, 'debian', 'apt-bookworm-backports');
  const options = ['-o', `Dir::Etc::SourceList=${join(dir, 'sources.list')}`, '-o', `Dir::Etc::SourceParts=${join(dir, 'sources.list.d')}`, '-o', `Dir::State::Lists=${join(dir, 'lists')}`, '-o', `Dir::Cache=${join(dir, 'cache')}`];
  // An update cut short leaves no Packages index: it is fetched again.
  const fetched = (await readdir(join(dir, 'lists')).catch(() => [] as string[])).some((f) => f.includes('_Packages'));
  if (!fetched) {
    for (const sub of ['sources.list.d', 'lists/partial', 'cache/archives/partial']) await mkdir(join(dir, sub), { recursive: true });
    await writeFile(join(dir, 'sources.list'), `${SUITE}\n`);
    await run(APT_GET, [...options, 'update', '-q']);
  }
  return options;
}

/** Downloads and unpacks the packages once per exact Debian version of valkey-tools; returns the unpacked root. */
export async function debianValkeyRoot(version: string = VALKEY_VERSION): Promise<{ root: string; debianVersion: string }> {
  const apt = await backportsApt();
  const debianVersion = await candidateVersion('valkey-tools', apt);
  const upstream = upstreamVersion(debianVersion).replace(/\+dfsg\d*$/, '');
  if (upstream !== version) throw new Error(`bookworm-backports offers Valkey ${debianVersion} (upstream ${upstream}), not ${version}`);
  const root = join(cacheRoot, 'debian', `valkey-${debianVersion.replace(/[^A-Za-z0-9.+-]/g, '_')}`);
  await unpackedOnce(root, 'usr/bin/valkey-check-rdb', async (debs) => {
    await run(APT_GET, [...apt, 'download', '-q', ...VALKEY_PACKAGES.map((p) => `${p}=${debianVersion}`)], { cwd: debs });
    await run(APT_GET, ['download', '-q', ...LIBRARY_PACKAGES], { cwd: debs });
  });
  return { root, debianVersion };
}

/** Builds the image (or finds it in the image cache): valkey-server, valkey-sentinel, valkey-cli, their Redis names, busybox. */
export async function buildValkeyImage(version: string = VALKEY_VERSION): Promise<ImageArchive> {
  const { root, debianVersion } = await debianValkeyRoot(version);
  const server = join(root, 'usr/bin/valkey-check-rdb'); // valkey-server and valkey-sentinel are symlinks to it
  const link = (path: string, target: string): TarEntry => ({ type: 'symlink', path, target });
  const entries: TarEntry[] = [
    ...baseImageEntries,
    await fileEntry('usr/bin/valkey-server', server),
    link('usr/bin/valkey-sentinel', 'valkey-server'),
    await fileEntry('usr/bin/valkey-cli', join(root, 'usr/bin/valkey-cli')),
    link('usr/bin/redis-server', 'valkey-server'),
    link('usr/bin/redis-sentinel', 'valkey-server'),
    link('usr/bin/redis-cli', 'valkey-cli'),
    await fileEntry('bin/busybox', join(root, 'bin/busybox')),
    ...BUSYBOX_APPLETS.map((applet) => link(`bin/${applet}`, 'busybox')),
    ...(await libraries(server, root)),
    ...(await libraries(join(root, 'usr/bin/valkey-cli'), root)),
    { type: 'dir', path: 'data', mode: 0o777 },
  ];
  const unique = [...new Map(entries.map((e) => [e.path, e])).values()];
  return imageFromEntries(serverImage('valkey', version), unique, {
    Entrypoint: ['/usr/bin/valkey-server'],
    Env: ['PATH=/usr/local/bin:/usr/bin:/bin'],
    WorkingDir: '/data',
    User: '65532:65532',
    ExposedPorts: { '6379/tcp': {}, '26379/tcp': {} },
    Labels: { 'org.opencontainers.image.title': 'Valkey (Debian 12 bookworm-backports)', 'org.opencontainers.image.version': debianVersion },
  });
}
