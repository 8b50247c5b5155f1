// The recorder's manifests: least-privilege RBAC derived from the kinds to record, the endpoint's proxy Role
// under the exact name the API server's RBAC check uses, one writer per volume, and the process settings the
// Deployment passes matching what the process reads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_RESOURCES } from '../../src/api/changerecorder.ts';
import { ALL_DEFAULT_RESOURCES, clusterRules, EVENTS_NAMESPACE, EVENTS_ROLE, HISTORY_PROXY_ROLE, recordedKindRules, recorderManifests, sampleChangeRecorder, STORAGE_ROOT } from '../../src/deploy/manifests.ts';
import { configFromEnv } from '../../src/operator/config.ts';
import { applyDefaults, validateSpec } from '../../src/api/defaults.ts';
import type { ChangeRecorderSpec } from '../../src/api/changerecorder.ts';

type Obj = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string } };

function find(objects: readonly Obj[], kind: string, name: string): Obj {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `${kind} ${name}`);
  return found;
}

test('the recorded kinds get get, list and watch, nothing more, one rule per group', () => {
  const defaults = [
    { apiGroups: [''], resources: ['configmaps', 'secrets', 'services'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['apps'], resources: ['daemonsets', 'deployments', 'statefulsets'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['get', 'list', 'watch'] },
    { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['get', 'list', 'watch'] },
  ];
  assert.deepEqual(recordedKindRules(DEFAULT_RESOURCES), defaults);
  // Quorum's kinds are granted too: a default recorder records them once their CRDs are installed.
  assert.deepEqual(recordedKindRules(ALL_DEFAULT_RESOURCES), [...defaults.slice(0, 3), { apiGroups: ['etcd.quorum.dev'], resources: ['etcdbackupschedules', 'etcdclusters'], verbs: ['get', 'list', 'watch'] }, defaults[3]]);
  assert.deepEqual(clusterRules().slice(5), recordedKindRules(ALL_DEFAULT_RESOURCES), 'the manifests default to every default kind');
  assert.deepEqual(recordedKindRules([{ group: 'example.com', kind: 'Octopus' }], { 'example.com/Octopus': 'octopi' }), [{ apiGroups: ['example.com'], resources: ['octopi'], verbs: ['get', 'list', 'watch'] }]);
  const rules = clusterRules([{ group: '', kind: 'ConfigMap' }]);
  const writes = rules.filter((r) => (r.verbs as string[]).some((v) => !['get', 'list', 'watch'].includes(v)));
  assert.deepEqual(writes, [
    { apiGroups: ['history.quorum.dev'], resources: ['changerecorders/status'], verbs: ['get', 'patch', 'update'] },
    { apiGroups: ['authentication.k8s.io'], resources: ['tokenreviews'], verbs: ['create'] },
    { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] },
  ], 'it writes only its own status and reviews: never a recorded object');
  const objects = recorderManifests() as Obj[];
  const events = find(objects, 'Role', EVENTS_ROLE) as Obj & { rules: unknown[] };
  assert.equal(events.metadata.namespace, EVENTS_NAMESPACE, 'Events about cluster-scoped ChangeRecorders go to default, and only there');
  assert.deepEqual(events.rules, [{ apiGroups: ['events.k8s.io'], resources: ['events'], verbs: ['create', 'patch'] }]);
  assert.equal((find(objects, 'RoleBinding', EVENTS_ROLE) as Obj & { subjects: unknown[] }).subjects.length, 1);
  assert.ok(!rules.some((r) => (r.resources as string[]).includes('secrets')), 'a kind not asked for is not granted');
});

test('the manifests: one writer on a ReadWriteOnce volume, the endpoint behind its Service, callers let through the proxy', () => {
  const objects = recorderManifests({ namespace: 'ops', image: 'example/recorder:1', storageSize: '5Gi' }) as Obj[];
  const deployment = find(objects, 'Deployment', 'quorum-recorder') as Obj & { spec: { replicas: number; strategy: { type: string }; template: { spec: Record<string, unknown> & { containers: Record<string, unknown>[] } } } };
  assert.equal(deployment.metadata.namespace, 'ops');
  assert.equal(deployment.spec.replicas, 1);
  assert.equal(deployment.spec.strategy.type, 'Recreate');
  const pod = deployment.spec.template.spec;
  assert.equal(pod.serviceAccountName, 'quorum-recorder');
  assert.equal((pod.securityContext as { fsGroup: number }).fsGroup, 65532, 'the volume is writable by the non-root user');
  const container = pod.containers[0]!;
  assert.equal(container.image, 'example/recorder:1');
  assert.deepEqual(container.volumeMounts, [{ name: 'records', mountPath: STORAGE_ROOT }]);
  const env = Object.fromEntries((container.env as { name: string; value?: string }[]).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
  const config = configFromEnv({ ...env, POD_NAMESPACE: 'ops', POD_NAME: 'p' });
  assert.equal(config.storageRoot, STORAGE_ROOT);
  assert.equal(config.historyPort, 8443);
  assert.equal(config.historyService, 'quorum-recorder');
  const claim = find(objects, 'PersistentVolumeClaim', 'quorum-recorder-data') as Obj & { spec: { accessModes: string[]; resources: { requests: { storage: string } } } };
  assert.deepEqual(claim.spec.accessModes, ['ReadWriteOnce']);
  assert.equal(claim.spec.resources.requests.storage, '5Gi');
  const service = find(objects, 'Service', 'quorum-recorder') as Obj & { spec: { ports: Record<string, unknown>[] } };
  assert.deepEqual(service.spec.ports, [{ name: 'history', port: 8443, targetPort: 'history' }]);
  const proxy = find(objects, 'Role', HISTORY_PROXY_ROLE) as Obj & { rules: Record<string, unknown>[] };
  assert.deepEqual(proxy.rules, [{ apiGroups: [''], resources: ['services/proxy'], resourceNames: ['https:quorum-recorder:history'], verbs: ['get'] }]);
  const binding = find(objects, 'RoleBinding', HISTORY_PROXY_ROLE) as Obj & { subjects: unknown[] };
  assert.deepEqual(binding.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'system:authenticated' }]);
  const narrowed = find(recorderManifests({ historyGroups: ['platform'] }) as Obj[], 'RoleBinding', HISTORY_PROXY_ROLE) as Obj & { subjects: unknown[] };
  assert.deepEqual(narrowed.subjects, [{ apiGroup: 'rbac.authorization.k8s.io', kind: 'Group', name: 'platform' }]);
  assert.ok(objects.some((o) => o.kind === 'CustomResourceDefinition'));
});

test('the sample ChangeRecorder records namespace default and is valid', () => {
  const sample = sampleChangeRecorder() as { spec: ChangeRecorderSpec; metadata: { name: string } };
  assert.equal(sample.metadata.name, 'default');
  assert.deepEqual(validateSpec(applyDefaults(sample.spec)), []);
  assert.throws(() => configFromEnv({ HISTORY_PORT: 'x' }), /HISTORY_PORT must be a port number/);
});
