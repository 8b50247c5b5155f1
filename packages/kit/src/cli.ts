// An operator's commands as the `quorum` and `kubectl quorum` CLIs (packages/cli) list and run them, and what those
// commands share: the frame of one run (usage errors exit 2 with the usage, --help prints it, a failure exits 1 in
// its own words) and `--load-with COMMAND`, which hands each built image archive to whatever loads images where the
// operator will run. Each operator package exports a table of Commands; the CLI composes them.

/** Where a command writes, and the environment it reads. */
export interface CommandIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** The environment the command reads ($KUBECONFIG, $QUORUM_…); default process.env. */
  env?: Record<string, string | undefined>;
}

/** One command: `run` resolves with the exit code (EXIT_DONE, EXIT_FAILED, EXIT_USAGE). */
export interface Command {
  name: string;
  /** What follows the name in the CLI's help, e.g. `[--load-with COMMAND]`. */
  synopsis?: string;
  /** What it does, in the CLI's help; may hold several lines. */
  summary: string;
  /** Runs the command with the arguments after its name (`--help` included). */
  run(argv: readonly string[], io: CommandIO): Promise<number>;
}

export const EXIT_DONE = 0;
export const EXIT_FAILED = 1;
/** The command line is wrong. */
export const EXIT_USAGE = 2;

/** The command line is wrong: the command prints its usage with the message and exits EXIT_USAGE. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}

/** A flag's value as a whole number of at least 0 (undefined when the flag is absent); anything else is a UsageError. */
export function wholeNumberFlag(flag: string, text: string | undefined): number | undefined {
  if (text === undefined) return undefined;
  const n = Number(text);
  if (text.trim() === '' || !Number.isInteger(n) || n < 0) throw new UsageError(`--${flag} ${text}: not a whole number`);
  return n;
}

/** One run of a command: its arguments parsed, then acted on. */
export interface CommandFrame<A extends { help: boolean }> {
  /** How messages name the command: `quorum image`, `quorum history install`. */
  program: string;
  /** Printed for --help, and after a usage error. */
  usage: string;
  /** Throws UsageError for a wrong command line. */
  parse(): A;
  /**
   * Given the arguments unless they asked for help. Resolves with nothing (EXIT_DONE), or with the exit code of an
   * outcome it has already told in full, e.g. EXIT_FAILED for a backup it followed until it Failed.
   */
  act(args: Exclude<A, { help: true }>, io: CommandIO): Promise<number | void>;
}

/**
 * Parses (a UsageError prints `<program>: <message>` and the usage to stderr: exit 2), prints the usage for --help
 * (exit 0), or acts (a failure prints `<program>: <message>`: exit 1; else act's code, by default 0). Any other
 * error of parse() is a bug and throws.
 */
export async function runCommand<A extends { help: boolean }>(frame: CommandFrame<A>, io: CommandIO): Promise<number> {
  let args: A;
  try {
    args = frame.parse();
  } catch (err) {
    if (!(err instanceof UsageError)) throw err;
    io.stderr.write(`${frame.program}: ${err.message}\n${frame.usage}\n`);
    return EXIT_USAGE;
  }
  if (args.help) {
    io.stdout.write(`${frame.usage}\n`);
    return EXIT_DONE;
  }
  try {
    // Not help, as just checked (a generic type is not narrowed by the check).
    return (await frame.act(args as Exclude<A, { help: true }>, io)) ?? EXIT_DONE;
  } catch (err) {
    io.stderr.write(`${frame.program}: ${err instanceof Error ? err.message : String(err)}\n`);
    return EXIT_FAILED;
  }
}

/** An image archive built by a command, as @quorum/kit/image returns it. */
export interface BuiltImage {
  name: string;
  archive: string;
}

/**
 * Prints one "NAME ARCHIVE" line per image on stdout, then, given a load command, runs `COMMAND ARCHIVE` for each
 * (loadWith). stdout carries only those lines, so a script can read them.
 */
export async function printAndLoadImages(images: readonly BuiltImage[], loadCommand: string | undefined, io: CommandIO): Promise<void> {
  for (const image of images) io.stdout.write(`${image.name} ${image.archive}\n`);
  if (loadCommand === undefined) return;
  for (const image of images) await loadWith(loadCommand, image.archive, io);
}

/**
 * Runs `COMMAND ARCHIVE` through sh (e.g. `npx localkube load-image`, or a script that pushes to a registry), its
 * output to stderr; throws when it exits non-zero.
 */
export async function loadWith(command: string, archive: string, io: CommandIO): Promise<void> {
  // A build-time package, loaded only here: an operator process importing the kit never loads it.
  const { run } = await import('@quorum/images');
  // The archive is passed as "$1", never spliced into the command text, so no path needs quoting.
  const result = await run('sh', ['-c', `${command} "$1"`, 'sh', archive], { allowFailure: true, onLine: (line) => void io.stderr.write(`${line}\n`) });
  if (result.exitCode !== 0) throw new Error(`--load-with: \`${command} ${archive}\` exited with ${result.exitCode ?? 'a signal'}`);
}
