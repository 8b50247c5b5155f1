// The operator's view of an EtcdCluster: the API types, and the spec with every default filled in (the
// same defaults as the CRD schema and the defaulting webhook, applied again because either may be off).
export type { EtcdCluster, EtcdClusterSpec, EtcdClusterStatus, MemberStatus } from '../api/etcdcluster.ts';
export { applyDefaults, validateSpec, type DefaultedSpec } from '../api/defaults.ts';
