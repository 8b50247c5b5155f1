// The RBAC manager's commands, as the `quorum` and `kubectl quorum` CLIs (packages/cli) list and run them.
import type { Command } from '@quorum/kit';
import { accessCommand } from './access.ts';
import { rbacCommand } from './rbac.ts';

export const commands: readonly Command[] = [
  { name: 'rbac', synopsis: 'install|uninstall|manifests|import|image ...', summary: 'the RBAC manager: installing it, migrating from FairwindsOps\n(quorum rbac --help)', run: rbacCommand },
];

export const kubectlCommands: readonly Command[] = [
  { name: 'access', synopsis: '[--explain USER]', summary: 'who can do what where, through which RBACDefinition and binding', run: accessCommand },
];
