// The Redis operator's Helm chart, checked with the real helm (built from tools/helm on first use, as for the
// etcd chart): `helm lint --strict` passes in each shape, and `helm template` renders exactly the objects
// operatorManifests() gives for the same settings (the CRDs included: crds/ holds every CRD of the manifests),
// tenant namespaces or every namespace, webhooks on or off; what the manifests refuse (kube-system, no
// namespace), the chart refuses too. Each monitoring value renders exactly deploy/monitoring/quorum-redis-*'s
// objects in the release's namespace; off (the default), none. The committed chart is what the generator writes.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import { helmBinary } from '@quorum/localkube';
import { parseAllDocuments } from 'yaml';
import { CHART_DIR, helmChart, MONITORING_VALUES, type MonitoringValue } from '../../src/deploy/helm.ts';
import { operatorManifests, type ManifestOptions } from '../../src/deploy/manifests.ts';
import { DASHBOARD_FILE, MONITORING_DIR, POD_MONITORS_FILE, PROMETHEUS_RULE_FILE } from '../../src/monitoring/files.ts';

const run = promisify(execFile);
const repoRoot = join(import.meta.dirname, '..', '..', '..', '..');
const chartDir = join(repoRoot, CHART_DIR);

interface Parsed {
  apiVersion: string;
  kind: string;
  metadata: { name: string; namespace?: string; labels?: Record<string, string> };
  data?: Record<string, string>;
}

let helm = '';
let helmHome = '';

before(async () => {
  helm = await helmBinary();
  // helm reads and writes its config, cache and data directories even for `template`: keep them out of $HOME.
  helmHome = await mkdtemp(join(tmpdir(), 'quorum-redis-helm-'));
});
after(async () => {
  if (helmHome) await rm(helmHome, { recursive: true, force: true });
});

async function helmRun(args: string[]): Promise<string> {
  const env = { ...process.env, HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_DATA_HOME: join(helmHome, 'data') };
  const { stdout } = await run(helm, args, { env, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

const parse = (text: string): Parsed[] => parseAllDocuments(text).map((d) => d.toJS() as Parsed | null).filter((o): o is Parsed => o !== null);
const identity = (o: Parsed): string => `${o.apiVersion} ${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;

function byIdentity(objects: Parsed[]): Map<string, Parsed> {
  const map = new Map<string, Parsed>();
  for (const o of objects) {
    assert.ok(!map.has(identity(o)), `${identity(o)} appears twice`);
    map.set(identity(o), o);
  }
  return map;
}

const template = async (values: string[], crds = true): Promise<Parsed[]> => parse(await helmRun(['template', 'quorum-redis', chartDir, '--namespace', 'ops', ...(crds ? ['--include-crds'] : []), ...values]));

/** `helm template` with `values` against operatorManifests(`options`), without its Namespace (`helm install --create-namespace` makes it). */
async function assertSameObjects(values: string[], options: ManifestOptions): Promise<Parsed[]> {
  const rendered = await template(values);
  const want = byIdentity((operatorManifests({ namespace: 'ops', ...options }) as unknown as Parsed[]).filter((o) => o.kind !== 'Namespace'));
  const got = byIdentity(rendered);
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), 'the same objects');
  for (const [key, object] of want) assert.deepEqual(got.get(key), JSON.parse(JSON.stringify(object)), key);
  return rendered;
}

const allMonitoring = ['--set', 'monitoring.prometheusRule.enabled=true,monitoring.podMonitors.enabled=true,monitoring.grafanaDashboard.enabled=true,monitoring.podMonitors.labels.release=kps'];

test('helm lint --strict passes, in each shape of the chart', async () => {
  for (const set of [[], ['--set', 'namespaces={apps,web}'], ['--set', 'clusterWide=true'], ['--set', 'webhooks.enabled=false'], allMonitoring]) {
    assert.match(await helmRun(['lint', '--strict', chartDir, ...set]), /1 chart\(s\) linted, 0 chart\(s\) failed/, `helm lint ${set.join(' ')}`);
  }
});

test('helm template renders exactly the manifests: defaults (namespace default, every CRD), tenant namespaces, every namespace', async () => {
  const defaults = await assertSameObjects([], {});
  assert.deepEqual(defaults.filter((o) => o.kind === 'CustomResourceDefinition').length, operatorManifests().filter((o) => o.kind === 'CustomResourceDefinition').length);
  const scoped = await assertSameObjects(['--set', 'namespaces={apps,web}'], { namespaces: ['apps', 'web'] });
  assert.deepEqual(scoped.filter((o) => o.kind === 'Role' && o.metadata.name === 'quorum-redis-operator').map((o) => o.metadata.namespace), ['apps', 'web']);
  await assertSameObjects(['--set', 'clusterWide=true'], { clusterWide: true });
});

test('helm template renders exactly the manifests: without webhooks, in either scope; other images', async () => {
  const bare = await assertSameObjects(['--set', 'namespaces={apps},webhooks.enabled=false'], { namespaces: ['apps'], webhooks: false });
  assert.ok(!bare.some((o) => o.kind === 'ValidatingWebhookConfiguration'));
  await assertSameObjects(['--set', 'clusterWide=true,webhooks.enabled=false'], { clusterWide: true, webhooks: false });
  await assertSameObjects(['--set', 'image.repository=registry.example/redis-operator,image.tag=9.9.9,redisRepository=registry.example/redis'], { image: 'registry.example/redis-operator:9.9.9', redisRepository: 'registry.example/redis' });
});

test('helm template renders exactly the manifests: a CA rotation overlap of one hour', async () => {
  const objects = await assertSameObjects(['--set', 'caRotationOverlapSeconds=3600'], { caRotationOverlapSeconds: 3600 });
  const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
  assert.equal(deployment.spec.template.spec.containers[0]!.env.find((e) => e.name === 'CA_ROTATION_OVERLAP_SECONDS')?.value, '3600');
});

test('resources: the operator container gets the values\' resources, and nothing else changes', async () => {
  const deployment = (objects: Parsed[]): { spec: { template: { spec: { containers: { resources: unknown }[] } } } } => objects.find((o) => o.kind === 'Deployment') as never;
  const rendered = await template(['--set', 'resources.requests.cpu=200m,resources.limits.memory=1Gi'], false);
  assert.deepEqual(deployment(rendered).spec.template.spec.containers[0]!.resources, { requests: { cpu: '200m', memory: '96Mi' }, limits: { memory: '1Gi' } });
  const defaults = await template([], false);
  deployment(defaults).spec.template.spec.containers[0]!.resources = deployment(rendered).spec.template.spec.containers[0]!.resources;
  assert.deepEqual(rendered, defaults);
});

test('the chart refuses what the manifests refuse: kube-system, and no namespace', async () => {
  const refuses = (values: string[], message: RegExp): Promise<void> => assert.rejects(template(values, false), message, values.join(' '));
  await refuses(['--set', 'namespaces={apps,kube-system}'], /kube-system is refused/);
  assert.throws(() => operatorManifests({ namespaces: ['apps', 'kube-system'] }), /kube-system is refused/);
  await refuses(['--set', 'namespaces=null'], /namespaces is empty/);
  assert.throws(() => operatorManifests({ namespaces: [] }), /at least one namespace/);
});

/** deploy/monitoring/'s objects for each value, in the release's namespace as the chart's other objects. */
async function monitoringObjects(value: MonitoringValue): Promise<Parsed[]> {
  const file = async (name: string): Promise<string> => readFile(join(repoRoot, MONITORING_DIR, name), 'utf8');
  const inNamespace = (o: Parsed): Parsed => ({ ...o, metadata: { ...o.metadata, namespace: 'ops' } });
  switch (value) {
    case 'prometheusRule':
      return parse(await file(PROMETHEUS_RULE_FILE)).map(inNamespace);
    case 'podMonitors':
      return parse(await file(POD_MONITORS_FILE)).map(inNamespace);
    case 'grafanaDashboard': {
      const labels = { 'app.kubernetes.io/name': 'quorum-redis', 'app.kubernetes.io/component': 'monitoring', grafana_dashboard: '1' };
      return [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'quorum-redis-grafana-dashboard', namespace: 'ops', labels }, data: { 'quorum-redis.json': await file(DASHBOARD_FILE) } }];
    }
  }
}

test('monitoring: off by default; each value renders exactly deploy/monitoring\'s objects, with its labels added', async () => {
  const defaults = byIdentity(await template([], false));
  assert.ok(![...defaults.values()].some((o) => o.apiVersion.startsWith('monitoring.coreos.com/') || o.kind === 'ConfigMap'));
  for (const value of Object.keys(MONITORING_VALUES) as MonitoringValue[]) {
    const rendered = await template(['--set', `monitoring.${value}.enabled=true,monitoring.${value}.labels.release=kps`], false);
    const added = rendered.filter((o) => !defaults.has(identity(o)));
    const want = byIdentity(await monitoringObjects(value));
    assert.deepEqual(added.map(identity).sort(), [...want.keys()].sort(), value);
    for (const o of added) {
      const { release, ...own } = o.metadata.labels ?? {};
      assert.equal(release, 'kps', identity(o));
      assert.deepEqual({ ...o, metadata: { ...o.metadata, labels: own } }, want.get(identity(o)), identity(o));
    }
  }
});

test('the committed chart is what the generator writes', async () => {
  for (const [file, content] of Object.entries(helmChart())) {
    assert.equal(await readFile(join(chartDir, file), 'utf8'), content, `${CHART_DIR}/${file} is stale: run bash scripts/node24 packages/redis-operator/scripts/generate.ts`);
  }
});
