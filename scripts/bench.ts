// `npm run bench`: runs every packages/*/bench/*.bench.ts in turn. Each prints one JSON line per figure,
// {"bench": "<name>", "value": <number>, "unit": "<unit>"}, on stdout; progress goes to stderr.
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const only = process.argv[2];
let failed = 0;
for (const pkg of (await readdir(join(root, 'packages'))).sort()) {
  const dir = join(root, 'packages', pkg, 'bench');
  const files = (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.bench.ts') && (!only || f.includes(only) || pkg.includes(only)));
  for (const file of files.sort()) {
    const code = await new Promise<number>((resolve) => spawn(process.execPath, [join(dir, file)], { stdio: 'inherit' }).on('exit', (c) => resolve(c ?? 1)));
    if (code !== 0) {
      process.stderr.write(`bench ${pkg}/${file} failed (exit ${code})\n`);
      failed++;
    }
  }
}
process.exitCode = failed ? 1 : 0;
