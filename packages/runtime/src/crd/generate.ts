// The write step of a package's `scripts/generate.ts`: files generated from code are rewritten only when their
// content changed, so running the generator twice changes nothing and its output says what it touched.
import { mkdir, readFile, writeFile } from 'node:fs/promises';
import { dirname, relative } from 'node:path';

/**
 * Writes each `[file, content]` whose committed copy differs (creating directories), printing `wrote` or
 * `unchanged` with the path relative to `root`. Returns the files written.
 */
export async function writeGenerated(files: Iterable<readonly [file: string, content: string]>, root: string): Promise<string[]> {
  const written: string[] = [];
  // One at a time: the lines come out in the caller's order.
  for (const [file, content] of files) {
    const before = await readFile(file, 'utf8').catch(() => undefined);
    if (before === content) {
      process.stdout.write(`unchanged ${relative(root, file)}\n`);
      continue;
    }
    await mkdir(dirname(file), { recursive: true });
    await writeFile(file, content);
    process.stdout.write(`wrote ${relative(root, file)}\n`);
    written.push(file);
  }
  return written;
}
