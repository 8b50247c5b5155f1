// The peer-wait init container's image (tools/peer-wait), assembled locally as an OCI archive like the
// operator's: a static Go binary on the minimal base, nothing else. tools/peer-wait/Dockerfile builds the same
// image for users with a registry.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { baseImageEntries, cacheRoot, contentDigest, imageFromEntries, pathExists, type ImageArchive, type TarEntry } from '@quorum/images';
import { PEER_WAIT_IMAGE } from './manifests.ts';

const run = promisify(execFile);

/** This file is packages/etcd-operator/src/deploy/; the module is tools/peer-wait at the repository root. */
const moduleDir = join(import.meta.dirname, '..', '..', '..', '..', 'tools', 'peer-wait');

/** The files the binary is built from (tests excluded: they do not change it). */
async function sourceFiles(): Promise<string[]> {
  const names = await readdir(moduleDir);
  return names.filter((n) => n === 'go.mod' || n === 'go.sum' || (n.endsWith('.go') && !n.endsWith('_test.go'))).sort();
}

/** sha256 over the source files' names and contents: the cache key, since the tool has no upstream version. */
async function sourceHash(): Promise<string> {
  const hash = createHash('sha256');
  for (const name of await sourceFiles()) hash.update(`${name}\0`).update(await readFile(join(moduleDir, name))).update('\0');
  return hash.digest('hex').slice(0, 12);
}

/**
 * Builds tools/peer-wait unless the binary for the current sources is cached (in `<QUORUM_CACHE>/bin`, next
 * to localkube's binaries); returns its path. Static (CGO_ENABLED=0), so the image needs no libc and the
 * binary uses Go's own resolver, reading the pod's /etc/resolv.conf as etcd (also built without cgo) does.
 */
export async function buildPeerWaitBinary(): Promise<string> {
  const dir = join(cacheRoot, 'bin', `peer-wait-${await sourceHash()}`);
  const binary = join(dir, 'peer-wait');
  if (await pathExists(binary)) return binary;
  // Built into a partial directory and renamed, so an interrupted build never leaves a binary to reuse.
  const partial = `${dir}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  try {
    await run('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', join(partial, 'peer-wait'), '.'], {
      cwd: moduleDir,
      env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: process.env['GOTOOLCHAIN'] ?? 'auto' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`building tools/peer-wait failed: ${stderr || (err as Error).message}`, { cause: err });
  }
  await rm(dir, { recursive: true, force: true });
  await rename(partial, dir);
  return binary;
}

/**
 * Builds the image; unless a name is given it is tagged `<version>-dev.<content digest>`, like the operator's
 * (deploy/image.ts), so that installing a changed build changes the operator's PEER_WAIT_IMAGE and new member
 * pods get it, instead of a node's stale copy under a reused tag.
 */
export async function buildPeerWaitImage(name?: string): Promise<ImageArchive> {
  const binary = await buildPeerWaitBinary();
  const entries: TarEntry[] = [...baseImageEntries, { type: 'file', path: 'peer-wait', mode: 0o755, data: await readFile(binary) }];
  const config = {
    Entrypoint: ['/peer-wait'],
    User: '65532:65532',
    Labels: { 'org.opencontainers.image.title': 'quorum peer-wait (etcd member init container)' },
  };
  return imageFromEntries(name ?? `${PEER_WAIT_IMAGE}-dev.${contentDigest(entries, config).slice(0, 12)}`, entries, config);
}
