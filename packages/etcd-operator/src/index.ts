// @quorum/etcd-operator: the EtcdCluster API, its controller, the etcd admin client and deployment.
export * from './api/etcdcluster.ts';
export * from './api/etcdcluster-schema.ts';
export { applyDefaults, validateSpec, type DefaultedSpec } from './api/defaults.ts';
export { etcdClusterCRD } from './api/crd.ts';
export { EtcdClusters } from './resources.ts';
export { EtcdClient, EtcdClusterClient, EtcdError, EtcdUnavailableError, LearnerNotReadyError, memberIdToHex, type Member as EtcdMember, type EtcdStatus } from './etcd/index.ts';
export { createOperator } from './operator/operator.ts';
export { configFromEnv, type OperatorConfig } from './operator/config.ts';
export { operatorManifests, OPERATOR_IMAGE } from './deploy/manifests.ts';
export { install, uninstall } from './deploy/install.ts';
export { commands } from './cli/commands.ts';
export { kubectlCommands } from './kubectl/commands.ts';
