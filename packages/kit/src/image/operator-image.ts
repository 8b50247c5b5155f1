// An operator's container image, assembled locally as an OCI archive (no Docker here): the pinned Node 24 binary
// with its shared libraries, the workspace packages the operator runs, compiled to JavaScript (built-js.ts), and
// their production dependencies only, as `npm ls --omit=dev` lists them. The Dockerfile at the repo root builds
// the same layout for users with a registry.
// The etcd operator and the recorder each had a copy of this; every operator of the repository builds its image here.
import { readFile, realpath } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { baseImageEntries, contentDigest, entriesFromDirectory, imageFromEntries, run, sharedLibraries, type ImageArchive, type ImageConfig, type TarEntry } from '@quorum/images';
import { builtPath, builtWorkspaceEntries } from './built-js.ts';

export interface OperatorImageOptions {
  /** The operator's workspace package, e.g. `@quorum/etcd-operator`: it and what `npm ls --omit=dev` lists for it go in the image. */
  workspace: string;
  /** The program the container runs, as its source relative to the workspace package, e.g. `src/operator/main.ts` (the image runs `dist/operator/main.js`). */
  entrypoint: string;
  /** The released image this build stands for, e.g. `ghcr.io/quorum-dev/etcd-operator:0.1.0`: the build is tagged `<image>-dev.<content digest>`. */
  image: string;
  /** The `org.opencontainers.image.title` label, e.g. `quorum etcd operator`. */
  title: string;
  /** The image's whole name instead of the dev tag. */
  name?: string;
  /** More environment variables; one named like a default (PATH, NODE_ENV, NODE_OPTIONS) replaces it. */
  env?: Readonly<Record<string, string>>;
  /** More files (a default config, a CA bundle); an entry at a path already in the image replaces it. */
  extra?: readonly TarEntry[];
}

/**
 * V8's young generation capped at 1 MiB per semi-space (V8 grows it to 16 MiB on a busy heap and keeps it
 * committed): about 6 MiB less RSS at start and 37 MiB less with 10,000 objects cached, for 3–13% more CPU per
 * event in two sessions' runs (issue 24, docs/memory.md). On the operator's command only: the backup agent, which the etcd
 * operator's Jobs start from the same image with their own command, streams snapshots and keeps V8's default.
 */
export const OPERATOR_NODE_FLAGS: readonly string[] = ['--max-semi-space-size=1'];

const DEFAULT_ENV: Readonly<Record<string, string>> = { PATH: '/usr/local/bin:/usr/bin:/bin', NODE_ENV: 'production' }; // in the container

// The workspace root, from this file's place in it (packages/kit/src/image/).
const repoRoot = resolve(import.meta.dirname, '../../../..');

/**
 * Builds the image, or finds it in the image cache; unless a name is given it is tagged `<image>-dev.<content digest>`,
 * so that loading a changed build into a running cluster and installing it rolls the operator out (a reused tag would not).
 */
export async function buildOperatorImage(options: OperatorImageOptions): Promise<ImageArchive> {
  const listed = await run('npm', ['ls', '--omit=dev', '--all', '--parseable', '-w', options.workspace], { cwd: repoRoot, allowFailure: true });
  const paths = productionPackagePaths(listed.stdout, repoRoot);
  const workspaces = await workspaceDirectories(paths);
  const entries: TarEntry[] = [...baseImageEntries, ...(await nodeEntries(process.execPath))];
  entries.push({ type: 'file', path: 'app/package.json', mode: 0o644, data: await readFile(join(repoRoot, 'package.json')) });
  for (const ws of workspaces.values()) entries.push(...(await builtWorkspaceEntries(repoRoot, ws)));
  for (const path of paths) entries.push(...(await packageEntries(path, workspaces)));
  entries.push(...(options.extra ?? []));
  const workspaceDir = workspaces.get(join(repoRoot, 'node_modules', options.workspace));
  if (workspaceDir === undefined) throw new Error(`npm ls does not list the workspace ${options.workspace} (is it a package of ${repoRoot}?)`);
  const config = operatorImageConfig(options, workspaceDir);
  const unique = dedupeEntries(entries);
  return imageFromEntries(options.name ?? devImageName(options.image, unique, config), unique, config);
}

/** The image's config: node runs the entrypoint's built JavaScript, as uid/gid 65532, in /app. Key order is part of the digest. */
export function operatorImageConfig(options: Pick<OperatorImageOptions, 'entrypoint' | 'title' | 'env'>, workspaceDir: string): ImageConfig {
  const env = { ...DEFAULT_ENV, ...options.env };
  return {
    Entrypoint: ['/usr/local/bin/node', ...OPERATOR_NODE_FLAGS, `/app/${workspaceDir}/${builtPath(options.entrypoint)}`],
    WorkingDir: '/app',
    User: '65532:65532',
    Env: Object.entries(env).map(([key, value]) => `${key}=${value}`),
    Labels: { 'org.opencontainers.image.title': options.title },
  };
}

/** `<image>-dev.<the first 12 hex digits of the content digest>`. */
export function devImageName(image: string, entries: readonly TarEntry[], config: ImageConfig): string {
  return `${image}-dev.${contentDigest(entries, config).slice(0, 12)}`;
}

/** The packages of `npm ls --parseable` output (one path a line) that are under the root's node_modules, each once, in order. */
export function productionPackagePaths(npmLsOutput: string, root: string): string[] {
  const under = join(root, 'node_modules') + '/';
  return [...new Set(npmLsOutput.split('\n').map((p) => p.trim()).filter((p) => p.startsWith(under)))];
}

/** The last entry for each path wins (paths compared without trailing slashes); first-seen order is kept. */
export function dedupeEntries(entries: readonly TarEntry[]): TarEntry[] {
  const seen = new Map<string, TarEntry>();
  for (const e of entries) seen.set(e.path.replace(/\/+$/, ''), e);
  return [...seen.values()];
}

/**
 * The workspace packages among the listed ones (npm links them from node_modules/@quorum/ into packages/): the
 * operator's own and every @quorum package it depends on, so a new shared package cannot be left out of the image.
 * Keyed by the node_modules path, the value the package's directory relative to the root.
 */
async function workspaceDirectories(paths: readonly string[]): Promise<Map<string, string>> {
  const linked = paths.filter((p) => relative(repoRoot, p).startsWith('node_modules/@quorum/'));
  return new Map(await Promise.all(linked.map(async (p) => [p, relative(repoRoot, await realpath(p))] as const)));
}

async function nodeEntries(node: string): Promise<TarEntry[]> {
  return [{ type: 'file', path: 'usr/local/bin/node', mode: 0o755, data: await readFile(node) }, ...(await sharedLibraries(node))];
}

/** One listed package: a workspace package is a symlink into packages/, as npm lays them out; any other is copied. */
async function packageEntries(path: string, workspaces: ReadonlyMap<string, string>): Promise<TarEntry[]> {
  const rel = relative(repoRoot, path);
  if (rel.startsWith('node_modules/@quorum/')) {
    const workspace = workspaces.get(path);
    return workspace === undefined ? [] : [{ type: 'symlink', path: `app/${rel}`, target: `../../${workspace}` }];
  }
  const files = await entriesFromDirectory(path, `app/${rel}`);
  // Nested node_modules are listed by npm on their own lines (and may hold dev-only packages).
  return files.filter((e) => !e.path.slice(`app/${rel}`.length).includes('/node_modules/'));
}
