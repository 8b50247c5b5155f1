// File operations that survive a crash at any point: a file is written to a temporary name in its final
// directory, flushed, then renamed over its final name, and the directory is flushed so the rename itself
// is on disk. A reader therefore sees the old file or the new one, never a torn one; a crash before the
// rename leaves only a temporary file, which the store removes when it opens.
import { randomBytes } from 'node:crypto';
import { mkdir, open, rename, rm, rmdir, unlink } from 'node:fs/promises';
import { dirname, join } from 'node:path';

/** Names of temporary files start with this; nothing else in a store does. */
export const TEMP_PREFIX = '.tmp-';

export function isTempName(name: string): boolean {
  return name.startsWith(TEMP_PREFIX);
}

/** Flushes a directory's entries (creations, renames, removals) to disk. */
export async function syncDir(dir: string): Promise<void> {
  const handle = await open(dir, 'r');
  try {
    await handle.sync();
  } finally {
    await handle.close();
  }
}

/** Writes `content` to `dir/name` atomically and durably; returns its size in bytes. */
export async function writeFileAtomic(dir: string, name: string, content: string): Promise<number> {
  const temp = join(dir, `${TEMP_PREFIX}${name}.${randomBytes(6).toString('hex')}`);
  const data = Buffer.from(content, 'utf8');
  try {
    const handle = await open(temp, 'wx', 0o640);
    try {
      await handle.writeFile(data);
      await handle.sync();
    } finally {
      await handle.close();
    }
    await rename(temp, join(dir, name));
  } catch (err) {
    await rm(temp, { force: true });
    throw err;
  }
  await syncDir(dir);
  return data.length;
}

/** Removes `dir/name` durably. */
export async function removeFile(dir: string, name: string): Promise<void> {
  await unlink(join(dir, name));
  await syncDir(dir);
}

/**
 * Creates `root/…parts` level by level, flushing the parent of each directory it creates, so a file later
 * written there cannot be lost with a directory entry that never reached the disk.
 */
export async function makeDirs(root: string, parts: readonly string[]): Promise<string> {
  let path = root;
  for (const part of parts) {
    path = join(path, part);
    try {
      await mkdir(path, { mode: 0o750 });
      await syncDir(dirname(path));
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code !== 'EEXIST') throw err;
    }
  }
  return path;
}

/** Removes an empty directory durably; a directory that is not empty (or gone) is left alone. */
export async function removeEmptyDir(path: string): Promise<void> {
  try {
    await rmdir(path);
  } catch (err) {
    const code = (err as NodeJS.ErrnoException).code;
    if (code === 'ENOTEMPTY' || code === 'ENOENT' || code === 'EEXIST') return;
    throw err;
  }
  await syncDir(dirname(path));
}
