// Resolving group/kinds through discovery documents, answered by a fake API server.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { groupKindName, resolveKinds, type DiscoveryClient } from '../../src/recorder/discovery.ts';

const DOCUMENTS: Record<string, unknown> = {
  '/api/v1': {
    groupVersion: 'v1',
    resources: [
      { name: 'configmaps', kind: 'ConfigMap', namespaced: true, verbs: ['get', 'list', 'watch'] },
      { name: 'namespaces', kind: 'Namespace', namespaced: false, verbs: ['get', 'list', 'watch'] },
      { name: 'bindings', kind: 'Binding', namespaced: true, verbs: ['create'] },
    ],
  },
  '/apis': {
    groups: [
      { name: 'apps', versions: [{ groupVersion: 'apps/v1', version: 'v1' }], preferredVersion: { groupVersion: 'apps/v1', version: 'v1' } },
      {
        name: 'example.dev',
        versions: [{ groupVersion: 'example.dev/v2', version: 'v2' }, { groupVersion: 'example.dev/v1', version: 'v1' }],
        preferredVersion: { groupVersion: 'example.dev/v2', version: 'v2' },
      },
    ],
  },
  '/apis/apps/v1': {
    groupVersion: 'apps/v1',
    resources: [
      { name: 'deployments', kind: 'Deployment', namespaced: true, verbs: ['list', 'watch'] },
      { name: 'deployments/scale', kind: 'Scale', namespaced: true, verbs: ['get'] },
      { name: 'deployments/status', kind: 'Deployment', namespaced: true, verbs: ['get'] },
    ],
  },
  '/apis/example.dev/v2': { groupVersion: 'example.dev/v2', resources: [{ name: 'widgets', kind: 'Widget', namespaced: true, verbs: ['list', 'watch'] }] },
  '/apis/example.dev/v1': { groupVersion: 'example.dev/v1', resources: [{ name: 'gadgets', kind: 'Gadget', namespaced: false, verbs: ['list', 'watch'] }] },
};

function fakeClient(asked: string[]): DiscoveryClient {
  return {
    request: <T>(_method: string, path: string): Promise<T> => {
      asked.push(path);
      const document = DOCUMENTS[path];
      return document ? Promise.resolve(document as T) : Promise.reject(new Error(`404 ${path}`));
    },
  };
}

test('kinds resolve to their version, resource and scope; unknown ones are named', async () => {
  const asked: string[] = [];
  const { found, missing } = await resolveKinds(fakeClient(asked), [
    { group: '', kind: 'ConfigMap' },
    { group: 'apps', kind: 'Deployment' },
    { group: 'example.dev', kind: 'Widget' },
    { group: 'example.dev', kind: 'Gadget' },
    { group: '', kind: 'Binding' },
    { group: 'apps', kind: 'Rollout' },
    { group: 'etcd.quorum.dev', kind: 'EtcdCluster' },
  ]);
  assert.deepEqual(
    found.map((k) => [groupKindName(k), k.version, k.resource, k.namespaced, k.type.apiVersion]),
    [
      ['ConfigMap', 'v1', 'configmaps', true, 'v1'],
      ['Deployment.apps', 'v1', 'deployments', true, 'apps/v1'],
      ['Widget.example.dev', 'v2', 'widgets', true, 'example.dev/v2'],
      ['Gadget.example.dev', 'v1', 'gadgets', false, 'example.dev/v1'],
    ],
    'the preferred version first, another version when only it serves the kind; never a subresource',
  );
  assert.deepEqual(missing.map(groupKindName), ['Binding', 'Rollout.apps', 'EtcdCluster.etcd.quorum.dev'], 'not listable and watchable, or not served');
  assert.equal(new Set(asked).size, asked.length, 'each document is read once');
});

test('only core kinds: /apis is not asked', async () => {
  const asked: string[] = [];
  await resolveKinds(fakeClient(asked), [{ group: '', kind: 'ConfigMap' }]);
  assert.deepEqual(asked, ['/api/v1']);
});
