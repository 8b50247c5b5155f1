// The recorder's manifests against a real API server, as a server-side dry run (nothing is created, so the
// cluster-wide names do not collide with an installed recorder): every object is valid, and the RBAC they
// grant is what the API server accepts from an installer.
// What this file needs, for the test harness (docs/testing.md):
// @exclusive none
import assert from 'node:assert/strict';
import { after, before, test } from 'node:test';
import {
  ClusterRoleBindings,
  ClusterRoles,
  CustomResourceDefinitions,
  Deployments,
  Namespaces,
  PersistentVolumeClaims,
  RoleBindings,
  Roles,
  ServiceAccounts,
  Services,
  ValidatingWebhookConfigurations,
  type OpenObject,
  type ResourceType,
} from '@quorum/runtime';
import { TestEnv } from '@quorum/localkube/testing';
import { recorderManifests, usersWebhookObjects } from '../../src/deploy/manifests.ts';

let env: TestEnv;

before(async () => {
  env = await TestEnv.start();
});

after(async () => {
  await env.stop();
});

const TYPES: Record<string, ResourceType<OpenObject>> = {
  Namespace: Namespaces,
  CustomResourceDefinition: CustomResourceDefinitions,
  ServiceAccount: ServiceAccounts,
  ClusterRole: ClusterRoles,
  ClusterRoleBinding: ClusterRoleBindings,
  Role: Roles,
  RoleBinding: RoleBindings,
  PersistentVolumeClaim: PersistentVolumeClaims,
  Deployment: Deployments,
  Service: Services,
};

test('every object of the manifests is accepted by the API server (server-side dry run)', async () => {
  const ns = await env.namespace('recorder-manifests');
  // With object stores' credentials Secrets to mount: a Secret name may hold dots, which a volume name may not.
  // A Role and RoleBinding in a recorded namespace beside the recorder's own.
  const recorded = await env.namespace('recorder-manifests-recorded');
  const objects = recorderManifests({ namespace: ns, storageSecrets: ['recorder-s3', 'minio.credentials'], recordedNamespaces: [recorded] });
  assert.deepEqual([...new Set(objects.map((o) => o.kind))].sort(), Object.keys(TYPES).sort());
  for (const object of objects) {
    const type = TYPES[object.kind ?? '']!;
    // Strict: a field the API server does not know, or one given twice, is refused rather than dropped.
    const applied = await env.client.apply(type, object, { fieldManager: 'recorder-manifests-test', force: true, dryRun: true, fieldValidation: 'Strict' });
    assert.equal(applied.metadata.name, object.metadata.name, `${object.kind} ${object.metadata.name}`);
  }
});

test('the users webhook objects are accepted too: the configuration with its namespaceSelector, and the RBAC for its certificate and CA', async () => {
  const ns = await env.namespace('recorder-manifests');
  const types: Record<string, ResourceType<OpenObject>> = { ...TYPES, ValidatingWebhookConfiguration: ValidatingWebhookConfigurations };
  const namespaced = usersWebhookObjects(ns, undefined, undefined, { clusterWide: false, namespaces: [ns, 'team-b'] });
  const clusterWide = usersWebhookObjects(ns, undefined, undefined, { clusterWide: true, namespaces: [] }).filter((o) => o.kind === 'ValidatingWebhookConfiguration');
  for (const object of [...namespaced, ...clusterWide]) {
    const applied = await env.client.apply(types[object.kind ?? '']!, object, { fieldManager: 'recorder-manifests-test', force: true, dryRun: true, fieldValidation: 'Strict' });
    assert.equal(applied.metadata.name, object.metadata.name, `${object.kind} ${object.metadata.name}`);
  }
});
