// Where things live: the build cache outside the clone (keyed by exact version) and the repository itself.
import { homedir } from 'node:os';
import { dirname, join, resolve } from 'node:path';
import { fileURLToPath } from 'node:url';

export const repoRoot = resolve(dirname(fileURLToPath(import.meta.url)), '../../..');
export const toolsDir = join(repoRoot, 'tools');
export const cacheRoot = process.env['QUORUM_CACHE'] ?? join(homedir(), '.cache', 'quorum');
export const binCache = join(cacheRoot, 'bin');
export const imageCache = join(cacheRoot, 'images');
export const defaultStateDir = (cwd = process.cwd()): string => join(cwd, '.localkube');
