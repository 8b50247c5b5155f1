// Errors `quorum history` reports as they are: their message is the whole story for the user.

/** A failure whose message names what is wrong (the object, the record, the missing permission). */
export class CliError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'CliError';
  }
}

/** The command line itself is wrong: the usage is printed with the message (the kit's runCommand). */
export { UsageError } from '@quorum/kit';
