// `quorum`: the commands of every operator in this repository, side by side.
import { commands as etcdCommands } from '@quorum/etcd-operator';
import { commands as recorderCommands } from '@quorum/recorder';
import { commands as rbacCommands } from '@quorum/rbac-manager';
import { commands as redisCommands } from '@quorum/redis-operator';
import { Cli } from './compose.ts';
import { CONNECTION_VALUE_FLAGS } from './connection.ts';

export const quorumCli = new Cli({
  program: 'quorum',
  groups: [
    { title: 'etcd operator (docs/operations.md)', commands: etcdCommands },
    { title: 'change recorder (docs/recorder.md)', commands: recorderCommands },
    { title: 'RBAC manager (docs/rbac.md)', commands: rbacCommands },
    { title: 'Redis operator (docs/redis.md)', commands: redisCommands },
  ],
  leadingValueFlags: CONNECTION_VALUE_FLAGS,
  footer: 'quorum <command> --help (or quorum help <command>): all of its options',
});
