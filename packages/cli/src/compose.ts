// One command line over many operators: the first word picks a command from the operators' tables, which
// gets every other argument; the help lists them all, grouped by operator. Exit codes are the commands'
// own (0 done, 1 failed); a command line naming no known command exits 2 (the kit's EXIT_USAGE), as the
// commands' usage errors do.
import { EXIT_DONE, EXIT_USAGE } from '@quorum/kit';
import type { Command, CommandGroup, CommandIO } from './command.ts';

export interface CliSpec {
  /** As the help names it: `quorum`, `kubectl quorum`. */
  program: string;
  groups: readonly CommandGroup[];
  /**
   * Flags that may come before the command word and take a value (kubectl's -n, --kubeconfig, --context:
   * users put them anywhere). Their values are not taken for the command; the flags go to the command, so
   * every command must accept them.
   */
  leadingValueFlags?: readonly string[];
  /** Printed after the list of commands. */
  footer?: string;
}

const NAME_WIDTH = 26;

export class Cli {
  readonly #spec: CliSpec;
  readonly #byName = new Map<string, Command>();

  constructor(spec: CliSpec) {
    this.#spec = spec;
    for (const group of spec.groups) {
      for (const command of group.commands) {
        if (command.name === 'help') throw new Error(`${spec.program}: ${group.title} may not name a command "help": the CLI's own`);
        if (this.#byName.has(command.name)) throw new Error(`${spec.program}: two operators name a command "${command.name}"`);
        this.#byName.set(command.name, command);
      }
    }
  }

  /** Every command, grouped by operator, as `--help` prints it. */
  help(): string {
    const { program, groups, footer } = this.#spec;
    const lines = [`usage: ${program} <command> [options]`];
    for (const group of groups) {
      lines.push('', `${group.title}:`);
      for (const command of group.commands) lines.push(...commandLines(command));
    }
    if (footer !== undefined) lines.push('', footer);
    return `${lines.join('\n')}\n`;
  }

  /** Runs the command line (the arguments after the program's name); resolves with the exit code. */
  async run(argv: readonly string[], io: CommandIO): Promise<number> {
    const at = commandWordIndex(argv, this.#spec.leadingValueFlags ?? []);
    if (at === undefined) {
      if (argv.length === 0 || argv.some((a) => a === '--help' || a === '-h')) return this.#printHelp(io);
      return this.#refuse(io, `no command in ${JSON.stringify(argv.join(' '))}`);
    }
    const word = argv[at]!;
    const rest = [...argv.slice(0, at), ...argv.slice(at + 1)];
    if (word === 'help') return this.#helpFor(rest, io);
    const command = this.#byName.get(word);
    if (!command) return this.#refuse(io, `unknown command ${JSON.stringify(word)}: one of ${[...this.#byName.keys()].join(', ')}`);
    return command.run(rest, io);
  }

  /** `help` alone is --help; `help COMMAND` is `COMMAND --help`. */
  #helpFor(rest: readonly string[], io: CommandIO): Promise<number> {
    const at = commandWordIndex(rest, this.#spec.leadingValueFlags ?? []);
    if (at === undefined) return Promise.resolve(this.#printHelp(io));
    const command = this.#byName.get(rest[at]!);
    if (!command) return Promise.resolve(this.#refuse(io, `help: unknown command ${JSON.stringify(rest[at])}: one of ${[...this.#byName.keys()].join(', ')}`));
    return command.run(['--help'], io);
  }

  #printHelp(io: CommandIO): number {
    io.stdout.write(this.help());
    return EXIT_DONE;
  }

  #refuse(io: CommandIO, message: string): number {
    io.stderr.write(`${this.#spec.program}: ${message}\n${this.help()}`);
    return EXIT_USAGE;
  }
}

/** A command's lines in the help: name and synopsis, then its summary beside them or, when they are long, below. */
function commandLines(command: Command): string[] {
  const head = `  ${command.name}${command.synopsis ? ` ${command.synopsis}` : ''}`;
  const summary = command.summary.split('\n').map((line) => `${' '.repeat(NAME_WIDTH + 2)}${line}`);
  if (head.length >= NAME_WIDTH + 2) return [head, ...summary];
  return [`${head.padEnd(NAME_WIDTH + 2)}${summary[0]!.trimStart()}`, ...summary.slice(1)];
}

/**
 * Where the command word is: the first argument that is not a flag nor the value of a leading value flag
 * (`-n NS`, `--kubeconfig FILE`; `--kubeconfig=FILE` carries its own). Nothing after `--` is a command.
 */
export function commandWordIndex(argv: readonly string[], leadingValueFlags: readonly string[]): number | undefined {
  for (let i = 0; i < argv.length; i++) {
    const arg = argv[i]!;
    if (arg === '--') return undefined;
    if (!arg.startsWith('-') || arg === '-') return i;
    if (leadingValueFlags.includes(arg)) i++;
  }
  return undefined;
}
