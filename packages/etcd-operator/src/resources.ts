// Where the operator's own kinds live in the API, for the runtime's typed client and informers.
import { resource } from '@quorum/runtime';
import { API_VERSION, GROUP, KIND, PLURAL, type EtcdCluster } from './api/etcdcluster.ts';

export { GROUP };
export const EtcdClusters = resource<EtcdCluster>(API_VERSION, KIND, PLURAL, true);
