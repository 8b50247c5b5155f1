// Image assembly is deterministic and produces archives that standard tools read.
import assert from 'node:assert/strict';
import { createHash } from 'node:crypto';
import { mkdtemp, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { test } from 'node:test';
import { run } from '../../src/exec.ts';
import { buildImageArchive } from '../../src/oci.ts';
import { tar } from '../../src/tar.ts';

const spec = {
  name: 'example.test/tools/hello:v1',
  entries: [
    { type: 'file' as const, path: 'usr/local/bin/hello', mode: 0o755, data: Buffer.from('#!/bin/true\n') },
    { type: 'symlink' as const, path: 'bin/hi', target: '/usr/local/bin/hello' },
    { type: 'file' as const, path: `deep/${'d'.repeat(90)}/${'f'.repeat(60)}.txt`, mode: 0o644, data: Buffer.alloc(1000, 7) },
  ],
  config: { Entrypoint: ['/usr/local/bin/hello'] },
};

test('the same spec gives byte-identical archives', () => {
  const a = createHash('sha256').update(buildImageArchive(spec)).digest('hex');
  const b = createHash('sha256').update(buildImageArchive(spec)).digest('hex');
  assert.equal(a, b);
});

test('GNU tar reads our ustar output, long names and modes included', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'tar-'));
  await writeFile(join(dir, 'layer.tar'), tar(spec.entries));
  const listing = (await run('tar', ['-tvf', join(dir, 'layer.tar')])).stdout;
  assert.match(listing, /-rwxr-xr-x root\/root\s+12 .* usr\/local\/bin\/hello/);
  assert.match(listing, /bin\/hi -> \/usr\/local\/bin\/hello/);
  assert.match(listing, new RegExp(`deep/d{90}/f{60}\\.txt`));
});

test('the archive is an OCI layout whose index names the image and whose digests match their blobs', async () => {
  const dir = await mkdtemp(join(tmpdir(), 'oci-'));
  await writeFile(join(dir, 'image.tar'), buildImageArchive(spec));
  await run('tar', ['-xf', join(dir, 'image.tar'), '-C', dir]);
  const { readFile } = await import('node:fs/promises');
  const index = JSON.parse(await readFile(join(dir, 'index.json'), 'utf8')) as { manifests: { digest: string; annotations: Record<string, string> }[] };
  assert.equal(index.manifests[0]!.annotations['io.containerd.image.name'], spec.name);
  const blob = async (digest: string): Promise<Buffer> => readFile(join(dir, 'blobs', 'sha256', digest.slice(7)));
  const manifestBytes = await blob(index.manifests[0]!.digest);
  assert.equal(`sha256:${createHash('sha256').update(manifestBytes).digest('hex')}`, index.manifests[0]!.digest);
  const manifest = JSON.parse(manifestBytes.toString()) as { config: { digest: string }; layers: { digest: string; size: number }[] };
  const layer = await blob(manifest.layers[0]!.digest);
  assert.equal(layer.length, manifest.layers[0]!.size);
  const config = JSON.parse((await blob(manifest.config.digest)).toString()) as { rootfs: { diff_ids: string[] }; config: { Entrypoint: string[] } };
  assert.deepEqual(config.config.Entrypoint, ['/usr/local/bin/hello']);
  assert.equal(config.rootfs.diff_ids[0], manifest.layers[0]!.digest);
});
