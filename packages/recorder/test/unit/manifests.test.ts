// The recorder's manifests: least-privilege RBAC derived from the kinds to record, the endpoint's proxy Role
// under the exact name the API server's RBAC check uses, one writer per volume, and the process settings the
// Deployment passes matching what the process reads.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import { DEFAULT_RESOURCES } from '../../src/api/changerecorder.ts';
import {
  ALL_DEFAULT_RESOURCES,
  clusterRules,
  namespacedRecordedRules,
  ownClusterRules,
  EVENTS_NAMESPACE,
  EVENTS_ROLE,
  HISTORY_PROXY_ROLE,
  recordedKindRules,
  recorderManifests,
  sampleChangeRecorder,
  STORAGE_ROOT,
  storageSecretsOf,
  USERS_WEBHOOK_ROLE,
  PROBE_PORT,
  webhookCallerPeers,
} from '../../src/deploy/manifests.ts';
import { HISTORY_PORT } from '../../src/history/protocol.ts';
import { USERS_WEBHOOK_CERT_SECRET, USERS_WEBHOOK_CONFIGURATION, USERS_WEBHOOK_PATH, WEBHOOK_CLIENT_CA_CONFIGMAP, WEBHOOK_PORT } from '../../src/attribution/webhook.ts';
import { configFromEnv } from '../../src/operator/config.ts';
import { applyDefaults, validateSpec } from '../../src/api/defaults.ts';
import type { ChangeRecorder, ChangeRecorderSpec, GroupKind } from '../../src/api/changerecorder.ts';
import { storageTarget, storeLocationOf } from '../../src/store/target.ts';

type Obj = Record<string, unknown> & { kind: string; metadata: { name: string; namespace?: string } };

function find(objects: readonly Obj[], kind: string, name: string): Obj {
  const found = objects.find((o) => o.kind === kind && o.metadata.name === name);
  assert.ok(found, `${kind} ${name}`);
  return found;
}

test('the recorded kinds get list and watch, nothing more, one rule per group; Secrets are not among the defaults', () => {
  const defaults = [
    { apiGroups: [''], resources: ['configmaps', 'services'], verbs: ['list', 'watch'] },
    { apiGroups: ['apps'], resources: ['daemonsets', 'deployments', 'statefulsets'], verbs: ['list', 'watch'] },
    { apiGroups: ['batch'], resources: ['cronjobs'], verbs: ['list', 'watch'] },
    { apiGroups: ['networking.k8s.io'], resources: ['ingresses'], verbs: ['list', 'watch'] },
  ];
  assert.deepEqual(recordedKindRules(DEFAULT_RESOURCES), defaults);
  // Quorum's kinds are granted too: a default recorder records them once their CRDs are installed.
  assert.deepEqual(recordedKindRules(ALL_DEFAULT_RESOURCES), [...defaults.slice(0, 3), { apiGroups: ['etcd.quorum.dev'], resources: ['etcdbackupschedules', 'etcdclusters'], verbs: ['list', 'watch'] }, defaults[3]]);
  assert.deepEqual(namespacedRecordedRules(), recordedKindRules(ALL_DEFAULT_RESOURCES), 'the manifests default to every default kind, in a Role');
  assert.deepEqual(clusterRules(), ownClusterRules(), 'and to nothing recorded cluster-wide');
  assert.deepEqual(clusterRules(ALL_DEFAULT_RESOURCES, {}, true).slice(ownClusterRules().length + 1), recordedKindRules(ALL_DEFAULT_RESOURCES));
  assert.deepEqual(recordedKindRules([{ group: 'example.com', kind: 'Octopus' }], { 'example.com/Octopus': 'octopi' }), [{ apiGroups: ['example.com'], resources: ['octopi'], verbs: ['list', 'watch'] }]);
  const rules = clusterRules([{ group: '', kind: 'ConfigMap' }], {}, true);
  const writes = rules.filter((r) => (r.verbs as string[]).some((v) => !['get', 'list', 'watch'].includes(v)));
  assert.deepEqual(writes, [
    { apiGroups: ['history.quorum.dev'], resources: ['changerecorders/status'], verbs: ['patch'] },
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
  assert.deepEqual(container.volumeMounts, [{ name: 'records', mountPath: STORAGE_ROOT }, { name: 'tmp', mountPath: '/tmp' }], 'the records, and a scratch directory for the webhook certificate');
  const env = Object.fromEntries((container.env as { name: string; value?: string }[]).filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
  const config = configFromEnv({ ...env, POD_NAMESPACE: 'ops', POD_NAME: 'p' });
  assert.equal(config.storageRoot, STORAGE_ROOT);
  assert.equal(config.credentialsRoot, '/var/run/secrets/quorum-recorder');
  assert.equal(config.historyPort, 8443);
  assert.equal(config.historyService, 'quorum-recorder');
  assert.equal(config.usersWebhook, false, 'no users webhook unless asked for');
  assert.ok(!objects.some((o) => o.kind === 'ValidatingWebhookConfiguration'));
  const claim = find(objects, 'PersistentVolumeClaim', 'quorum-recorder-data') as Obj & { spec: { accessModes: string[]; resources: { requests: { storage: string } } } };
  assert.deepEqual(claim.spec.accessModes, ['ReadWriteOnce']);
  assert.equal(claim.spec.resources.requests.storage, '5Gi');
  const service = find(objects, 'Service', 'quorum-recorder') as Obj & { spec: { ports: Record<string, unknown>[] } };
  assert.deepEqual(service.spec.ports, [
    { name: 'history', port: 8443, targetPort: 'history' },
    { name: 'webhook', port: 443, targetPort: 'webhook' },
  ]);
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

test('object stores: the Secrets the ChangeRecorders name are mounted read-only where the recorder looks for them', () => {
  const recorder = (name: string, storage: ChangeRecorderSpec['storage']): ChangeRecorder => ({ metadata: { name }, spec: { namespaces: { all: true }, ...(storage ? { storage } : {}) } });
  const recorders = [
    recorder('a', { s3: { bucket: 'records', credentialsSecret: 'minio.credentials' } }),
    recorder('b', { azure: { container: 'records', credentialsSecret: 'azure' } }),
    recorder('c', { gcs: { bucket: 'records', credentialsSecret: 'minio.credentials' } }),
    recorder('d', { path: 'd' }),
    recorder('e', undefined),
  ];
  assert.deepEqual(storageSecretsOf(recorders), ['azure', 'minio.credentials'], 'each once; a directory needs none');

  const deployment = find(recorderManifests({ storageSecrets: storageSecretsOf(recorders) }) as Obj[], 'Deployment', 'quorum-recorder') as Obj & {
    spec: { template: { spec: { volumes: Record<string, unknown>[]; containers: { volumeMounts: Record<string, unknown>[]; env: { name: string; value?: string }[] }[] } } };
  };
  const pod = deployment.spec.template.spec;
  assert.deepEqual(pod.volumes.slice(2), [
    { name: 'credentials-0', secret: { secretName: 'azure', optional: true, defaultMode: 0o440 } },
    { name: 'credentials-1', secret: { secretName: 'minio.credentials', optional: true, defaultMode: 0o440 } },
  ]);
  const container = pod.containers[0]!;
  const env = Object.fromEntries(container.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
  const config = configFromEnv(env);
  const mounts = container.volumeMounts.slice(2);
  assert.deepEqual(mounts, [
    { name: 'credentials-0', mountPath: '/var/run/secrets/quorum-recorder/azure', readOnly: true },
    { name: 'credentials-1', mountPath: '/var/run/secrets/quorum-recorder/minio.credentials', readOnly: true },
  ]);
  // Where the reconciler looks for a recorder's credentials is where its Secret is mounted.
  for (const r of recorders.slice(0, 3)) {
    const location = storeLocationOf(storageTarget(r.metadata.name!, applyDefaults(r.spec)), config);
    assert.ok('credentialsDir' in location && mounts.some((m) => m.mountPath === location.credentialsDir), r.metadata.name);
  }
});

test('the users webhook: UPDATE and DELETE of exactly the recorded kinds, never blocking, and only the RBAC its certificate and CA need', () => {
  const kinds: GroupKind[] = [{ group: '', kind: 'ConfigMap' }, { group: 'apps', kind: 'Deployment' }, { group: 'example.com', kind: 'Widget' }];
  const plurals = { 'example.com/Widget': 'widgetries' };
  const objects = recorderManifests({ namespace: 'ops', usersWebhook: true, kinds, plurals }) as Obj[];
  const config = find(objects, 'ValidatingWebhookConfiguration', USERS_WEBHOOK_CONFIGURATION) as Obj & { webhooks: Record<string, unknown>[] };
  assert.equal(config.webhooks.length, 1);
  const webhook = config.webhooks[0]!;
  assert.equal(webhook['failurePolicy'], 'Ignore', 'a recorder that is down never blocks a write');
  assert.equal(webhook['sideEffects'], 'NoneOnDryRun');
  assert.ok((webhook['timeoutSeconds'] as number) <= 3);
  assert.deepEqual(webhook['clientConfig'], { service: { name: 'quorum-recorder', namespace: 'ops', path: USERS_WEBHOOK_PATH, port: 443 } });
  assert.deepEqual(webhook['rules'], [
    { apiGroups: [''], apiVersions: ['*'], operations: ['UPDATE', 'DELETE'], resources: ['configmaps'], scope: '*' },
    { apiGroups: ['apps'], apiVersions: ['*'], operations: ['UPDATE', 'DELETE'], resources: ['deployments'], scope: '*' },
    { apiGroups: ['example.com'], apiVersions: ['*'], operations: ['UPDATE', 'DELETE'], resources: ['widgetries'], scope: '*' },
  ], 'the kinds the role grants, by the same resource names');

  const deployment = find(objects, 'Deployment', 'quorum-recorder') as Obj & { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
  const env = Object.fromEntries(deployment.spec.template.spec.containers[0]!.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value]));
  const recorderConfig = configFromEnv(env);
  assert.equal(recorderConfig.usersWebhook, true);
  assert.equal(recorderConfig.webhookPort, 9443);
  assert.match(recorderConfig.certDir, /^\/tmp\//, 'certificates go to the writable emptyDir');

  const clusterRole = find(objects, 'ClusterRole', USERS_WEBHOOK_ROLE) as Obj & { rules: unknown[] };
  assert.deepEqual(clusterRole.rules, [{ apiGroups: ['admissionregistration.k8s.io'], resources: ['validatingwebhookconfigurations'], resourceNames: [USERS_WEBHOOK_CONFIGURATION], verbs: ['get', 'patch'] }]);
  const namespaceRole = find(objects, 'Role', USERS_WEBHOOK_ROLE) as Obj & { rules: unknown[] };
  assert.deepEqual(namespaceRole.rules, [
    { apiGroups: [''], resources: ['secrets'], verbs: ['create'] },
    { apiGroups: [''], resources: ['secrets'], resourceNames: [USERS_WEBHOOK_CERT_SECRET], verbs: ['get', 'update'] },
  ]);
  assert.deepEqual(find(objects, 'ClusterRole', 'quorum-recorder')['rules'], clusterRules(kinds, plurals), "the recorder's own role is the same with or without the webhook");
});

test("with the API server's client CA, the users webhook is told to require its certificate: the CA in a ConfigMap mounted where the process reads it", () => {
  const pem = '-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n';
  const objects = recorderManifests({ namespace: 'ops', usersWebhook: true, webhookClientCA: pem, webhookClientNames: ['kube-apiserver-webhook-client'] }) as Obj[];
  const configMap = find(objects, 'ConfigMap', WEBHOOK_CLIENT_CA_CONFIGMAP) as Obj & { data: Record<string, string> };
  assert.deepEqual(configMap.data, { 'ca.crt': pem });
  assert.equal(configMap.metadata.namespace, 'ops');
  assert.ok(objects.indexOf(configMap) < objects.findIndex((o) => o.kind === 'Deployment'), 'applied before the pod that mounts it');

  type Container = { env: { name: string; value?: string }[]; volumeMounts: { name: string; mountPath: string }[] };
  const deployment = find(objects, 'Deployment', 'quorum-recorder') as Obj & { spec: { template: { spec: { containers: Container[]; volumes: Record<string, unknown>[] } } } };
  const pod = deployment.spec.template.spec;
  const container = pod.containers[0]!;
  const config = configFromEnv(Object.fromEntries(container.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value])));
  const mount = container.volumeMounts.find((m) => config.webhookClientCAFile?.startsWith(`${m.mountPath}/`));
  assert.ok(mount, `the CA file ${config.webhookClientCAFile} is inside a mount`);
  assert.deepEqual(pod.volumes.find((v) => v['name'] === mount.name), { name: mount.name, configMap: { name: WEBHOOK_CLIENT_CA_CONFIGMAP } });
  assert.equal(config.webhookClientCAFile, `${mount.mountPath}/ca.crt`);
  assert.deepEqual(config.webhookClientNames, ['kube-apiserver-webhook-client']);

  const without = recorderManifests({ namespace: 'ops', usersWebhook: true }) as Obj[];
  assert.ok(!without.some((o) => o.kind === 'ConfigMap'));
  const plain = find(without, 'Deployment', 'quorum-recorder') as typeof deployment;
  const plainConfig = configFromEnv(Object.fromEntries(plain.spec.template.spec.containers[0]!.env.filter((e) => e.value !== undefined).map((e) => [e.name, e.value])));
  assert.equal(plainConfig.webhookClientCAFile, undefined, 'without a CA, any caller is answered, as before');
  assert.throws(() => recorderManifests({ webhookClientCA: 'not a certificate' }), /webhookClientCA must be a PEM certificate/);
});

test('the recorder\'s namespace enforces, warns and audits the restricted Pod Security level, which its pod meets', () => {
  const objects = recorderManifests({ namespace: 'ops' }) as Obj[];
  const namespace = find(objects, 'Namespace', 'ops') as Obj & { metadata: { labels: Record<string, string> } };
  for (const mode of ['enforce', 'warn', 'audit']) {
    assert.equal(namespace.metadata.labels[`pod-security.kubernetes.io/${mode}`], 'restricted', mode);
    assert.equal(namespace.metadata.labels[`pod-security.kubernetes.io/${mode}-version`], 'latest', mode);
  }
  const pod = (find(objects, 'Deployment', 'quorum-recorder') as Obj & { spec: { template: { spec: { securityContext: Record<string, unknown>; containers: { securityContext: Record<string, unknown> }[] } } } }).spec.template.spec;
  assert.equal(pod.securityContext['runAsNonRoot'], true);
  assert.deepEqual(pod.securityContext['seccompProfile'], { type: 'RuntimeDefault' });
  assert.equal(pod.containers[0]!.securityContext['allowPrivilegeEscalation'], false);
  assert.deepEqual(pod.containers[0]!.securityContext['capabilities'], { drop: ['ALL'] });
});


interface PolicyRule {
  from?: { ipBlock: { cidr: string; except?: string[] } }[];
  ports: { protocol: string; port: number }[];
}

/** The recorder's NetworkPolicy among the manifests, its rules by port. */
function policyOf(options: Parameters<typeof recorderManifests>[0]): { podSelector: unknown; policyTypes: string[]; byPort: Map<number, PolicyRule> } | undefined {
  const objects = recorderManifests(options);
  const policy = objects.find((o) => o.kind === 'NetworkPolicy') as { spec: { podSelector: unknown; policyTypes: string[]; ingress: PolicyRule[] } } | undefined;
  if (!policy) return undefined;
  assert.ok(objects.findIndex((o) => o.kind === 'NetworkPolicy') < objects.findIndex((o) => o.kind === 'Deployment'), 'applied before the pod exists');
  const byPort = new Map(policy.spec.ingress.flatMap((rule) => rule.ports.map((p): [number, PolicyRule] => [p.port, rule])));
  return { podSelector: policy.spec.podSelector, policyTypes: policy.spec.policyTypes, byPort };
}

test("the users webhook's NetworkPolicy: its port from the API server's CIDRs, or every address but the pods'; every other port the pod serves from anyone, as before", () => {
  assert.equal(policyOf({}), undefined, 'no webhook, no policy');
  const deployment = recorderManifests({ usersWebhook: true }).find((o) => o.kind === 'Deployment') as unknown as { spec: { selector: { matchLabels: unknown }; template: { spec: { containers: { ports: { containerPort: number }[] }[] } } } };
  const served = deployment.spec.template.spec.containers[0]!.ports.map((p) => p.containerPort).sort();

  const open = policyOf({ usersWebhook: true })!;
  assert.deepEqual(open.podSelector, deployment.spec.selector, "the recorder's pods");
  assert.deepEqual(open.policyTypes, ['Ingress'], 'what the recorder dials is not restricted');
  assert.deepEqual([...open.byPort.keys()].sort(), served, 'every port the container serves has a rule: none is closed by accident');
  for (const port of [HISTORY_PORT, PROBE_PORT, configFromEnv({}).metricsPort]) assert.equal(open.byPort.get(port)!.from, undefined, `port ${port}: every source`);
  assert.deepEqual(open.byPort.get(WEBHOOK_PORT)!.from, [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }], 'no pod CIDR known: every address (the install warns)');

  const pods = policyOf({ usersWebhook: true, podCIDRs: ['10.244.1.0/24', 'fd00:10:244::/64', '10.244.0.0/24', '10.244.1.0/24'] })!;
  assert.deepEqual(pods.byPort.get(WEBHOOK_PORT)!.from, [
    { ipBlock: { cidr: '0.0.0.0/0', except: ['10.244.0.0/24', '10.244.1.0/24'] } },
    { ipBlock: { cidr: '::/0', except: ['fd00:10:244::/64'] } },
  ], 'dual-stack: each family less its pod CIDRs, each once');
  assert.deepEqual(webhookCallerPeers({ podCIDRs: ['10.244.0.0/16'] }), [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.244.0.0/16'] } }], 'IPv4 pods only: no IPv6 range to admit');
  assert.deepEqual(webhookCallerPeers({ podCIDRs: ['fd00::/48'] }), [{ ipBlock: { cidr: '::/0', except: ['fd00::/48'] } }], 'IPv6 pods only');

  const apiServer = policyOf({ usersWebhook: true, apiServerCIDRs: ['172.16.0.32/28', '10.0.0.2/32'], podCIDRs: ['10.244.0.0/16'] })!;
  assert.deepEqual(apiServer.byPort.get(WEBHOOK_PORT)!.from, [{ ipBlock: { cidr: '10.0.0.2/32' } }, { ipBlock: { cidr: '172.16.0.32/28' } }], "the API server's CIDRs only; the pod CIDRs then unused");
  for (const port of [HISTORY_PORT, PROBE_PORT]) assert.equal(apiServer.byPort.get(port)!.from, undefined);

  for (const bad of ['10.0.0.1', '10.0.0.0/33', 'fd00::/129', 'example.com/8', '10.0.0.0/8/1', '10.0.0.0/x']) {
    assert.throws(() => recorderManifests({ usersWebhook: true, apiServerCIDRs: [bad] }), /apiServerCIDRs: .* is not a CIDR/, bad);
    assert.throws(() => webhookCallerPeers({ podCIDRs: [bad] }), /podCIDRs: .* is not a CIDR/, bad);
  }
});
