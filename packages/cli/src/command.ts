// What the CLI asks of an operator's commands. Each operator package exports tables of them (the etcd
// operator `commands` and `kubectlCommands`, the recorder `commands`) typed by its own declarations; the
// composition below checks them against these shapes, so an operator needs nothing from this package.

export interface CommandIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** The environment the command reads ($KUBECONFIG, $QUORUM_…); default process.env. */
  env?: Record<string, string | undefined>;
}

export interface Command {
  name: string;
  /** What follows the name in the help's list, e.g. `[--load-with COMMAND]`. */
  synopsis?: string;
  /** What it does, in the help's list; may hold several lines. */
  summary: string;
  /** Runs the command with the arguments after its name (`--help` included); resolves with the exit code. */
  run(argv: readonly string[], io: CommandIO): Promise<number>;
}

/** One operator's commands, listed together in the help under its title. */
export interface CommandGroup {
  title: string;
  commands: readonly Command[];
}
