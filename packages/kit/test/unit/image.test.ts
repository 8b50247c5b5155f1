import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { mkdtemp, readFile, readlink, rm, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { buildImageArchive, tar, type TarEntry } from '@quorum/images';
import { builtManifest, builtPath, compileModule, dedupeEntries, devImageName, operatorImageConfig, productionPackagePaths, unpackImage, untar } from '../../src/image/index.ts';

const repoRoot = resolve(import.meta.dirname, '../../../..');
const file = (path: string, text: string): TarEntry => ({ type: 'file', path, mode: 0o644, data: Buffer.from(text) });

test('the config: node runs the built entrypoint with the operator flags as 65532, and nothing asks for the sources', () => {
  const config = operatorImageConfig({ entrypoint: 'src/operator/main.ts', title: 'quorum widget operator' }, 'packages/widget-operator');
  assert.deepEqual(config, {
    Entrypoint: ['/usr/local/bin/node', '--max-semi-space-size=1', '/app/packages/widget-operator/dist/operator/main.js'],
    WorkingDir: '/app',
    User: '65532:65532',
    Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=production'],
    Labels: { 'org.opencontainers.image.title': 'quorum widget operator' },
  });
  // The key order is part of the content digest, hence of the tag.
  assert.deepEqual(Object.keys(config), ['Entrypoint', 'WorkingDir', 'User', 'Env', 'Labels']);
});

test('env: a variable named like a default replaces it in place, others follow the defaults', () => {
  const config = operatorImageConfig({ entrypoint: 'src/main.ts', title: 't', env: { NODE_ENV: 'development', WIDGET_MODE: 'strict' } }, 'packages/w');
  assert.deepEqual(config.Env, ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=development', 'WIDGET_MODE=strict']);
});

test('built paths: src/**.ts is dist/**.js; anything else is refused rather than guessed', () => {
  assert.equal(builtPath('src/operator/main.ts'), 'dist/operator/main.js');
  assert.equal(builtPath('./src/index.ts'), './dist/index.js');
  for (const bad of ['lib/main.ts', 'src/types.d.ts', 'src/main.js']) assert.throws(() => builtPath(bad), /not a TypeScript module under src/);
});

test('the built package.json: every export target and condition naming src/**.ts points at dist/**.js; the rest is kept', () => {
  const manifest = {
    name: '@quorum/widget',
    type: 'module',
    exports: { '.': { '@quorum/source': './src/index.ts', types: './dist/index.d.ts', default: './dist/index.js' }, './image': './src/image/index.ts' },
    dependencies: { yaml: '^2' },
  };
  assert.deepEqual(builtManifest(manifest), {
    name: '@quorum/widget',
    type: 'module',
    exports: { '.': { '@quorum/source': './dist/index.js', types: './dist/index.d.ts', default: './dist/index.js' }, './image': './dist/image/index.js' },
    dependencies: { yaml: '^2' },
  });
});

test('a module compiled: types erased, relative .ts imports (static and dynamic) rewritten to .js, packages untouched', async () => {
  const source = [
    "import type { Widget } from './types.ts';",
    "import { make } from '../make.ts';",
    "import { parse } from 'yaml';",
    'export const size = (w: Widget): number => make(w).length;',
    "export const later = () => import('./later.ts');",
    'export { parse };',
  ].join('\n');
  const js = (await compileModule(Buffer.from(source), '/repo/packages/w/src/a.ts')).toString();
  assert.doesNotMatch(js, /Widget|: number|\.ts['"]/);
  assert.match(js, /from ["']\.\.\/make\.js["']/);
  assert.match(js, /import\(["']\.\/later\.js["']\)/);
  assert.match(js, /from 'yaml'/);
  await assert.rejects(compileModule(Buffer.from('export const x = ;'), '/repo/packages/w/src/broken.ts'), /broken\.ts: Expression expected/);
});

test('the packages npm ls lists: those under the root node_modules, each once, in order (not the root, not elsewhere)', () => {
  const listed = ['/repo', '/repo/node_modules/@quorum/kit', '  /repo/node_modules/yaml  ', '/repo/node_modules/@quorum/kit', '/elsewhere/node_modules/x', '', '/repo/node_modules_old/y'].join('\n');
  assert.deepEqual(productionPackagePaths(listed, '/repo'), ['/repo/node_modules/@quorum/kit', '/repo/node_modules/yaml']);
});

test('dedupeEntries: the last entry for a path wins, a trailing slash names the same path, first-seen order is kept', () => {
  const entries: TarEntry[] = [{ type: 'dir', path: 'app/', mode: 0o755 }, file('app/a', '1'), file('app/b', '2'), { type: 'dir', path: 'app', mode: 0o700 }, file('app/a', '3')];
  const unique = dedupeEntries(entries);
  assert.deepEqual(unique.map((e) => e.path), ['app', 'app/a', 'app/b']);
  assert.equal(unique[0]!.type === 'dir' && unique[0]!.mode, 0o700);
  assert.equal(unique[1]!.type === 'file' && unique[1]!.data.toString(), '3');
});

test('the dev tag: <image>-dev.<12 hex digits>, the same for the same contents, another for a changed file', () => {
  const config = operatorImageConfig({ entrypoint: 'src/main.ts', title: 't' }, 'packages/w');
  const name = devImageName('ghcr.io/quorum-dev/widget:0.1.0', [file('app/a', '1')], config);
  assert.match(name, /^ghcr\.io\/quorum-dev\/widget:0\.1\.0-dev\.[0-9a-f]{12}$/);
  assert.equal(devImageName('ghcr.io/quorum-dev/widget:0.1.0', [file('app/a', '1')], config), name);
  assert.notEqual(devImageName('ghcr.io/quorum-dev/widget:0.1.0', [file('app/a', '2')], config), name);
});

test('@quorum/kit does not load the image code, @quorum/kit/image does (issue 24: an operator process carries none of it)', () => {
  // Every module a fresh process resolves, recorded by a resolve hook: first for @quorum/kit, then for @quorum/kit/image.
  const script = `
    import { registerHooks } from 'node:module';
    const seen = [];
    registerHooks({ resolve: (specifier, context, next) => { const r = next(specifier, context); seen.push(r.url); return r; } });
    const imageCode = () => seen.filter((u) => u.includes('/packages/images/') || u.includes('/packages/kit/src/image/')).length;
    await import('@quorum/kit');
    const fromKit = imageCode();
    await import('@quorum/kit/image');
    console.log(JSON.stringify({ fromKit, fromImage: imageCode() }));`;
  const out = execFileSync(process.execPath, ['--conditions=@quorum/source', '--input-type=module', '-e', script], { cwd: repoRoot, encoding: 'utf8' });
  const { fromKit, fromImage } = JSON.parse(out) as { fromKit: number; fromImage: number };
  assert.equal(fromKit, 0);
  assert.ok(fromImage > 0, 'the hook sees the image modules once @quorum/kit/image is imported');
});

test('untar reads back what @quorum/images writes: files with their modes, directories, symlinks, long paths', () => {
  const long = `app/${'deep/'.repeat(30)}module.js`;
  const entries: TarEntry[] = [{ type: 'dir', path: 'app', mode: 0o755 }, { type: 'file', path: long, mode: 0o600, data: Buffer.from('x'.repeat(700)) }, { type: 'symlink', path: 'app/link', target: '../elsewhere' }];
  assert.deepEqual(untar(tar(entries)), entries);
});

test("unpackImage: the layer's /app in a folder, the entrypoint pointed there, the environment without PATH", async (t) => {
  const dir = await mkdtemp(join(tmpdir(), 'unpack-test-'));
  t.after(() => rm(dir, { recursive: true, force: true }));
  const config = operatorImageConfig({ entrypoint: 'src/main.ts', title: 't', env: { WIDGET_MODE: 'strict' } }, 'packages/w');
  const layer: TarEntry[] = [
    { type: 'file', path: 'app/packages/w/dist/main.js', mode: 0o640, data: Buffer.from('console.log(1)') },
    { type: 'symlink', path: 'app/node_modules/@quorum/w', target: '../../packages/w' },
    file('usr/local/bin/node', 'not unpacked'),
  ];
  const archive = join(dir, 'image.tar');
  await writeFile(archive, buildImageArchive({ name: 'example.test/w:1', entries: layer, config }));
  const image = await unpackImage({ name: 'example.test/w:1', archive }, dir);
  assert.deepEqual(image.args, ['--max-semi-space-size=1', join(image.root, 'app/packages/w/dist/main.js')]);
  assert.deepEqual(image.env, { NODE_ENV: 'production', WIDGET_MODE: 'strict' });
  assert.equal(await readFile(image.args[1]!, 'utf8'), 'console.log(1)');
  assert.equal((await stat(image.args[1]!)).mode & 0o777, 0o640);
  assert.equal(await readlink(join(image.root, 'app/node_modules/@quorum/w')), '../../packages/w');
  await assert.rejects(stat(join(image.root, 'usr')), { code: 'ENOENT' });
});
