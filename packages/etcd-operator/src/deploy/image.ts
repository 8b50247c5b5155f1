// The operator's container image, assembled locally as an OCI archive (no Docker here): the pinned Node 24
// binary with its shared libraries, the workspace packages the operator runs, and their production
// dependencies only, as `npm ls --omit=dev` lists them. The Dockerfile at the repo root builds the same
// layout for users with a registry.
import { readFile, realpath } from 'node:fs/promises';
import { join, relative, resolve } from 'node:path';
import { baseImageEntries, contentDigest, entriesFromDirectory, imageFromEntries, run, sharedLibraries, type ImageArchive, type TarEntry } from '@quorum/images';
import { OPERATOR_IMAGE } from './manifests.ts';

// The workspace root, from this file's place in it (packages/etcd-operator/src/deploy/).
const repoRoot = resolve(import.meta.dirname, '../../../..');


/**
 * Builds the image; unless a name is given it is tagged `<version>-dev.<content digest>`, so that loading a
 * changed build into a running cluster and installing it rolls the operator out (a reused tag would not).
 */
export async function buildOperatorImage(name?: string): Promise<ImageArchive> {
  const node = process.execPath;
  const listed = await run('npm', ['ls', '--omit=dev', '--all', '--parseable', '-w', '@quorum/etcd-operator'], { cwd: repoRoot, allowFailure: true });
  const paths = [...new Set(listed.stdout.split('\n').map((p) => p.trim()).filter((p) => p.startsWith(join(repoRoot, 'node_modules') + '/')))];
  const entries: TarEntry[] = [...baseImageEntries];
  entries.push({ type: 'file', path: 'usr/local/bin/node', mode: 0o755, data: await readFile(node) }, ...(await sharedLibraries(node)));
  entries.push({ type: 'file', path: 'app/package.json', mode: 0o644, data: await readFile(join(repoRoot, 'package.json')) });
  // The workspace packages it runs, as npm lists them (symlinks into packages/): the operator's own and every
  // @quorum package it depends on, so a new shared package cannot be left out of the image.
  const workspaces = await Promise.all(paths.filter((p) => relative(repoRoot, p).startsWith('node_modules/@quorum/')).map(async (p) => relative(repoRoot, await realpath(p))));
  for (const ws of workspaces) {
    entries.push({ type: 'file', path: `app/${ws}/package.json`, mode: 0o644, data: await readFile(join(repoRoot, ws, 'package.json')) });
    entries.push(...(await entriesFromDirectory(join(repoRoot, ws, 'src'), `app/${ws}/src`)));
  }
  for (const path of paths) {
    const rel = relative(repoRoot, path);
    const pkg = rel.slice('node_modules/'.length);
    const workspace = workspaces.find((w) => pkg === `@quorum/${w.split('/')[1]}`);
    if (pkg.startsWith('@quorum/')) {
      // Workspace packages are symlinks into packages/, as npm lays them out.
      if (workspace) entries.push({ type: 'symlink', path: `app/${rel}`, target: `../../${workspace}` });
      continue;
    }
    const files = await entriesFromDirectory(path, `app/${rel}`);
    // Nested node_modules are listed by npm on their own lines (and may hold dev-only packages).
    entries.push(...files.filter((e) => !e.path.slice(`app/${rel}`.length).includes('/node_modules/')));
  }
  const config = {
    Entrypoint: ['/usr/local/bin/node', '--conditions=@quorum/source', '/app/packages/etcd-operator/src/operator/main.ts'],
    WorkingDir: '/app',
    User: '65532:65532',
    Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=production', 'NODE_OPTIONS=--conditions=@quorum/source'],
    Labels: { 'org.opencontainers.image.title': 'quorum etcd operator' },
  };
  const unique = dedupe(entries);
  return imageFromEntries(name ?? `${OPERATOR_IMAGE}-dev.${contentDigest(unique, config).slice(0, 12)}`, unique, config);
}

function dedupe(entries: TarEntry[]): TarEntry[] {
  const seen = new Map<string, TarEntry>();
  for (const e of entries) seen.set(e.path.replace(/\/+$/, ''), e);
  return [...seen.values()];
}
