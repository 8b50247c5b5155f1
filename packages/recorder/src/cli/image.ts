// `quorum history image [--name NAME] [--load STATE_DIR]`: builds the recorder's image as an OCI archive (and
// loads it into localkube's nodes), printing "NAME ARCHIVE", for `quorum history install --image NAME`.
import { parseArgs } from 'node:util';
import type { HistoryIO } from './history.ts';

export const IMAGE_USAGE = `usage: quorum history image [--name NAME] [--load STATE_DIR]
  Builds the change recorder's image (an OCI archive) and prints "NAME ARCHIVE"; with --load, loads it into
  every node of the localkube in STATE_DIR. Then: quorum history install --image NAME`;

export async function imageCommand(argv: readonly string[], io: HistoryIO): Promise<number> {
  let values: { name?: string | undefined; load?: string | undefined; help?: boolean | undefined };
  try {
    values = parseArgs({ args: [...argv], allowPositionals: false, strict: true, options: { name: { type: 'string' }, load: { type: 'string' }, help: { type: 'boolean', short: 'h' } } }).values;
  } catch (err) {
    io.stderr.write(`quorum history image: ${(err as Error).message}\n${IMAGE_USAGE}\n`);
    return 2;
  }
  if (values.help) {
    io.stdout.write(`${IMAGE_USAGE}\n`);
    return 0;
  }
  try {
    // Build-time packages, loaded only here.
    const { buildRecorderImage } = await import('../deploy/image.ts');
    const image = await buildRecorderImage(values.name);
    io.stdout.write(`${image.name} ${image.archive}\n`);
    if (values.load) {
      const { LocalKube } = await import('@quorum/localkube');
      const kube = await LocalKube.attach(values.load);
      await kube.loadImage(image.archive);
      kube.client.close();
      io.stderr.write(`quorum history image: loaded; install with quorum history install --image ${image.name}\n`);
    }
    return 0;
  } catch (err) {
    io.stderr.write(`quorum history image: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}
