import { test } from 'node:test';
import assert from 'node:assert/strict';
import { execFileSync } from 'node:child_process';
import { resolve } from 'node:path';
import type { TarEntry } from '@quorum/images';
import { dedupeEntries, devImageName, operatorImageConfig, productionPackagePaths } from '../../src/image/index.ts';

const repoRoot = resolve(import.meta.dirname, '../../../..');
const file = (path: string, text: string): TarEntry => ({ type: 'file', path, mode: 0o644, data: Buffer.from(text) });

test('the config: node runs the entrypoint from the sources as 65532, with the source condition in NODE_OPTIONS too', () => {
  const config = operatorImageConfig({ entrypoint: 'src/operator/main.ts', title: 'quorum widget operator' }, 'packages/widget-operator');
  assert.deepEqual(config, {
    Entrypoint: ['/usr/local/bin/node', '--conditions=@quorum/source', '/app/packages/widget-operator/src/operator/main.ts'],
    WorkingDir: '/app',
    User: '65532:65532',
    Env: ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=production', 'NODE_OPTIONS=--conditions=@quorum/source'],
    Labels: { 'org.opencontainers.image.title': 'quorum widget operator' },
  });
  // The key order is part of the content digest, hence of the tag: the operators' tags did not change with the move.
  assert.deepEqual(Object.keys(config), ['Entrypoint', 'WorkingDir', 'User', 'Env', 'Labels']);
});

test('env: a variable named like a default replaces it in place, others follow the defaults', () => {
  const config = operatorImageConfig({ entrypoint: 'main.ts', title: 't', env: { NODE_ENV: 'development', WIDGET_MODE: 'strict' } }, 'packages/w');
  assert.deepEqual(config.Env, ['PATH=/usr/local/bin:/usr/bin:/bin', 'NODE_ENV=development', 'NODE_OPTIONS=--conditions=@quorum/source', 'WIDGET_MODE=strict']);
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
  const config = operatorImageConfig({ entrypoint: 'main.ts', title: 't' }, 'packages/w');
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
