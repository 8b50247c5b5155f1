// What the recorder's commands are given and what they are: a leaf that history.ts, install.ts and image.ts
// all import, so that none of them imports another for a type.

export interface HistoryIO {
  stdout: { write(text: string): unknown };
  stderr: { write(text: string): unknown };
  /** Environment: $QUORUM_HISTORY_TOKEN, $QUORUM_RECORDER_NAMESPACE. Default process.env. */
  env?: Record<string, string | undefined>;
}

/** One command of the `quorum` CLI (packages/cli composes every operator's): run resolves with the exit code. */
export interface RecorderCommand {
  name: string;
  /** What follows the name in `quorum --help`'s list, e.g. `list|show|diff ...`. */
  synopsis?: string;
  /** What it does, in `quorum --help`'s list; may hold several lines. */
  summary: string;
  run(argv: readonly string[], io: HistoryIO): Promise<number>;
}
