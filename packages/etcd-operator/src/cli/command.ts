// What the etcd operator's commands are given and what they are, for the `quorum` and `kubectl quorum`
// CLIs (packages/cli), which compose every operator's commands. A leaf: it imports nothing.

export interface CommandIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** The environment; default process.env. */
  env?: Record<string, string | undefined>;
}

/** One command: run resolves with the exit code (0 done, 1 failed, 2 a wrong command line). */
export interface EtcdCommand {
  name: string;
  /** What follows the name in the CLI's help, e.g. `[--load-with COMMAND]`. */
  synopsis?: string;
  /** What it does, in the CLI's help; may hold several lines. */
  summary: string;
  run(argv: readonly string[], io: CommandIO): Promise<number>;
}

/** The command line is wrong: the command prints its usage with the message and exits 2. */
export class UsageError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UsageError';
  }
}
