// `node packages/kit/src/image/write-built.ts OUT DIR…`: the workspace packages DIR… (e.g. packages/runtime)
// built as an operator image carries them (built-js.ts), written under OUT: OUT/app/DIR/package.json with its
// exports pointed at dist/, and OUT/app/DIR/dist/. The root Dockerfile runs it; the images localkube assembles
// get the same entries in memory (operator-image.ts).
import { mkdir, writeFile } from 'node:fs/promises';
import { dirname, join, resolve } from 'node:path';
import { builtWorkspaceEntries } from './built-js.ts';

const [out, ...dirs] = process.argv.slice(2);
if (out === undefined || dirs.length === 0) throw new Error('usage: write-built.ts OUT DIR…');
const root = resolve(import.meta.dirname, '../../../..');
for (const dir of dirs) {
  for (const entry of await builtWorkspaceEntries(root, dir)) {
    const path = join(out, entry.path);
    if (entry.type === 'dir') await mkdir(path, { recursive: true });
    else if (entry.type === 'file') {
      await mkdir(dirname(path), { recursive: true });
      await writeFile(path, entry.data, { mode: entry.mode });
    } else throw new Error(`${entry.path}: a ${entry.type} in a package's sources`);
  }
}
