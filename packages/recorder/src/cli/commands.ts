// The recorder's commands, as the `quorum` CLI (packages/cli) lists and runs them.
import { historyCommand } from './history.ts';
import type { RecorderCommand } from './io.ts';

export const commands: readonly RecorderCommand[] = [
  {
    name: 'history',
    synopsis: 'list|show|diff|restore|install|image ...',
    summary: 'the change recorder: its records, installing it, its image\n(quorum history --help)',
    run: historyCommand,
  },
];
