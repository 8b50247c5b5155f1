// `npm run bench`: runs every packages/*/bench/*.bench.ts in turn. Each prints one JSON line per figure,
// {"bench": "<name>", "value": <number>, "unit": "<unit>"}, on stdout; progress goes to stderr.
import { spawn } from 'node:child_process';
import { readdir } from 'node:fs/promises';
import { join } from 'node:path';

const root = join(import.meta.dirname, '..');
const only = process.argv[2];
let failed = 0;
const all: { pkg: string; dir: string; file: string }[] = [];
for (const pkg of (await readdir(join(root, 'packages'))).sort()) {
  const dir = join(root, 'packages', pkg, 'bench');
  for (const file of (await readdir(dir).catch(() => [] as string[])).filter((f) => f.endsWith('.bench.ts')).sort()) all.push({ pkg, dir, file });
}
// A name picks a package's benchmarks (`runtime`), else the file it names (`etcd` → etcd.bench.ts, not the
// etcd-operator package's backup.bench.ts too), else every file or package whose name contains it.
const pick = (name: string): typeof all => {
  const byPackage = all.filter((b) => b.pkg === name);
  if (byPackage.length > 0) return byPackage;
  const byFile = all.filter((b) => b.file === `${name}.bench.ts`);
  return byFile.length > 0 ? byFile : all.filter((b) => b.file.includes(name) || b.pkg.includes(name));
};
const selected = only ? pick(only) : all;
for (const { pkg, dir, file } of selected) {
  const code = await new Promise<number>((resolve) => spawn(process.execPath, [join(dir, file)], { stdio: 'inherit' }).on('exit', (c) => resolve(c ?? 1)));
  if (code !== 0) {
    process.stderr.write(`bench ${pkg}/${file} failed (exit ${code})\n`);
    failed++;
  }
}
process.exitCode = failed ? 1 : 0;
