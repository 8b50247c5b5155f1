// The recorder's use of the runtime's discovery client: kinds it can list and watch, each unknown one named
// with why. (The discovery documents themselves are tested in packages/runtime with recorded ones.)
import { test } from 'node:test';
import assert from 'node:assert/strict';
import type { DiscoveryTransport } from '@quorum/runtime';
import { groupKindName, resolveKinds } from '../../src/recorder/discovery.ts';

const VERBS = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];

const DOCUMENTS: Record<string, unknown> = {
  '/api': { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [{ clientCIDR: '0.0.0.0/0', serverAddress: '10.0.0.1:6443' }] },
  '/api/v1': {
    kind: 'APIResourceList',
    groupVersion: 'v1',
    resources: [
      { name: 'bindings', singularName: 'binding', namespaced: true, kind: 'Binding', verbs: ['create'] },
      { name: 'configmaps', singularName: 'configmap', namespaced: true, kind: 'ConfigMap', verbs: VERBS, shortNames: ['cm'] },
      { name: 'namespaces', singularName: 'namespace', namespaced: false, kind: 'Namespace', verbs: ['create', 'delete', 'get', 'list', 'patch', 'update', 'watch'] },
    ],
  },
  '/apis': {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [{ name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } }],
  },
  '/apis/apps/v1': {
    kind: 'APIResourceList',
    apiVersion: 'v1',
    groupVersion: 'apps/v1',
    resources: [
      { name: 'deployments', singularName: 'deployment', namespaced: true, kind: 'Deployment', verbs: VERBS, shortNames: ['deploy'] },
      { name: 'deployments/scale', singularName: '', namespaced: true, group: 'autoscaling', version: 'v1', kind: 'Scale', verbs: ['get', 'patch', 'update'] },
    ],
  },
};

const fake: DiscoveryTransport = {
  request: <T>(_method: string, path: string): Promise<T> => {
    const document = DOCUMENTS[path];
    return document ? Promise.resolve(structuredClone(document) as T) : Promise.reject(new Error(`404 ${path}`));
  },
};

test('kinds the recorder can watch resolve; one it cannot list and watch, or that is not served, is named with why', async () => {
  const { found, missing, unavailable } = await resolveKinds(fake, [
    { group: '', kind: 'ConfigMap' },
    { group: 'apps', kind: 'Deployment' },
    { group: '', kind: 'Namespace' },
    { group: '', kind: 'Binding' },
    { group: 'etcd.quorum.dev', kind: 'EtcdCluster' },
  ]);
  assert.deepEqual(
    found.map((k) => [groupKindName(k), k.version, k.resource, k.namespaced, k.type.apiVersion]),
    [
      ['ConfigMap', 'v1', 'configmaps', true, 'v1'],
      ['Deployment.apps', 'v1', 'deployments', true, 'apps/v1'],
      ['Namespace', 'v1', 'namespaces', false, 'v1'],
    ],
  );
  assert.deepEqual(
    missing.map((k) => [groupKindName(k), k.why]),
    [
      ['Binding', 'bindings (v1) does not support list, watch, only create'],
      ['EtcdCluster.etcd.quorum.dev', 'the API server serves no group etcd.quorum.dev'],
    ],
  );
  assert.deepEqual(unavailable, []);
});
