// `kubectl quorum` (the kubectl-quorum plugin): every operator's commands on its objects, read and written
// with the caller's own kubeconfig, as kubectl would.
import { kubectlCommands as etcdCommands } from '@quorum/etcd-operator';
import { kubectlCommands as rbacCommands } from '@quorum/rbac-manager';
import { Cli } from './compose.ts';
import { CONNECTION_VALUE_FLAGS } from './connection.ts';

export const kubectlQuorumCli = new Cli({
  program: 'kubectl quorum',
  groups: [
    { title: 'etcd operator (docs/kubectl-plugin.md)', commands: etcdCommands },
    { title: 'RBAC manager (docs/rbac.md)', commands: rbacCommands },
  ],
  leadingValueFlags: CONNECTION_VALUE_FLAGS,
  footer: `options of every command:
  -n, --namespace NS        default: the kubeconfig context's namespace, else default
  --kubeconfig FILE         default: $KUBECONFIG, else ~/.kube/config
  --context NAME            a context of the kubeconfig (default: its current context)
kubectl quorum <command> --help (or kubectl quorum help <command>): all of its options`,
});
