// What a user does with @quorum/runtime and @quorum/storage: `npm pack` each (prepack builds dist/), install
// the tarballs with npm into an empty folder outside the repository, then import them from plain JavaScript
// with plain node (no source condition: the repository's own resolution must not leak in) and typecheck a
// TypeScript consumer under `module: nodenext` and under `module: preserve` + `moduleResolution: bundler`.
// Prints the figures of issue 20: each tarball's size and file count, the installed tree, the cold import time.
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { mkdir, mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { pack, removeBuild, repoRoot, run, type Packed } from '../packing.ts';

const PACKAGES = ['runtime', 'storage'] as const;

const node = (args: string[], cwd: string): Promise<string> => run(process.execPath, args, cwd);
const tsc = (args: string[], cwd: string): Promise<string> => node([join(repoRoot, 'node_modules', 'typescript', 'bin', 'tsc'), ...args], cwd);

let work: string;
let consumer: string;
const packed = new Map<string, Packed>();
const started = performance.now();

before(async () => {
  work = await mkdtemp(join(tmpdir(), 'quorum-packed-'));
  assert.ok(!work.startsWith(repoRoot + '/'), `the consumer must live outside the repository (${work})`);
  const tarballs = join(work, 'tarballs');
  consumer = join(work, 'consumer');
  await mkdir(consumer, { recursive: true });
  await mkdir(tarballs, { recursive: true });
  for (const pkg of PACKAGES) packed.set(pkg, await pack(pkg, tarballs));
  await writeFile(join(consumer, 'package.json'), JSON.stringify({ name: 'consumer', private: true, type: 'module' }, null, 2));
  // @types/node at the repository's own version: the declarations name Node's types, as a user's project has them.
  const typesNode = (JSON.parse(await readFile(join(repoRoot, 'node_modules', '@types', 'node', 'package.json'), 'utf8')) as { version: string }).version;
  const install = [...packed.values()].map((p) => join(tarballs, p.filename));
  await run('npm', ['install', '--no-audit', '--no-fund', '--prefer-offline', '--loglevel=error', ...install, `@types/node@${typesNode}`], consumer);
});

after(async () => {
  if (work) await rm(work, { recursive: true, force: true });
  for (const pkg of PACKAGES) await removeBuild(pkg);
});

test('each tarball holds the built JavaScript, declarations and maps of every export, and no tests', () => {
  for (const [pkg, report] of packed) {
    const files = new Set(report.files.map((f) => f.path));
    const manifest = JSON.parse(readFileSync(join(repoRoot, 'packages', pkg, 'package.json'), 'utf8')) as { exports: Record<string, Record<string, string>> };
    for (const [entry, conditions] of Object.entries(manifest.exports)) {
      for (const condition of ['types', 'default']) {
        const target = conditions[condition]?.replace(/^\.\//, '');
        assert.ok(target && files.has(target), `${pkg} ${entry}: ${condition} (${target}) is not in the tarball`);
      }
      const js = conditions['default']!.replace(/^\.\//, '');
      assert.ok(files.has(`${js}.map`) && files.has(js.replace(/\.js$/, '.d.ts.map')), `${pkg} ${entry}: no source or declaration map`);
    }
    const stray = [...files].filter((f) => !/^(dist\/|src\/|package\.json$|README\.md$|CHANGELOG\.md$)/.test(f));
    assert.deepEqual(stray, [], `${pkg}: files outside dist/, src/ and the docs`);
    console.log(`${report.filename}: ${(report.size / 1024).toFixed(0)} KiB packed, ${(report.unpackedSize / 1024).toFixed(0)} KiB unpacked, ${report.entryCount} files`);
  }
});

test('plain JavaScript imports every entry with plain node, and what it imports works without a cluster', async () => {
  await writeFile(
    join(consumer, 'app.mjs'),
    `import { Backoff, Manager, WorkQueue } from '@quorum/runtime';
import { applySchemaDefaults } from '@quorum/runtime/crd';
import { TestEnv, eventually } from '@quorum/runtime/testing';
import { sleep } from '@quorum/runtime/timers';
import { openStore } from '@quorum/storage';
import { freePorts } from '@quorum/storage/testing';
import { mkdtemp } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { text } from 'node:stream/consumers';

const queue = new WorkQueue();
queue.add('default/a');
queue.add('default/a');
const defaults = applySchemaDefaults({ type: 'object', properties: { replicas: { type: 'integer', default: 3 } } }, {});
await sleep(1);
// A PVC folder store: loads the driver through the entry's dynamic import, as a real location would.
const root = await mkdtemp(join(tmpdir(), 'consumer-pvc-'));
const store = await openStore({ pvc: { claimName: 'backups' } }, undefined, root);
await store.upload('a/b.txt', Readable.from([Buffer.from('hello')]));
const read = await text(await store.download('a/b.txt'));
console.log(JSON.stringify({
  manager: typeof Manager, backoff: typeof Backoff, testEnv: typeof TestEnv.connect,
  queued: queue.len(), defaults, polled: await eventually('a value', () => 42), read,
  listed: (await store.list('a/')).length, ports: (await freePorts(2)).length,
}));
`,
  );
  const out = JSON.parse(await node(['app.mjs'], consumer)) as Record<string, unknown>;
  assert.deepEqual(out, {
    manager: 'function',
    backoff: 'function',
    testEnv: 'function',
    queued: 1,
    defaults: { replicas: 3 },
    polled: 42,
    read: 'hello',
    listed: 1,
    ports: 2,
  });
});

const CONSUMER_TS = `import { Client, Manager, WorkQueue, type KubeObject } from '@quorum/runtime';
import { customResourceDefinition, type SchemaNode } from '@quorum/runtime/crd';
import { TestEnv, eventually } from '@quorum/runtime/testing';
import { openStore, StorageError, type Location, type ObjectStore } from '@quorum/storage';
import { startMinio, type StorageServer } from '@quorum/storage/testing';

const location: Location = { pvc: { claimName: 'backups' } };
const store: Promise<ObjectStore> = openStore(location, undefined, '/mnt/backups');
const object: KubeObject = { apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'settings', namespace: 'default' } };
const schema: SchemaNode = { type: 'object' };
const queue: WorkQueue<string> = new WorkQueue<string>();
const env: Promise<TestEnv> = TestEnv.connect({ kubeconfig: '/tmp/kubeconfig' });
const minio: () => Promise<StorageServer> = () => startMinio({ command: ['minio'] });
const polled: Promise<number> = eventually('a value', () => 1);
// @ts-expect-error: the types are real, so a wrong one is refused
const wrong: Location = { pvc: { claim: 'backups' } };
export const used: unknown[] = [Client, Manager, customResourceDefinition, StorageError, store, object, schema, queue, env, minio, polled, wrong];
`;

// Under nodenext every declaration file is checked too (skipLibCheck off: ours must be sound, not merely
// resolvable); under bundler, which differs only in how specifiers resolve, the dependencies' (large)
// declarations are not checked again.
for (const [mode, options] of [
  ['nodenext', { module: 'nodenext', skipLibCheck: false }],
  ['bundler', { module: 'preserve', moduleResolution: 'bundler', skipLibCheck: true }],
] as const) {
  test(`a TypeScript consumer typechecks against the declarations (module ${mode})`, async () => {
    const dir = join(consumer, `ts-${mode}`);
    await mkdir(dir, { recursive: true });
    await writeFile(join(dir, 'consumer.ts'), CONSUMER_TS);
    const compilerOptions = { target: 'es2024', strict: true, noEmit: true, types: ['node'], ...options };
    await writeFile(join(dir, 'tsconfig.json'), JSON.stringify({ compilerOptions, files: ['consumer.ts'] }, null, 2));
    await tsc(['-p', dir], consumer);
  });
}

test('figures: the installed dependency tree and the cold import time', async () => {
  const tree = (await run('npm', ['ls', '--all', '--parseable'], consumer)).split('\n').filter((l) => l.includes('node_modules'));
  const timings: number[] = [];
  for (let i = 0; i < 5; i++) {
    const script = "const t = performance.now(); await import('@quorum/runtime'); console.log(performance.now() - t)";
    timings.push(Number(await node(['--input-type=module', '-e', script], consumer)));
  }
  timings.sort((a, b) => a - b);
  assert.ok(tree.length > 0 && timings.every((t) => t > 0));
  console.log(`installed: ${tree.length} packages (npm ls --all) for @quorum/runtime, @quorum/storage and @types/node`);
  console.log(`cold import('@quorum/runtime'): median ${timings[2]!.toFixed(0)} ms of 5 fresh processes (${timings.map((t) => t.toFixed(0)).join(', ')})`);
  console.log(`the whole file: ${((performance.now() - started) / 1000).toFixed(1)} s`);
});
