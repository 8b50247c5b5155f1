// Discovery against documents recorded from a Kubernetes 1.34.4 API server (localkube, with the etcd
// operator's CRDs installed): fixtures/discovery-1.34/*.json are the bodies of `kubectl get --raw` for
// /api, /apis, /api/v1 and a few group versions. A CRD group with two versions, an aggregated API whose
// backend is down, and a few broken documents are added by the tests themselves.
import { test } from 'node:test';
import assert from 'node:assert/strict';
import { readFileSync } from 'node:fs';
import { join } from 'node:path';
import { apiError } from '../../src/client/errors.ts';
import {
  DiscoveryClient,
  DiscoveryDocumentError,
  findResource,
  groupKindString,
  groupVersionPath,
  parseAPIGroupList,
  parseAPIResourceList,
  parseAPIVersions,
  versionsByPreference,
  type DiscoveryTransport,
} from '../../src/discovery/discovery.ts';

const FIXTURES = join(import.meta.dirname, 'fixtures', 'discovery-1.34');
const fixture = (file: string): unknown => JSON.parse(readFileSync(join(FIXTURES, file), 'utf8')) as unknown;

/** The recorded documents by path, as the API server serves them. */
const RECORDED: Record<string, unknown> = {
  '/api': fixture('api.json'),
  '/apis': fixture('apis.json'),
  '/api/v1': fixture('api-v1.json'),
  '/apis/apps/v1': fixture('apis-apps-v1.json'),
  '/apis/batch/v1': fixture('apis-batch-v1.json'),
  '/apis/networking.k8s.io/v1': fixture('apis-networking.k8s.io-v1.json'),
  '/apis/autoscaling/v2': fixture('apis-autoscaling-v2.json'),
  '/apis/autoscaling/v1': fixture('apis-autoscaling-v1.json'),
  '/apis/etcd.quorum.dev/v1alpha1': fixture('apis-etcd.quorum.dev-v1alpha1.json'),
};

/** An answer that is an error, as the client throws it. */
class Refusal {
  readonly error: Error;
  constructor(error: Error) {
    this.error = error;
  }
}

/** A server with the recorded documents, plus `extra`; any other path answers 404 as the API server does. */
function server(extra: Record<string, unknown> = {}): DiscoveryTransport & { asked: string[] } {
  const documents: Record<string, unknown> = { ...RECORDED, ...extra };
  const asked: string[] = [];
  return {
    asked,
    request: <T>(method: string, path: string): Promise<T> => {
      asked.push(path);
      assert.equal(method, 'GET');
      const document = documents[path];
      if (document instanceof Refusal) return Promise.reject(document.error);
      if (document === undefined) return Promise.reject(apiError('GET', path, 404, { kind: 'Status', status: 'Failure', reason: 'NotFound', message: 'the server could not find the requested resource', code: 404 }));
      return Promise.resolve(structuredClone(document) as T);
    },
  };
}

/** A CRD group served in v2 (preferred) and v1, with a kind only v1 still has, in the API server's shape. */
function twoVersionGroup(): Record<string, unknown> {
  const groups = parseAPIGroupList(RECORDED['/apis']);
  const apis = {
    kind: 'APIGroupList',
    apiVersion: 'v1',
    groups: [
      ...groups,
      {
        name: 'widgets.example.dev',
        versions: [{ groupVersion: 'widgets.example.dev/v2', version: 'v2' }, { groupVersion: 'widgets.example.dev/v1', version: 'v1' }],
        preferredVersion: { groupVersion: 'widgets.example.dev/v2', version: 'v2' },
      },
      { name: 'metrics.k8s.io', versions: [{ groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' }], preferredVersion: { groupVersion: 'metrics.k8s.io/v1beta1', version: 'v1beta1' } },
    ],
  };
  const verbs = ['delete', 'deletecollection', 'get', 'list', 'patch', 'create', 'update', 'watch'];
  return {
    '/apis': apis,
    '/apis/widgets.example.dev/v2': {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'widgets.example.dev/v2',
      resources: [
        { name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', verbs, shortNames: ['wd'], storageVersionHash: 'aaaaaaaaaaa=' },
        { name: 'widgets/status', singularName: '', namespaced: true, kind: 'Widget', verbs: ['get', 'patch', 'update'] },
      ],
    },
    '/apis/widgets.example.dev/v1': {
      kind: 'APIResourceList',
      apiVersion: 'v1',
      groupVersion: 'widgets.example.dev/v1',
      resources: [
        { name: 'widgets', singularName: 'widget', namespaced: true, kind: 'Widget', verbs, storageVersionHash: 'aaaaaaaaaaa=' },
        { name: 'gadgets', singularName: 'gadget', namespaced: false, kind: 'Gadget', verbs, storageVersionHash: 'bbbbbbbbbbb=' },
      ],
    },
    // An aggregated API whose backend (metrics-server) is down: the API server answers 503 for its document.
    '/apis/metrics.k8s.io/v1beta1': new Refusal(
      apiError('GET', '/apis/metrics.k8s.io/v1beta1', 503, { kind: 'Status', status: 'Failure', reason: 'ServiceUnavailable', message: 'the server is currently unable to handle the request', code: 503 }),
    ),
  };
}

test('the recorded 1.34 documents parse: core versions, groups in order with their preferred version, resources with verbs', () => {
  assert.deepEqual(parseAPIVersions(RECORDED['/api']), ['v1']);

  const groups = parseAPIGroupList(RECORDED['/apis']);
  assert.equal(groups[0]?.name, 'apiregistration.k8s.io', "the server's order is kept");
  assert.ok(groups.some((g) => g.name === 'resource.k8s.io'), 'a 1.34 group');
  const autoscaling = groups.find((g) => g.name === 'autoscaling')!;
  assert.deepEqual(autoscaling.versions.map((v) => v.groupVersion), ['autoscaling/v2', 'autoscaling/v1']);
  assert.deepEqual(autoscaling.preferredVersion, { groupVersion: 'autoscaling/v2', version: 'v2' });
  assert.deepEqual(versionsByPreference(autoscaling).map((v) => v.version), ['v2', 'v1']);

  const core = parseAPIResourceList(RECORDED['/api/v1'], '/api/v1');
  assert.equal(core.groupVersion, 'v1');
  const configMaps = findResource(core, 'ConfigMap')!;
  assert.deepEqual(
    { name: configMaps.name, singular: configMaps.singularName, namespaced: configMaps.namespaced, shortNames: configMaps.shortNames },
    { name: 'configmaps', singular: 'configmap', namespaced: true, shortNames: ['cm'] },
  );
  assert.ok(configMaps.verbs.includes('watch'));
  assert.equal(findResource(core, 'Namespace')?.namespaced, false);
  assert.equal(findResource(core, 'Pod')?.name, 'pods', 'the resource itself, not pods/status, pods/log or pods/exec');

  const apps = parseAPIResourceList(RECORDED['/apis/apps/v1'], '/apis/apps/v1');
  const scale = apps.resources.find((r) => r.name === 'deployments/scale')!;
  assert.deepEqual([scale.group, scale.version, scale.kind], ['autoscaling', 'v1', 'Scale'], "a subresource's kind from another group");
  assert.equal(findResource(apps, 'Scale'), undefined, 'a kind only subresources carry is not a resource');

  const etcd = parseAPIResourceList(RECORDED['/apis/etcd.quorum.dev/v1alpha1'], '/apis/etcd.quorum.dev/v1alpha1');
  assert.deepEqual(etcd.resources.filter((r) => !r.name.includes('/')).map((r) => r.kind).sort(), ['EtcdBackup', 'EtcdBackupSchedule', 'EtcdCluster', 'EtcdRestore']);
  assert.deepEqual(findResource(etcd, 'EtcdCluster')?.categories, ['quorum']);
});

test('kinds resolve to their resource, scope, version and verbs, as ResourceTypes the client takes', async () => {
  const api = server();
  const { found, missing, unavailable } = await new DiscoveryClient(api).resolveKinds(
    [
      { group: '', kind: 'ConfigMap' },
      { group: 'apps', kind: 'Deployment' },
      { group: 'networking.k8s.io', kind: 'Ingress' },
      { group: 'batch', kind: 'CronJob' },
      { group: 'autoscaling', kind: 'HorizontalPodAutoscaler' },
      { group: 'etcd.quorum.dev', kind: 'EtcdCluster' },
      { group: '', kind: 'Namespace' },
    ],
    { verbs: ['list', 'watch'] },
  );
  assert.deepEqual(missing, []);
  assert.deepEqual(unavailable, []);
  assert.deepEqual(
    found.map((k) => [groupKindString(k), k.apiVersion, k.resource, k.namespaced, k.preferred]),
    [
      ['ConfigMap', 'v1', 'configmaps', true, true],
      ['Deployment.apps', 'apps/v1', 'deployments', true, true],
      ['Ingress.networking.k8s.io', 'networking.k8s.io/v1', 'ingresses', true, true],
      ['CronJob.batch', 'batch/v1', 'cronjobs', true, true],
      ['HorizontalPodAutoscaler.autoscaling', 'autoscaling/v2', 'horizontalpodautoscalers', true, true],
      ['EtcdCluster.etcd.quorum.dev', 'etcd.quorum.dev/v1alpha1', 'etcdclusters', true, true],
      ['Namespace', 'v1', 'namespaces', false, true],
    ],
  );
  const etcd = found.find((k) => k.kind === 'EtcdCluster')!;
  assert.deepEqual(etcd.type, { apiVersion: 'etcd.quorum.dev/v1alpha1', kind: 'EtcdCluster', plural: 'etcdclusters', namespaced: true });
  assert.deepEqual(etcd.shortNames, ['etcd']);
  assert.equal(etcd.singular, 'etcdcluster');
  assert.ok(etcd.verbs.includes('watch'));
  assert.equal(new Set(api.asked).size, api.asked.length, 'each document is read once');
  assert.ok(!api.asked.includes('/apis/autoscaling/v1'), 'the preferred version served the kind: the other one is not read');
});

test('unknown kinds are missing, each with why: an unserved group, a kind no version has, a resource without the verbs', async () => {
  const { found, missing, unavailable } = await new DiscoveryClient(server()).resolveKinds(
    [
      { group: 'apps', kind: 'Deployment' },
      { group: 'apps', kind: 'Deploymnet' },
      { group: '', kind: 'Deployment' },
      { group: 'history.quorum.dev', kind: 'ChangeRecorder' },
      { group: '', kind: 'Binding' },
    ],
    { verbs: ['list', 'watch'] },
  );
  assert.deepEqual(found.map(groupKindString), ['Deployment.apps']);
  assert.deepEqual(unavailable, []);
  assert.deepEqual(missing, [
    { group: 'apps', kind: 'Deploymnet', why: 'no served version of group apps (apps/v1) has kind Deploymnet' },
    { group: '', kind: 'Deployment', why: 'no served version of the core group (v1) has kind Deployment' },
    { group: 'history.quorum.dev', kind: 'ChangeRecorder', why: 'the API server serves no group history.quorum.dev' },
    { group: '', kind: 'Binding', why: 'bindings (v1) does not support list, watch, only create' },
  ]);
});

test('the preferred version first; a kind only an older version still serves is found there', async () => {
  const api = server(twoVersionGroup());
  const { found, missing } = await new DiscoveryClient(api).resolveKinds([
    { group: 'widgets.example.dev', kind: 'Widget' },
    { group: 'widgets.example.dev', kind: 'Gadget' },
    { group: 'widgets.example.dev', kind: 'Gizmo' },
  ]);
  assert.deepEqual(
    found.map((k) => [k.kind, k.version, k.preferred, k.namespaced]),
    [
      ['Widget', 'v2', true, true],
      ['Gadget', 'v1', false, false],
    ],
  );
  assert.deepEqual(missing.map((k) => [k.kind, k.why]), [['Gizmo', 'no served version of group widgets.example.dev (widgets.example.dev/v2, widgets.example.dev/v1) has kind Gizmo']]);
});

test('a group version that cannot be read makes its kinds unavailable, not missing; the others still resolve', async () => {
  const api = server(twoVersionGroup());
  const discovery = new DiscoveryClient(api);
  const { found, missing, unavailable } = await discovery.resolveKinds([
    { group: 'metrics.k8s.io', kind: 'PodMetrics' },
    { group: '', kind: 'Secret' },
  ]);
  assert.deepEqual(found.map(groupKindString), ['Secret']);
  assert.deepEqual(missing, []);
  assert.equal(unavailable.length, 1);
  assert.equal(groupKindString(unavailable[0]!), 'PodMetrics.metrics.k8s.io');
  assert.match(unavailable[0]!.errors[0]!, /^GET \/apis\/metrics\.k8s\.io\/v1beta1: .*503 ServiceUnavailable/);
  await assert.rejects(discovery.resolveKind({ group: 'metrics.k8s.io', kind: 'PodMetrics' }), /discovery of PodMetrics\.metrics\.k8s\.io failed: .*503/);
  assert.equal((await discovery.resolveKind({ group: 'batch', kind: 'Job' }))?.resource, 'jobs');
  assert.equal(await discovery.resolveKind({ group: 'batch', kind: 'Jobb' }), undefined);
});

test('a version listed in /apis but gone by the time its document is read (404) is skipped', async () => {
  const extra = twoVersionGroup();
  delete extra['/apis/widgets.example.dev/v2'];
  const { found } = await new DiscoveryClient(server(extra)).resolveKinds([{ group: 'widgets.example.dev', kind: 'Widget' }]);
  assert.deepEqual(found.map((k) => k.apiVersion), ['widgets.example.dev/v1']);
});

test('only the documents needed: core kinds read /api and /api/v1, never /apis', async () => {
  const api = server();
  await new DiscoveryClient(api).resolveKinds([{ group: '', kind: 'ConfigMap' }, { group: '', kind: 'Secret' }]);
  assert.deepEqual(api.asked.sort(), ['/api', '/api/v1']);
  const named = server();
  await new DiscoveryClient(named).resolveKinds([{ group: 'apps', kind: 'StatefulSet' }]);
  assert.deepEqual(named.asked.sort(), ['/apis', '/apis/apps/v1']);
});

test('groups() lists the core group first, then /apis; resources() reads one group version', async () => {
  const discovery = new DiscoveryClient(server());
  const groups = await discovery.groups();
  assert.deepEqual(groups[0], { name: '', versions: [{ groupVersion: 'v1', version: 'v1' }], preferredVersion: { groupVersion: 'v1', version: 'v1' } });
  assert.equal(groups.length, 1 + parseAPIGroupList(RECORDED['/apis']).length);
  const batch = await discovery.resources('batch/v1');
  assert.deepEqual(batch.resources.map((r) => r.name), ['cronjobs', 'cronjobs/status', 'jobs', 'jobs/status']);
  assert.equal(groupVersionPath('v1'), '/api/v1');
  assert.equal(groupVersionPath('apps/v1'), '/apis/apps/v1');
});

test('documents that are not discovery documents are errors naming the path, never kinds reported missing', async () => {
  assert.throws(() => parseAPIGroupList('<html>502 Bad Gateway</html>'), (err: unknown) => err instanceof DiscoveryDocumentError && err.path === '/apis' && /not an object \(the body was text: "<html>502/.test(err.message));
  assert.throws(() => parseAPIGroupList({ kind: 'Status', status: 'Failure' }), /expected kind APIGroupList, got "Status"/);
  assert.throws(() => parseAPIResourceList({ kind: 'APIResourceList', groupVersion: 'apps/v1', resources: [{ name: 'deployments', kind: 'Deployment' }] }, '/apis/apps/v1'), /\/apis\/apps\/v1: resources\[0\]\.namespaced is not a boolean/);
  assert.throws(() => parseAPIGroupList({ groups: [{ name: 'apps', versions: 'v1' }] }), /groups\[0\]\.versions is not a list/);
  // A resource list with no resources (a group version whose CRD has none served yet) is valid.
  assert.deepEqual(parseAPIResourceList({ kind: 'APIResourceList', apiVersion: 'v1', groupVersion: 'x.dev/v1', resources: [] }, '/apis/x.dev/v1').resources, []);

  const broken = server({ '/apis/apps/v1': 'upstream connect error' });
  await assert.rejects(new DiscoveryClient(broken).resolveKind({ group: 'apps', kind: 'Deployment' }), /discovery of Deployment\.apps failed: GET \/apis\/apps\/v1: discovery document \/apis\/apps\/v1: the document is not an object/);
  await assert.rejects(new DiscoveryClient(server({ '/apis': { kind: 'Status' } })).resolveKinds([{ group: 'apps', kind: 'Deployment' }]), DiscoveryDocumentError, '/apis unreadable: the whole resolution fails');
});
