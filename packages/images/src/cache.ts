// Image archives cached by their inputs in ~/.cache/quorum/images (QUORUM_CACHE moves the whole cache),
// outside the clone so that every checkout and every run reuses them.
import { createHash, randomBytes } from 'node:crypto';
import { access, mkdir, rename, writeFile } from 'node:fs/promises';
import { homedir } from 'node:os';
import { join } from 'node:path';
import { buildImageArchive, entriesFromDirectory, type ImageConfig, type ImageSpec } from './oci.ts';
import type { TarEntry } from './tar.ts';

/** Quorum's cache outside the clone (Node, upstream binaries, images), keyed inside by exact version. */
export const cacheRoot = process.env['QUORUM_CACHE'] ?? join(homedir(), '.cache', 'quorum');
export const imageCache = join(cacheRoot, 'images');

/** Bump when the way images are assembled changes, so cached archives are rebuilt. */
const FORMAT = 1;

export interface ImageArchive {
  name: string;
  archive: string;
}

/** Writes `spec`'s archive to the cache unless an archive for the same inputs is there; returns its path. */
export async function cachedImage(spec: ImageSpec, inputsKey: string): Promise<ImageArchive> {
  const key = createHash('sha256').update(`${FORMAT}\n${spec.name}\n${inputsKey}`).digest('hex').slice(0, 16);
  const archive = join(imageCache, `${spec.name.replace(/[^a-zA-Z0-9.-]+/g, '_')}-${key}.tar`);
  try {
    await access(archive);
  } catch {
    await mkdir(imageCache, { recursive: true });
    // A partial file of this process's own: the test harness builds ahead while tests may build the same image.
    const partial = `${archive}.${process.pid}-${randomBytes(4).toString('hex')}.partial`;
    await writeFile(partial, buildImageArchive(spec));
    await rename(partial, archive);
  }
  return { name: spec.name, archive };
}

/**
 * Builds an image named `name` whose root filesystem is the contents of `dir`; returns the cached archive,
 * rebuilt only when the directory's contents change.
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
