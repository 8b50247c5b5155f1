// `quorum history image [--name NAME] [--load-with COMMAND]`: builds the recorder's image as an OCI archive,
// printing "NAME ARCHIVE" for `quorum history install --image NAME`, and hands the archive to whatever loads
// images where the recorder will run. The shipped CLI knows no particular cluster: the command says how.
import { parseArgs } from 'node:util';
import type { HistoryIO } from './io.ts';

export const IMAGE_USAGE = `usage: quorum history image [--name NAME] [--load-with COMMAND]
  Builds the change recorder's image (an OCI archive) and prints "NAME ARCHIVE". With --load-with, runs
  COMMAND ARCHIVE through sh (its output goes to stderr), e.g. --load-with 'npx localkube load-image' for
  the local test cluster, or a script that pushes to your registry. Then: quorum history install --image NAME`;

export async function imageCommand(argv: readonly string[], io: HistoryIO): Promise<number> {
  let values: { name?: string | undefined; 'load-with'?: string | undefined; help?: boolean | undefined };
  try {
    values = parseArgs({ args: [...argv], allowPositionals: false, strict: true, options: { name: { type: 'string' }, 'load-with': { type: 'string' }, help: { type: 'boolean', short: 'h' } } }).values;
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
    const loader = values['load-with'];
    if (loader) {
      await loadWith(loader, image.archive, io);
      io.stderr.write(`quorum history image: loaded; install with quorum history install --image ${image.name}\n`);
    }
    return 0;
  } catch (err) {
    io.stderr.write(`quorum history image: ${err instanceof Error ? err.message : String(err)}\n`);
    return 1;
  }
}

/** Runs `COMMAND ARCHIVE` through sh, its output to stderr (stdout carries only "NAME ARCHIVE" lines). */
async function loadWith(command: string, archive: string, io: HistoryIO): Promise<void> {
  const { run } = await import('@quorum/images');
  // The archive is passed as "$1", never spliced into the command text, so no path needs quoting.
  const result = await run('sh', ['-c', `${command} "$1"`, 'sh', archive], { allowFailure: true, onLine: (line) => void io.stderr.write(`${line}\n`) });
  if (result.exitCode !== 0) throw new Error(`--load-with: \`${command} ${archive}\` exited with ${result.exitCode ?? 'a signal'}`);
}
