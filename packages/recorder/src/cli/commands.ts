// The recorder's commands, as the `quorum` CLI (packages/cli) lists and runs them.
import type { Command } from '@quorum/kit';
import { historyCommand } from './history.ts';

export const commands: readonly Command[] = [
  {
    name: 'history',
    synopsis: 'list|show|diff|restore|install|image ...',
    summary: 'the change recorder: its records, installing it, its image\n(quorum history --help)',
    run: historyCommand,
  },
];
