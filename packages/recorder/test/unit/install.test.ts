// `quorum history install`'s least-privilege RBAC: derived from ChangeRecorder specs through discovery (the
// resource names the API server serves, not guessed plurals), a Role in each namespace they name (cluster-wide
// only when asked for, and required for selectors), the recorder's own calls beside them and nothing else;
// kinds it cannot grant refused by name; the recorders already in the cluster kept unless told otherwise; and
// the command line.
import assert from 'node:assert/strict';
import { test } from 'node:test';
import type { V1ClusterRole, V1PolicyRule } from '@kubernetes/client-node';
import { apiError, type Client, type DiscoveryTransport, type KubeList } from '@quorum/runtime';
import type { ChangeRecorder, ChangeRecorderSpec } from '../../src/api/changerecorder.ts';
import { changeRecordersOf, parseInstallArgs } from '../../src/cli/install.ts';
import { UsageError } from '../../src/cli/errors.ts';
import { INSTALL_FIELD_MANAGER, installRecorder, planRecorderInstall, rolledOut, uninstallRecorder } from '../../src/deploy/install.ts';
import { NAMESPACE_SELECTOR_RULE, RECORDED_ROLE, ownClusterRules } from '../../src/deploy/manifests.ts';
import { derivationProblem, deriveRecordedKinds } from '../../src/deploy/rbac.ts';

const ALL = ['create', 'delete', 'deletecollection', 'get', 'list', 'patch', 'update', 'watch'];
const res = (name: string, kind: string, namespaced = true, verbs = ALL): Record<string, unknown> => ({ name, singularName: kind.toLowerCase(), namespaced, kind, verbs });
const group = (name: string, versions: string[]): Record<string, unknown> => ({
  name,
  versions: versions.map((v) => ({ groupVersion: `${name}/${v}`, version: v })),
  preferredVersion: { groupVersion: `${name}/${versions[0]}`, version: versions[0] },
});
const list = (groupVersion: string, resources: Record<string, unknown>[]): Record<string, unknown> => ({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion, resources });

/** A cluster without Quorum's etcd operator, with a CRD whose plural is not the English guess, and an aggregated API that is down. */
const DOCUMENTS: Record<string, unknown> = {
  '/api': { kind: 'APIVersions', versions: ['v1'], serverAddressByClientCIDRs: [] },
  '/api/v1': list('v1', [res('bindings', 'Binding', true, ['create']), res('configmaps', 'ConfigMap'), res('secrets', 'Secret'), res('services', 'Service'), res('namespaces', 'Namespace', false)]),
  '/apis': {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [group('apps', ['v1']), group('batch', ['v1']), group('networking.k8s.io', ['v1']), group('zoo.example.com', ['v1']), group('metrics.k8s.io', ['v1beta1'])],
  },
  '/apis/apps/v1': list('apps/v1', [res('deployments', 'Deployment'), res('statefulsets', 'StatefulSet'), res('daemonsets', 'DaemonSet')]),
  '/apis/batch/v1': list('batch/v1', [res('cronjobs', 'CronJob'), res('jobs', 'Job')]),
  '/apis/networking.k8s.io/v1': list('networking.k8s.io/v1', [res('ingresses', 'Ingress')]),
  '/apis/zoo.example.com/v1': list('zoo.example.com/v1', [res('octopi', 'Octopus'), res('geese', 'Goose', false)]),
};

const discovery: DiscoveryTransport = {
  request: <T>(_method: string, path: string): Promise<T> => {
    if (path === '/apis/metrics.k8s.io/v1beta1') return Promise.reject(apiError('GET', path, 503, { message: 'service unavailable' }));
    const document = DOCUMENTS[path];
    return document ? Promise.resolve(structuredClone(document) as T) : Promise.reject(apiError('GET', path, 404, { reason: 'NotFound' }));
  },
};

/** Discovery and the ChangeRecorders in the cluster: all an install plan reads. */
function fakeClient(existing: ChangeRecorder[] | 'no CRD'): Client {
  return {
    request: discovery.request,
    list: <T>(): Promise<KubeList<T & ChangeRecorder>> =>
      existing === 'no CRD' ? Promise.reject(apiError('GET', '/apis/history.quorum.dev/v1alpha1/changerecorders', 404, { reason: 'NotFound' })) : Promise.resolve({ metadata: {}, items: structuredClone(existing) as (T & ChangeRecorder)[] }),
  } as unknown as Client;
}

const recorder = (name: string, spec: ChangeRecorderSpec): ChangeRecorder => ({ apiVersion: 'history.quorum.dev/v1alpha1', kind: 'ChangeRecorder', metadata: { name }, spec });
const watchRule = (apiGroup: string, resources: string[]): V1PolicyRule => ({ apiGroups: [apiGroup], resources, verbs: ['list', 'watch'] });

/** The recorder's own rules: the ClusterRole's whatever it records. */
const OWN_RULES = ownClusterRules();

/** The rules of the recorded kinds' Role in each namespace that has one. */
function recordedRolesOf(manifests: readonly object[]): Record<string, V1PolicyRule[]> {
  const roles = manifests.filter((o) => (o as { kind?: string }).kind === 'Role' && (o as { metadata: { name: string } }).metadata.name === RECORDED_ROLE) as { metadata: { namespace: string }; rules: V1PolicyRule[] }[];
  return Object.fromEntries(roles.map((r) => [r.metadata.namespace, r.rules]));
}

function clusterRoleOf(manifests: readonly object[]): V1ClusterRole {
  const role = manifests.find((o): o is V1ClusterRole => (o as { kind?: string }).kind === 'ClusterRole');
  assert.ok(role, 'a ClusterRole');
  return role;
}

test('a Role in the namespace a spec names grants list and watch on exactly the kinds it lists, under the resource names discovery serves', async () => {
  const derived = await deriveRecordedKinds(discovery, [{ namespaces: { names: ['app'] }, resources: [{ group: '', kind: 'ConfigMap' }, { group: 'zoo.example.com', kind: 'Octopus' }, { group: 'apps', kind: 'Deployment' }] }]);
  assert.equal(derivationProblem(derived), undefined);
  assert.deepEqual(derived.granted.map((k) => [k.group, k.kind, k.resource, k.from]), [
    ['', 'ConfigMap', 'configmaps', 'discovery'],
    ['apps', 'Deployment', 'deployments', 'discovery'],
    ['zoo.example.com', 'Octopus', 'octopi', 'discovery'],
  ]);
  const plan = await planRecorderInstall(fakeClient([]), { recorders: [recorder('app', { namespaces: { names: ['app'] }, resources: [{ group: '', kind: 'ConfigMap' }, { group: 'zoo.example.com', kind: 'Octopus' }, { group: 'apps', kind: 'Deployment' }] })] });
  assert.deepEqual(clusterRoleOf(plan.manifests).rules, OWN_RULES, 'nothing recorded is granted cluster-wide');
  assert.deepEqual(recordedRolesOf(plan.manifests), { app: [watchRule('', ['configmaps']), watchRule('apps', ['deployments']), watchRule('zoo.example.com', ['octopi'])] });
  const recorded = recordedRolesOf(plan.manifests)['app']!;
  assert.ok(recorded.every((r) => r.verbs.join() === 'list,watch'), 'never a write on a recorded kind');
  assert.ok(!recorded.some((r) => r.resources?.includes('secrets')), 'a kind not asked for is not granted');
});

test('a spec without resources gets the default kinds; Quorum\'s own, not served here, are granted by their known names', async () => {
  const derived = await deriveRecordedKinds(discovery, [{ namespaces: { names: ['default'] } }]);
  assert.equal(derivationProblem(derived), undefined);
  assert.deepEqual(derived.granted.filter((k) => k.from === 'quorum').map((k) => k.resource), ['etcdbackupschedules', 'etcdclusters']);
  const plan = await planRecorderInstall(fakeClient('no CRD'), { recorders: [recorder('default', { namespaces: { names: ['default'] } })] });
  assert.deepEqual(recordedRolesOf(plan.manifests), {
    default: [
      watchRule('', ['configmaps', 'services']),
      watchRule('apps', ['daemonsets', 'deployments', 'statefulsets']),
      watchRule('batch', ['cronjobs']),
      watchRule('etcd.quorum.dev', ['etcdbackupschedules', 'etcdclusters']),
      watchRule('networking.k8s.io', ['ingresses']),
    ],
  }, 'the default kinds, without Secrets, in the namespace named');
  // No ChangeRecorder at all: what the sample, or one created later without resources for default, needs.
  const bare = await planRecorderInstall(fakeClient('no CRD'));
  assert.equal(bare.derived.defaulted, true);
  assert.deepEqual(recordedRolesOf(bare.manifests), recordedRolesOf(plan.manifests));
  assert.deepEqual(clusterRoleOf(bare.manifests).rules, OWN_RULES);
});

test('a kind that is not served, cannot be listed and watched, or whose discovery fails is refused by name, and nothing is planned', async () => {
  const specs: ChangeRecorderSpec[] = [{ namespaces: { all: true }, resources: [{ group: 'apps', kind: 'Deploymnet' }, { group: '', kind: 'Binding' }, { group: 'metrics.k8s.io', kind: 'PodMetrics' }, { group: '', kind: 'ConfigMap' }] }];
  const problem = derivationProblem(await deriveRecordedKinds(discovery, specs));
  assert.ok(problem);
  assert.match(problem, /Deploymnet\.apps: .*Deploymnet/);
  assert.match(problem, /^ {2}Binding: /m);
  assert.match(problem, /PodMetrics\.metrics\.k8s\.io: its discovery documents cannot be read \(.*503/);
  assert.doesNotMatch(problem, /ConfigMap/);
  await assert.rejects(planRecorderInstall(fakeClient([]), { recorders: [recorder('bad', specs[0]!)] }), /Deploymnet\.apps/);
});

test('the ChangeRecorders already in the cluster keep their kinds unless told otherwise, and their object stores\' Secrets are mounted', async () => {
  // Geese are cluster-scoped: granted in the ClusterRole, there being no namespace to grant them in.
  const existing = [recorder('geese', { namespaces: { names: ['zoo'] }, resources: [{ group: 'zoo.example.com', kind: 'Goose' }, { group: 'zoo.example.com', kind: 'Octopus' }], storage: { s3: { bucket: 'b', credentialsSecret: 'zoo-s3' } } })];
  const given = recorder('app', { namespaces: { names: ['app'] }, resources: [{ group: '', kind: 'ConfigMap' }] });
  const plan = await planRecorderInstall(fakeClient(existing), { recorders: [given] });
  assert.deepEqual(plan.derivedFrom, ['app', 'geese']);
  assert.deepEqual(clusterRoleOf(plan.manifests).rules!.slice(OWN_RULES.length), [watchRule('zoo.example.com', ['geese'])]);
  // Every recorded namespace's Role grants the namespaced kinds of all the ChangeRecorders together.
  const both = [watchRule('', ['configmaps']), watchRule('zoo.example.com', ['octopi'])];
  assert.deepEqual(recordedRolesOf(plan.manifests), { app: both, zoo: both });
  const deployment = plan.manifests.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { volumes: { secret?: { secretName: string } }[] } } } };
  assert.deepEqual(deployment.spec.template.spec.volumes.flatMap((v) => (v.secret ? [v.secret.secretName] : [])), ['zoo-s3']);
  assert.deepEqual(plan.recorders.map((r) => r.metadata.name), ['app'], 'only the given ones are applied');

  const only = await planRecorderInstall(fakeClient(existing), { recorders: [given], includeExisting: false });
  assert.deepEqual(recordedRolesOf(only.manifests), { app: [watchRule('', ['configmaps'])] });
  assert.deepEqual(clusterRoleOf(only.manifests).rules, OWN_RULES);
  // A given spec replaces the cluster's version of the same ChangeRecorder.
  const replaced = await planRecorderInstall(fakeClient([recorder('app', { namespaces: { all: true }, resources: [{ group: 'apps', kind: 'Deployment' }] })]), { recorders: [given] });
  assert.deepEqual(recordedRolesOf(replaced.manifests), { app: [watchRule('', ['configmaps'])] });
});

test('namespaces by selector or all need the cluster-wide install, which grants in the ClusterRole; kube-system is refused', async () => {
  const selector = recorder('teams', { namespaces: { selector: { matchLabels: { team: 'a' } } }, resources: [{ group: '', kind: 'ConfigMap' }] });
  await assert.rejects(planRecorderInstall(fakeClient([selector]), {}), /spec\.namespaces\.selector \{"matchLabels":\{"team":"a"\}\}.*--cluster-wide/s);
  const wide = await planRecorderInstall(fakeClient([selector]), { clusterWide: true });
  assert.deepEqual(clusterRoleOf(wide.manifests).rules, [...OWN_RULES, NAMESPACE_SELECTOR_RULE, watchRule('', ['configmaps'])]);
  assert.deepEqual(recordedRolesOf(wide.manifests), {}, 'no Role per namespace when cluster-wide');
  await assert.rejects(planRecorderInstall(fakeClient([]), { recorders: [recorder('sys', { namespaces: { names: ['kube-system', 'app'] } })] }), /never granted namespace kube-system/);
  await assert.rejects(planRecorderInstall(fakeClient([]), { recorders: [recorder('sys', { namespaces: { names: ['kube-system'] } })], clusterWide: true }), /never granted namespace kube-system/);
  assert.equal(parseInstallArgs(['--cluster-wide']).options.clusterWide, true);
  assert.equal(parseInstallArgs([]).options.clusterWide, undefined);
});

test('a ChangeRecorder the recorder would refuse is refused before anything is applied', async () => {
  await assert.rejects(planRecorderInstall(fakeClient([]), { recorders: [recorder('two', { namespaces: { names: ['a'], all: true } })] }), /ChangeRecorder two: spec\.namespaces must set exactly one/);
  await assert.rejects(planRecorderInstall(fakeClient([]), { recorders: [{ ...recorder('x', { namespaces: { all: true } }), apiVersion: 'history.quorum.dev/v1' }] }), /expected ChangeRecorder of history\.quorum\.dev\/v1alpha1/);
});

test('the command line: files, repeated options, and mistakes named', () => {
  const args = parseInstallArgs(['-f', 'a.yaml', '-f', 'b.yaml', '--image', 'r:1', '--storage-secret', 's1', '--storage-secret', 's2', '--ignore-existing', '--no-wait'], { QUORUM_RECORDER_NAMESPACE: 'ops' });
  assert.deepEqual(args.files, ['a.yaml', 'b.yaml']);
  assert.deepEqual(args.options, { namespace: 'ops', includeExisting: false, wait: false, image: 'r:1', storageSecrets: ['s1', 's2'] });
  assert.equal(parseInstallArgs(['--recorder-namespace', 'x']).options.namespace, 'x');
  const mtls = parseInstallArgs(['--webhook-client-ca', 'ca.pem', '--webhook-client-name', 'a', '--webhook-client-name', 'b']);
  assert.equal(mtls.webhookClientCAFile, 'ca.pem', 'read at install');
  assert.deepEqual(mtls.options.webhookClientNames, ['a', 'b']);
  assert.throws(() => parseInstallArgs(['--print', '--no-wait']), UsageError);
  assert.throws(() => parseInstallArgs(['extra']), UsageError);
  const yaml = 'apiVersion: history.quorum.dev/v1alpha1\nkind: ChangeRecorder\nmetadata: {name: a}\nspec: {namespaces: {all: true}}\n---\n---\napiVersion: history.quorum.dev/v1alpha1\nkind: ChangeRecorder\nmetadata: {name: b}\nspec: {namespaces: {names: [x]}}\n';
  assert.deepEqual(changeRecordersOf('r.yaml', yaml).map((r) => r.metadata.name), ['a', 'b']);
  assert.throws(() => changeRecordersOf('r.yaml', 'apiVersion: v1\nkind: ConfigMap\nmetadata: {name: c}\n'), /r\.yaml: document 1 is a ConfigMap, not a ChangeRecorder/);
});

test('rolled out as kubectl rollout status judges it', () => {
  const d = (status: Record<string, number>, generation = 2): Parameters<typeof rolledOut>[0] => ({ metadata: { generation }, spec: { replicas: 1, selector: {}, template: {} }, status });
  assert.equal(rolledOut(d({ observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 1, readyReplicas: 1 })), true);
  assert.equal(rolledOut(d({ observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1, readyReplicas: 1 })), false, 'the new generation not observed yet');
  assert.equal(rolledOut(d({ observedGeneration: 2, replicas: 2, updatedReplicas: 1, availableReplicas: 1, readyReplicas: 1 })), false, 'an old pod left');
  assert.equal(rolledOut(d({ observedGeneration: 2, replicas: 1, updatedReplicas: 1, availableReplicas: 0, readyReplicas: 0 })), false);
});

test('an install applies every object with strict field validation, the CRD established before the ChangeRecorders, then waits and reports Ready; an uninstall keeps the CRD, the records and the namespace', async () => {
  const applied: { kind: string; name: string; query: Record<string, unknown> }[] = [];
  const deleted: string[] = [];
  let crdEstablished = false;
  let looks = 0;
  const base = fakeClient('no CRD');
  const client = {
    request: (...args: Parameters<Client['request']>) => base.request(...args),
    list: (...args: Parameters<Client['list']>) => base.list(...args),
    apply: (type: { kind: string }, obj: { metadata: { name: string } }, options: Record<string, unknown>) => {
      if (type.kind === 'ChangeRecorder') assert.ok(crdEstablished, 'a ChangeRecorder is applied only once its CRD is established');
      applied.push({ kind: type.kind, name: obj.metadata.name, query: options });
      return Promise.resolve(obj);
    },
    get: (type: { kind: string }, key: unknown) => {
      if (type.kind === 'CustomResourceDefinition') {
        // Established on the second look: the install waits for it.
        looks++;
        crdEstablished = looks >= 2;
        return Promise.resolve({ metadata: { name: key }, status: { conditions: [{ type: 'Established', status: crdEstablished ? 'True' : 'False' }] } });
      }
      if (type.kind === 'Deployment') return Promise.resolve({ metadata: { generation: 1 }, spec: { replicas: 1 }, status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1, readyReplicas: 1 } });
      if (type.kind === 'ChangeRecorder') return Promise.resolve({ metadata: { name: key, generation: 1 }, status: { observedGeneration: 1, conditions: [{ type: 'Ready', status: 'True', reason: 'Recording', message: 'recording 1 kind' }] } });
      return Promise.reject(new Error(`unexpected get of ${type.kind}`));
    },
    delete: (type: { kind: string }, key: { name: string }) => {
      deleted.push(`${type.kind}/${key.name}`);
      return type.kind === 'Service' ? Promise.reject(apiError('DELETE', '/x', 404, { reason: 'NotFound' })) : Promise.resolve();
    },
  } as unknown as Client;
  const result = await installRecorder(client, { namespace: 'ops', recorders: [recorder('app', { namespaces: { names: ['app'] }, resources: [{ group: '', kind: 'ConfigMap' }] })], readyTimeoutMs: 5000 });
  assert.deepEqual(applied.map((a) => a.kind), [...result.manifests.map((o) => o.kind), 'ChangeRecorder']);
  assert.ok(applied.every((a) => a.query['fieldValidation'] === 'Strict' && a.query['fieldManager'] === INSTALL_FIELD_MANAGER && a.query['force'] === true));
  assert.deepEqual(result.ready, [{ name: 'app', status: 'True', reason: 'Recording', message: 'recording 1 kind' }]);
  assert.equal(result.usersWebhook, false);
  assert.deepEqual(deleted, [
    // In reverse order of the manifests, as the kit removes them: the configuration (the API server's calls
    // stop), its port's policy, then the webhook's RBAC.
    'ValidatingWebhookConfiguration/quorum-recorder-users',
    'NetworkPolicy/quorum-recorder',
    'RoleBinding/quorum-recorder-webhook',
    'Role/quorum-recorder-webhook',
    'ClusterRoleBinding/quorum-recorder-webhook',
    'ClusterRole/quorum-recorder-webhook',
  ], 'no ChangeRecorder asks for users: a users webhook an earlier install left is removed, and its NetworkPolicy');

  deleted.length = 0;
  await uninstallRecorder(client, { namespace: 'ops' });
  assert.ok(!deleted.some((d) => /^(Namespace|CustomResourceDefinition|PersistentVolumeClaim)\//.test(d)), `kept: ${deleted.join(', ')}`);
  assert.deepEqual(
    new Set(deleted.map((d) => d.split('/')[0])),
    new Set(['Service', 'Deployment', 'RoleBinding', 'Role', 'ClusterRoleBinding', 'ClusterRole', 'ServiceAccount', 'ValidatingWebhookConfiguration', 'ConfigMap', 'NetworkPolicy']),
    'an object already gone is no error',
  );
});

test('a ChangeRecorder that asks for users brings the users webhook, on the kinds of the role; a re-install keeps the CA the recorder published, and waits for it', async () => {
  const usersRecorder = recorder('audited', { namespaces: { names: ['app'] }, resources: [{ group: 'zoo.example.com', kind: 'Octopus' }], attribution: { users: true } });
  const plain = await planRecorderInstall(fakeClient([]), { recorders: [recorder('plain', { namespaces: { all: true } })], clusterWide: true });
  assert.equal(plain.usersWebhook, false);
  assert.ok(!plain.manifests.some((o) => o.kind === 'ValidatingWebhookConfiguration'));
  const forced = await planRecorderInstall(fakeClient([]), { recorders: [recorder('plain', { namespaces: { all: true } })], usersWebhook: true, clusterWide: true });
  assert.equal(forced.usersWebhook, true, '--users-webhook');
  const wideConfig = forced.manifests.find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as { webhooks: { namespaceSelector: unknown }[] };
  assert.deepEqual(wideConfig.webhooks[0]!.namespaceSelector, { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'NotIn', values: ['kube-system'] }] }, 'cluster-wide: every namespace but kube-system');
  const plan = await planRecorderInstall(fakeClient([usersRecorder]), {});
  assert.deepEqual([plan.usersWebhook, plan.usersFor], [true, ['audited']], 'a ChangeRecorder in the cluster that asks for users keeps the webhook');
  const config = plan.manifests.find((o) => o.kind === 'ValidatingWebhookConfiguration') as unknown as { webhooks: { rules: unknown[]; namespaceSelector: unknown }[] };
  assert.deepEqual(config.webhooks[0]!.rules, [{ apiGroups: ['zoo.example.com'], apiVersions: ['*'], operations: ['UPDATE', 'DELETE'], resources: ['octopi'], scope: '*' }], 'the resource discovery found, as the role grants it');
  assert.deepEqual(config.webhooks[0]!.namespaceSelector, { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['app'] }] }, 'called only for the recorded namespaces');

  const applied: Record<string, unknown>[] = [];
  let caLooks = 0;
  const base = fakeClient([usersRecorder]);
  const existingConfig = { metadata: { name: 'quorum-recorder-users' }, webhooks: [{ name: 'users.changerecorders.history.quorum.dev', clientConfig: { caBundle: 'Q0E=' } }] };
  const client = {
    request: (...args: Parameters<Client['request']>) => base.request(...args),
    list: (...args: Parameters<Client['list']>) => base.list(...args),
    apply: (type: { kind: string }, obj: Record<string, unknown>) => {
      if (type.kind === 'ValidatingWebhookConfiguration') applied.push(obj);
      return Promise.resolve(obj);
    },
    find: (type: { kind: string }) => Promise.resolve(type.kind === 'ValidatingWebhookConfiguration' ? structuredClone(existingConfig) : undefined),
    get: (type: { kind: string }) => {
      if (type.kind === 'CustomResourceDefinition') return Promise.resolve({ status: { conditions: [{ type: 'Established', status: 'True' }] } });
      if (type.kind === 'Deployment') return Promise.resolve({ metadata: { generation: 1 }, spec: { replicas: 1 }, status: { observedGeneration: 1, replicas: 1, updatedReplicas: 1, availableReplicas: 1, readyReplicas: 1 } });
      if (type.kind === 'ValidatingWebhookConfiguration') {
        caLooks++;
        return Promise.resolve(caLooks >= 2 ? existingConfig : { webhooks: [{ clientConfig: {} }] });
      }
      return Promise.reject(new Error(`unexpected get of ${type.kind}`));
    },
    delete: () => Promise.reject(new Error('nothing is removed when the webhook is wanted')),
  } as unknown as Client;
  const result = await installRecorder(client, { namespace: 'ops' });
  assert.equal(result.usersWebhook, true);
  assert.equal(applied.length, 1);
  assert.equal((applied[0] as unknown as { webhooks: { clientConfig: { caBundle?: string } }[] }).webhooks[0]!.clientConfig.caBundle, 'Q0E=', 'the published CA is applied back, not blanked');
  assert.ok(caLooks >= 2, 'the install waits until the CA is published');

  assert.equal(parseInstallArgs(['--users-webhook']).options.usersWebhook, true);
  assert.equal(parseInstallArgs([]).options.usersWebhook, undefined);
});

test("the users webhook's NetworkPolicy refuses the Nodes' pod CIDRs, read at install; none found (or Nodes forbidden) is said; the API server's CIDRs, given, are used as they are", async () => {
  const usersRecorder = recorder('audited', { namespaces: { names: ['app'] }, resources: [{ group: '', kind: 'ConfigMap' }], attribution: { users: true } });
  let nodeLists = 0;
  const withNodes = (nodes: unknown[] | 'forbidden'): Client => {
    const base = fakeClient([usersRecorder]);
    return {
      request: (...args: Parameters<Client['request']>) => base.request(...args),
      list: (type: { kind: string }, ...rest: unknown[]) => {
        if (type.kind !== 'Node') return (base.list as (...a: unknown[]) => unknown)(type, ...rest);
        nodeLists++;
        return nodes === 'forbidden' ? Promise.reject(apiError('GET', '/api/v1/nodes', 403, { message: 'nodes is forbidden' })) : Promise.resolve({ metadata: {}, items: nodes });
      },
    } as unknown as Client;
  };
  const webhookFrom = (plan: { manifests: readonly { kind?: string }[] }): unknown => {
    const policy = plan.manifests.find((o) => o.kind === 'NetworkPolicy') as unknown as { spec: { ingress: { from?: unknown; ports: { port: number }[] }[] } };
    return policy.spec.ingress.find((r) => r.ports.some((p) => p.port === 9443))!.from;
  };
  const dualStack = [{ spec: { podCIDR: '10.244.0.0/24', podCIDRs: ['10.244.0.0/24', 'fd00::/64'] } }, { spec: { podCIDR: '10.244.1.0/24' } }, { spec: {} }];
  const found = await planRecorderInstall(withNodes(dualStack), {});
  assert.deepEqual(webhookFrom(found), [{ ipBlock: { cidr: '0.0.0.0/0', except: ['10.244.0.0/24', '10.244.1.0/24'] } }, { ipBlock: { cidr: '::/0', except: ['fd00::/64'] } }]);
  assert.deepEqual(found.warnings, []);
  assert.match(found.webhookCallers ?? '', /every address but the Nodes' pod CIDRs 10\.244\.0\.0\/24, 10\.244\.1\.0\/24, fd00::\/64/);

  for (const [nodes, why] of [[[{ spec: {} }], /no Node has spec\.podCIDRs/], ['forbidden', /the Nodes could not be listed .*forbidden/]] as const) {
    const none = await planRecorderInstall(withNodes(nodes as unknown[] | 'forbidden'), {});
    assert.deepEqual(webhookFrom(none), [{ ipBlock: { cidr: '0.0.0.0/0' } }, { ipBlock: { cidr: '::/0' } }]);
    assert.equal(none.warnings.length, 1);
    assert.match(none.warnings[0]!, /admits every address to port 9443, pods included/);
    assert.match(none.warnings[0]!, why);
  }

  nodeLists = 0;
  const given = await planRecorderInstall(withNodes(dualStack), { apiServerCIDRs: ['172.16.0.0/28'] });
  assert.deepEqual(webhookFrom(given), [{ ipBlock: { cidr: '172.16.0.0/28' } }]);
  const pods = await planRecorderInstall(withNodes(dualStack), { podCIDRs: ['100.64.0.0/16'] });
  assert.deepEqual(webhookFrom(pods), [{ ipBlock: { cidr: '0.0.0.0/0', except: ['100.64.0.0/16'] } }]);
  const without = await planRecorderInstall(withNodes('forbidden'), { recorders: [recorder('plain', { namespaces: { names: ['app'] } })], includeExisting: false });
  assert.ok(!without.manifests.some((o) => o.kind === 'NetworkPolicy') && without.warnings.length === 0, 'no webhook: no policy, nothing to warn of');
  assert.equal(nodeLists, 0, 'the Nodes are read only when the policy needs them');

  const args = parseInstallArgs(['--api-server-cidr', '172.16.0.0/28', '--api-server-cidr', '10.0.0.2/32', '--pod-cidr', 'fd00::/48']);
  assert.deepEqual([args.options.apiServerCIDRs, args.options.podCIDRs], [['172.16.0.0/28', '10.0.0.2/32'], ['fd00::/48']]);
  assert.throws(() => parseInstallArgs(['--api-server-cidr', '10.0.0.2']), (err: unknown) => err instanceof UsageError && /--api-server-cidr: "10\.0\.0\.2" is not a CIDR/.test(err.message));
});
