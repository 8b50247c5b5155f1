// Where things live: the build cache outside the clone (keyed by exact version) and the repository itself.
import { join, resolve } from 'node:path';
import { cacheRoot } from '@quorum/images';

// The cache root (and its images/ directory) is @quorum/images', so every package agrees on one location.
export { cacheRoot, imageCache } from '@quorum/images';
export const repoRoot = resolve(import.meta.dirname, '../../..');
export const toolsDir = join(repoRoot, 'tools');
export const binCache = join(cacheRoot, 'bin');
export const defaultStateDir = (cwd = process.cwd()): string => join(cwd, '.localkube');
