// The object-store servers behind the storage addons (`localkube addon enable s3|gcs|azure`): MinIO and
// fake-gcs-server built from the Go module proxy, Azurite from npm (an exact dependency of this package).
// Nothing here runs on `up`: the Go builds take minutes, so each server is built the first time something
// asks for it (an addon enabled, or a unit test calling storageServers()) and cached by exact version.
import { createHash } from 'node:crypto';
import { readFile, realpath, stat } from 'node:fs/promises';
import { createRequire } from 'node:module';
import { basename, dirname, join, relative } from 'node:path';
import { baseImageEntries, cachedImage, entriesFromDirectory, fileEntry, imageFromEntries, pathExists, sharedLibraries, type ImageArchive, type TarEntry } from '@quorum/images';
import { buildGoProject, fakeGcsServer, minio, type GoProject } from '../build/go-binaries.ts';
import { repoRoot } from '../paths.ts';
import { step } from '../progress.ts';
import { AZURITE_VERSION, FAKE_GCS_SERVER_VERSION, MINIO_VERSION } from '../versions.ts';

/** Where each server's executable is on this machine. */
export interface StorageServers {
  /** The MinIO server binary (`minio server DIR --address 127.0.0.1:PORT`). */
  minio: string;
  /** The fake-gcs-server binary (`fake-gcs-server -scheme http -host 127.0.0.1 -port PORT ...`). */
  fakeGcsServer: string;
  /** Azurite's blob service entry script, run with this Node (`process.execPath AZURITE --blobHost 127.0.0.1 ...`). */
  azurite: string;
}

/** node_modules/azurite of this package, checked to be the pinned version. */
async function azuritePackageDir(): Promise<string> {
  const manifest = createRequire(import.meta.url).resolve('azurite/package.json');
  const { version } = JSON.parse(await readFile(manifest, 'utf8')) as { version: string };
  if (version !== AZURITE_VERSION) throw new Error(`localkube: node_modules/azurite is ${version}, but ${AZURITE_VERSION} is pinned (run npm ci)`);
  return dirname(manifest);
}

/** The blob service's entry script inside an azurite package directory (its `azurite-blob` bin). */
const AZURITE_BLOB_ENTRY = 'dist/src/blob/main.js';

/** Builds MinIO's binary unless cached; returns its path. */
export async function minioBinary(): Promise<string> {
  return join(await buildGoProject(minio), 'minio');
}

/** Builds fake-gcs-server's binary unless cached; returns its path. */
export async function fakeGcsServerBinary(): Promise<string> {
  return join(await buildGoProject(fakeGcsServer), 'fake-gcs-server');
}

/**
 * The three servers, for tests that start them on 127.0.0.1 as child processes without a cluster. Builds
 * what is not cached yet, one build at a time (a cold MinIO build takes minutes on 2 cores).
 */
export async function storageServers(): Promise<StorageServers> {
  const minioPath = await minioBinary();
  const fakeGcsServerPath = await fakeGcsServerBinary();
  return { minio: minioPath, fakeGcsServer: fakeGcsServerPath, azurite: join(await azuritePackageDir(), AZURITE_BLOB_ENTRY) };
}

// ---- images, under the names their projects publish ----

// MinIO publishes no image for a commit between releases; the tag is the exact pseudo-version we build.
export const minioImage = `quay.io/minio/minio:${MINIO_VERSION}`;
export const fakeGcsServerImage = `docker.io/fsouza/fake-gcs-server:${FAKE_GCS_SERVER_VERSION.replace(/^v/, '')}`;
export const azuriteImage = `mcr.microsoft.com/azure-storage/azurite:${AZURITE_VERSION}`;

/** Where Azurite and its dependencies sit in its image (upstream's image uses the same directory). */
const AZURITE_APP = 'opt/azurite';
/** The user every storage server image runs as (distroless's nonroot). */
export const NONROOT_UID = 65532;

export async function minioImageArchive(): Promise<ImageArchive> {
  const dir = await buildGoProject(minio);
  return cachedImage(
    {
      name: minioImage,
      entries: [...baseImageEntries, await fileEntry('usr/bin/minio', join(dir, 'minio')), { type: 'dir', path: 'data', mode: 0o755 }],
      config: { Entrypoint: ['/usr/bin/minio'], Cmd: ['server', '/data'], User: `${NONROOT_UID}:${NONROOT_UID}`, ExposedPorts: { '9000/tcp': {} } },
    },
    basename(dir),
  );
}

export async function fakeGcsServerImageArchive(): Promise<ImageArchive> {
  const dir = await buildGoProject(fakeGcsServer);
  return cachedImage(
    {
      name: fakeGcsServerImage,
      entries: [...baseImageEntries, await fileEntry('bin/fake-gcs-server', join(dir, 'fake-gcs-server')), { type: 'dir', path: 'data', mode: 0o755 }],
      config: { Entrypoint: ['/bin/fake-gcs-server'], User: `${NONROOT_UID}:${NONROOT_UID}`, ExposedPorts: { '4443/tcp': {} } },
    },
    basename(dir),
  );
}

interface PackageManifest {
  name?: string;
  dependencies?: Record<string, string>;
  optionalDependencies?: Record<string, string>;
  peerDependencies?: Record<string, string>;
  peerDependenciesMeta?: Record<string, { optional?: boolean }>;
}

/** The directory `require(name)` finds from package directory `from`: the nearest node_modules/name up the tree. */
async function resolvePackageDir(from: string, name: string): Promise<string | undefined> {
  for (let dir = from; ; dir = dirname(dir)) {
    // Node never looks in node_modules/node_modules.
    if (basename(dir) !== 'node_modules') {
      const candidate = join(dir, 'node_modules', name);
      if (await pathExists(join(candidate, 'package.json'))) return candidate;
    }
    if (dir === repoRoot || dirname(dir) === dir) return undefined;
  }
}

/**
 * The installed directories of a package and its production dependency tree, each resolved as Node's
 * require resolves it at run time. (`npm ls --json` is no substitute: it prints a deduplicated package's
 * dependencies once, under whichever dependent comes first, which may lie outside azurite's subtree.)
 */
async function productionDependencyDirs(root: string): Promise<string[]> {
  const found = new Set<string>();
  const pending = [root];
  for (let dir = pending.pop(); dir !== undefined; dir = pending.pop()) {
    if (found.has(dir)) continue;
    found.add(dir);
    const manifest = JSON.parse(await readFile(join(dir, 'package.json'), 'utf8')) as PackageManifest;
    const optional = new Set([
      ...Object.keys(manifest.optionalDependencies ?? {}),
      ...Object.entries(manifest.peerDependenciesMeta ?? {}).filter(([, meta]) => meta.optional).map(([name]) => name),
    ]);
    const names = new Set([...Object.keys(manifest.dependencies ?? {}), ...Object.keys(manifest.optionalDependencies ?? {}), ...Object.keys(manifest.peerDependencies ?? {})]);
    for (const name of names) {
      const resolved = await resolvePackageDir(dir, name);
      if (resolved) pending.push(resolved);
      else if (!optional.has(name)) throw new Error(`localkube: ${relative(repoRoot, dir)} needs ${name}, which is not installed (run npm ci)`);
    }
  }
  return [...found].sort();
}

/**
 * Azurite's image: the Node that runs this process (the pinned Node 24 of scripts/node24) with its shared
 * libraries, and azurite with exactly its production dependencies, laid out as in the workspace's node_modules. The cache
 * key is a digest of those contents, so a changed dependency or Node rebuilds it.
 */
export async function azuriteImageArchive(): Promise<ImageArchive> {
  return step(`azurite ${AZURITE_VERSION} image`, async () => {
    const packageDir = await azuritePackageDir();
    const node = process.execPath;
    const entries: TarEntry[] = [...baseImageEntries, await fileEntry('usr/local/bin/node', node), ...(await sharedLibraries(node))];
    for (const dir of await productionDependencyDirs(packageDir)) {
      const rel = relative(repoRoot, dir);
      if (rel.startsWith('..')) throw new Error(`localkube: azurite dependency ${dir} is outside the workspace`);
      const under = `${AZURITE_APP}/${rel}`;
      // Nested node_modules hold packages of their own, taken only where resolution leads to them.
      entries.push(...(await entriesFromDirectory(dir, under)).filter((e) => !e.path.slice(under.length).includes('/node_modules/')));
    }
    entries.push({ type: 'dir', path: 'data', mode: 0o755 });
    const entry = `${AZURITE_APP}/${relative(repoRoot, packageDir)}/${AZURITE_BLOB_ENTRY}`;
    if (!entries.some((e) => e.path === entry)) throw new Error(`localkube: azurite's image would lack /${entry}`);
    return imageFromEntries(azuriteImage, entries, {
      Entrypoint: ['/usr/local/bin/node', `/${entry}`],
      WorkingDir: `/${AZURITE_APP}`,
      User: `${NONROOT_UID}:${NONROOT_UID}`,
      Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=production'],
      ExposedPorts: { '10000/tcp': {} },
    });
  });
}

/**
 * What an image is made from, named cheaply (no build, no reading of file contents): the exact version for
 * the Go servers; for Azurite, its version, the Node binary and every dependency's manifest. An enabled
 * addon whose pod runs an image of the same inputs needs no image build or load.
 */
async function azuriteImageInputs(): Promise<string> {
  const hash = createHash('sha256').update(`${AZURITE_VERSION}\n`);
  const node = await realpath(process.execPath);
  const nodeStat = await stat(node);
  hash.update(`${node}\0${nodeStat.size}\0${nodeStat.mtimeMs}\n`);
  for (const dir of await productionDependencyDirs(await azuritePackageDir())) {
    hash.update(`${relative(repoRoot, dir)}\0`).update(await readFile(join(dir, 'package.json')));
  }
  return `azurite-${AZURITE_VERSION}-${hash.digest('hex').slice(0, 12)}`;
}

export interface StorageServerImage {
  name: string;
  /** A cheap name for the image's inputs (see azuriteImageInputs). */
  inputs(): Promise<string>;
  /** Builds what is missing and returns the image archive. */
  archive(): Promise<ImageArchive>;
}

const goInputs = (project: GoProject) => (): Promise<string> => Promise.resolve(project.key);

export const storageServerImages = {
  minio: { name: minioImage, inputs: goInputs(minio), archive: minioImageArchive },
  fakeGcsServer: { name: fakeGcsServerImage, inputs: goInputs(fakeGcsServer), archive: fakeGcsServerImageArchive },
  azurite: { name: azuriteImage, inputs: azuriteImageInputs, archive: azuriteImageArchive },
} as const satisfies Record<keyof StorageServers, StorageServerImage>;
