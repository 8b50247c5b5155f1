// `kubectl quorum status|members|backup|restore`: the etcd operator's plugin commands, as the kubectl-quorum
// CLI (packages/cli) lists and runs them. Each hands its name and arguments to kubectlQuorum, which parses
// and checks the whole command line (kubectl's connection flags included) before any request.
import type { Command } from '@quorum/kit';
import { kubectlQuorum } from './plugin.ts';

function pluginCommand(name: string, synopsis: string, summary: string): Command {
  return { name, synopsis, summary, run: (argv, io) => kubectlQuorum([name, ...argv], io) };
}

export const kubectlCommands: readonly Command[] = [
  pluginCommand('status', '[NAME] [-A]', 'EtcdClusters: phase, ready members, version, leader, TLS, rollout, last\nbackup, and every condition that is not fine; with NAME, the whole story of one'),
  pluginCommand('members', 'NAME', "the cluster's etcd members as the operator last saw them"),
  pluginCommand('backup', 'CLUSTER', 'create an EtcdBackup of CLUSTER now (--like, --pvc, --s3-bucket; --wait)'),
  pluginCommand('restore', 'BACKUP --to CLUSTER', 'create an EtcdRestore: a new EtcdCluster CLUSTER from the EtcdBackup BACKUP'),
];
