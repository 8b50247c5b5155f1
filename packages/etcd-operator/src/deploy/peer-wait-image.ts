// The image of the etcd member pods' own init containers, assembled locally as an OCI archive like the
// operator's: two static Go binaries on the minimal base, nothing else. /peer-wait (tools/peer-wait) holds
// etcd back until its peers' names resolve; /member-restore (tools/member-restore) is copied into a
// restored member's pod to run etcdutl once, inside the etcd image, which has no shell.
// tools/peer-wait/Dockerfile builds the same image for users with a registry.
import { execFile } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdir, readFile, readdir, rename, rm } from 'node:fs/promises';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { baseImageEntries, cacheRoot, contentDigest, imageFromEntries, pathExists, type ImageArchive, type TarEntry } from '@quorum/images';
import { PEER_WAIT_IMAGE } from './manifests.ts';

const run = promisify(execFile);

/** This file is packages/etcd-operator/src/deploy/; the modules are under tools/ at the repository root. */
const toolsDir = join(import.meta.dirname, '..', '..', '..', '..', 'tools');

/** The image's tools: each a Go module under tools/ building one binary of the same name. */
export const MEMBER_TOOLS = ['peer-wait', 'member-restore'] as const;
export type MemberTool = (typeof MEMBER_TOOLS)[number];

/** The files a binary is built from (tests excluded: they do not change it). */
async function sourceFiles(moduleDir: string): Promise<string[]> {
  const names = await readdir(moduleDir);
  return names.filter((n) => n === 'go.mod' || n === 'go.sum' || (n.endsWith('.go') && !n.endsWith('_test.go'))).sort();
}

/** sha256 over the source files' names and contents: the cache key, since the tool has no upstream version. */
async function sourceHash(moduleDir: string): Promise<string> {
  const hash = createHash('sha256');
  for (const name of await sourceFiles(moduleDir)) hash.update(`${name}\0`).update(await readFile(join(moduleDir, name))).update('\0');
  return hash.digest('hex').slice(0, 12);
}

/**
 * Builds tools/<tool> unless the binary for the current sources is cached (in `<QUORUM_CACHE>/bin`, next
 * to localkube's binaries); returns its path. Static (CGO_ENABLED=0), so the image needs no libc, the
 * binaries run inside any etcd image, and peer-wait uses Go's own resolver, reading the pod's
 * /etc/resolv.conf as etcd (also built without cgo) does.
 */
export async function buildMemberToolBinary(tool: MemberTool): Promise<string> {
  const moduleDir = join(toolsDir, tool);
  const dir = join(cacheRoot, 'bin', `${tool}-${await sourceHash(moduleDir)}`);
  const binary = join(dir, tool);
  if (await pathExists(binary)) return binary;
  // Built into a partial directory and renamed, so an interrupted build never leaves a binary to reuse.
  // Its own partial directory per process: the test harness builds ahead while a test may build the same.
  const partial = `${dir}.${process.pid}.partial`;
  await rm(partial, { recursive: true, force: true });
  await mkdir(partial, { recursive: true });
  try {
    await run('go', ['build', '-trimpath', '-ldflags=-s -w', '-o', join(partial, tool), '.'], {
      cwd: moduleDir,
      env: { ...process.env, CGO_ENABLED: '0', GOTOOLCHAIN: process.env['GOTOOLCHAIN'] ?? 'auto' },
      maxBuffer: 16 * 1024 * 1024,
    });
  } catch (err) {
    const stderr = (err as { stderr?: string }).stderr?.trim();
    throw new Error(`building tools/${tool} failed: ${stderr || (err as Error).message}`, { cause: err });
  }
  // Another process may have finished the same build meanwhile: then its binary stands and ours goes.
  await rename(partial, dir).catch(async (err: unknown) => {
    if (!(await pathExists(binary))) throw err;
  });
  await rm(partial, { recursive: true, force: true });
  return binary;
}

/**
 * Builds the image; unless a name is given it is tagged `<version>-dev.<content digest>`, like the operator's
 * (deploy/image.ts), so that installing a changed build changes the operator's PEER_WAIT_IMAGE and new member
 * pods get it, instead of a node's stale copy under a reused tag.
 */
export async function buildPeerWaitImage(name?: string): Promise<ImageArchive> {
  const entries: TarEntry[] = [...baseImageEntries];
  for (const tool of MEMBER_TOOLS) entries.push({ type: 'file', path: tool, mode: 0o755, data: await readFile(await buildMemberToolBinary(tool)) });
  const config = {
    Entrypoint: ['/peer-wait'],
    User: '65532:65532',
    Labels: { 'org.opencontainers.image.title': 'quorum peer-wait and member-restore (etcd member init containers)' },
  };
  return imageFromEntries(name ?? `${PEER_WAIT_IMAGE}-dev.${contentDigest(entries, config).slice(0, 12)}`, entries, config);
}
