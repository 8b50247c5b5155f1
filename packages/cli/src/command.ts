// What the CLI asks of an operator's commands: the kit's Command and CommandIO (@quorum/kit), which every
// operator package's commands table is typed by. The CLI groups them by operator.
import type { Command } from '@quorum/kit';

export type { Command, CommandIO } from '@quorum/kit';

/** One operator's commands, listed together in the help under its title. */
export interface CommandGroup {
  title: string;
  commands: readonly Command[];
}
