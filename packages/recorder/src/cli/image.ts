// `quorum history image [--name NAME] [--load-with COMMAND]`: builds the recorder's image as an OCI archive,
// printing "NAME ARCHIVE" for `quorum history install --image NAME`, and hands the archive to whatever loads
// images where the recorder will run. The shipped CLI knows no particular cluster: the command says how.
import { parseArgs } from 'node:util';
import { printAndLoadImages, runCommand, UsageError, type CommandIO } from '@quorum/kit';

export const IMAGE_USAGE = `usage: quorum history image [--name NAME] [--load-with COMMAND]
  Builds the change recorder's image (an OCI archive) and prints "NAME ARCHIVE". With --load-with, runs
  COMMAND ARCHIVE through sh (its output goes to stderr), e.g. --load-with 'npx localkube load-image' for
  the local test cluster, or a script that pushes to your registry. Then: quorum history install --image NAME`;

interface ImageArgs {
  help: boolean;
  name?: string;
  loadWith?: string;
}

export function parseImageArgs(argv: readonly string[]): ImageArgs {
  let values;
  try {
    values = parseArgs({ args: [...argv], allowPositionals: false, strict: true, options: { name: { type: 'string' }, 'load-with': { type: 'string' }, help: { type: 'boolean', short: 'h', default: false } } }).values;
  } catch (err) {
    throw new UsageError((err as Error).message);
  }
  return { help: values.help, ...(values.name !== undefined ? { name: values.name } : {}), ...(values['load-with'] !== undefined ? { loadWith: values['load-with'] } : {}) };
}

export function imageCommand(argv: readonly string[], io: CommandIO): Promise<number> {
  return runCommand({ program: 'quorum history image', usage: IMAGE_USAGE, parse: () => parseImageArgs(argv), act: buildImage }, io);
}

async function buildImage(args: ImageArgs, io: CommandIO): Promise<void> {
  // Build-time packages, loaded only here.
  const { buildRecorderImage } = await import('../deploy/image.ts');
  const image = await buildRecorderImage(args.name);
  await printAndLoadImages([image], args.loadWith, io);
  if (args.loadWith !== undefined) io.stderr.write(`quorum history image: loaded; install with quorum history install --image ${image.name}\n`);
}
