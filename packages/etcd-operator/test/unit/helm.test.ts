// The Helm chart, checked with the real helm (v3.22.0, built from tools/helm on first use: about 2 minutes
// on a cold cache): `helm lint` passes, and `helm template` renders exactly the objects `quorum manifests`
// prints for the same settings, in each shape the values give (tenant namespaces or every namespace, webhooks
// on or off, one replica or more); what `quorum manifests` refuses (kube-system, no namespace), the chart
// refuses too. The committed chart is what the generator writes. Each monitoring value renders exactly
// the objects of deploy/monitoring/, in the release's namespace; off (the default), none.
import assert from 'node:assert/strict';
import { execFile } from 'node:child_process';
import { mkdtemp, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { after, before, test } from 'node:test';
import { promisify } from 'node:util';
import type { V1MutatingWebhookConfiguration, V1PodDisruptionBudget, V1PolicyRule, V1Role, V1ValidatingWebhookConfiguration } from '@kubernetes/client-node';
import { helmBinary } from '@quorum/localkube';
import { parseAllDocuments } from 'yaml';
import { commands } from '../../src/cli/commands.ts';
import { helmChart, MONITORING_VALUES, type MonitoringValue } from '../../src/deploy/helm.ts';
import { METRICS_AUTH_CLUSTER_ROLE, METRICS_READER_CLUSTER_ROLE, NAME, operatorManifests, PEER_WAIT_IMAGE, WATCH_ROLE, WEBHOOK_CLUSTER_ROLE } from '../../src/deploy/manifests.ts';
import { DASHBOARD_FILE, MONITORING_DIR, POD_MONITORS_FILE, PROMETHEUS_RULE_FILE } from '../../src/monitoring/files.ts';

const run = promisify(execFile);
const packageDir = join(import.meta.dirname, '..', '..');
const chartDir = join(packageDir, '..', '..', 'deploy', 'helm', 'quorum');
const monitoringDir = join(packageDir, '..', '..', MONITORING_DIR);

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
  helmHome = await mkdtemp(join(tmpdir(), 'quorum-helm-'));
});
after(async () => {
  if (helmHome) await rm(helmHome, { recursive: true, force: true });
});

async function helmRun(args: string[]): Promise<string> {
  const env = { ...process.env, HELM_CONFIG_HOME: join(helmHome, 'config'), HELM_CACHE_HOME: join(helmHome, 'cache'), HELM_DATA_HOME: join(helmHome, 'data') };
  const { stdout } = await run(helm, args, { env, maxBuffer: 64 * 1024 * 1024 });
  return stdout;
}

function parse(text: string): Parsed[] {
  return parseAllDocuments(text)
    .map((d) => d.toJS() as Parsed | null)
    .filter((o): o is Parsed => o !== null);
}

const identity = (o: Parsed): string => `${o.apiVersion} ${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`;

/** Order-insensitive: helm sorts by kind for install, the manifests go in apply order. */
function byIdentity(objects: Parsed[]): Map<string, Parsed> {
  const map = new Map<string, Parsed>();
  for (const o of objects) {
    const key = identity(o);
    assert.ok(!map.has(key), `${key} appears twice`);
    map.set(key, o);
  }
  return map;
}

/** What `quorum manifests ARGS` prints, from the etcd operator's own command, run in this process. */
async function quorumManifests(args: string[]): Promise<string> {
  const manifests = commands.find((c) => c.name === 'manifests');
  assert.ok(manifests, 'the etcd operator has a manifests command');
  let stdout = '';
  let stderr = '';
  const code = await manifests.run(args, { stdout: { write: (t: string) => (stdout += t) }, stderr: { write: (t: string) => (stderr += t) } });
  assert.equal(code, 0, `quorum manifests ${args.join(' ')}: ${stderr}`);
  return stdout;
}

/**
 * `helm template` with `values` (helm's own flags, e.g. `--set replicas=3`) and the CRDs, against `quorum
 * manifests` with `flags`, without its Namespace (`helm install --create-namespace` makes that one).
 */
async function assertSameObjects(values: string[], flags: string[]): Promise<Parsed[]> {
  const rendered = parse(await helmRun(['template', 'quorum', chartDir, '--namespace', 'ops', '--include-crds', ...values]));
  const stdout = await quorumManifests(['--namespace', 'ops', ...flags]);
  const got = byIdentity(rendered);
  const want = byIdentity(parse(stdout).filter((o) => o.kind !== 'Namespace'));
  assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), 'the same objects');
  for (const [key, object] of want) assert.deepEqual(got.get(key), object, key);
  return rendered;
}

const allMonitoring = ['--set', 'monitoring.prometheusRule.enabled=true,monitoring.podMonitors.enabled=true,monitoring.grafanaDashboard.enabled=true'];
const monitoringLabels = ['--set', 'monitoring.prometheusRule.labels.release=kube-prometheus-stack,monitoring.podMonitors.labels.release=kube-prometheus-stack,monitoring.grafanaDashboard.labels.team=storage'];

test('helm lint passes, in each shape of the chart', async () => {
  for (const set of [[], ['--set', 'namespaces={apps,web}'], ['--set', 'clusterWide=true'], ['--set', 'replicas=1', '--set', 'webhooks.enabled=false'], ['--set', 'namespaces={apps}', '--set', 'webhooks.enabled=false'], allMonitoring, [...allMonitoring, ...monitoringLabels]]) {
    const out = await helmRun(['lint', '--strict', chartDir, ...set]);
    assert.match(out, /1 chart\(s\) linted, 0 chart\(s\) failed/, `helm lint ${set.join(' ')}`);
  }
});

test('helm template renders exactly what quorum manifests prints: defaults (namespace default), and every namespace', async () => {
  const objects = await assertSameObjects([], []);
  assert.deepEqual(objects.filter((o) => o.kind === 'Role' || o.kind === 'ClusterRole').map((o) => `${o.kind} ${o.metadata.namespace ?? ''}/${o.metadata.name}`).sort(), [
    `ClusterRole /${METRICS_AUTH_CLUSTER_ROLE}`,
    `ClusterRole /${METRICS_READER_CLUSTER_ROLE}`,
    `ClusterRole /${WEBHOOK_CLUSTER_ROLE}`,
    `Role default/${WATCH_ROLE}`,
    `Role ops/${NAME}`,
  ]);
  const wide = await assertSameObjects(['--set', 'clusterWide=true'], ['--cluster-wide']);
  assert.deepEqual(wide.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name).sort(), [NAME, METRICS_AUTH_CLUSTER_ROLE, METRICS_READER_CLUSTER_ROLE, WEBHOOK_CLUSTER_ROLE]);
  assert.ok(!wide.some((o) => o.kind === 'Role' && o.metadata.name === WATCH_ROLE));
  const pdb = objects.find((o) => o.kind === 'PodDisruptionBudget') as unknown as V1PodDisruptionBudget;
  assert.equal(pdb.spec?.minAvailable, 1);
  assert.equal(pdb.metadata?.namespace, 'ops');
});

test('helm template renders exactly what quorum manifests prints: cluster-wide without webhooks', async () => {
  const rendered = await assertSameObjects(['--set', 'clusterWide=true,webhooks.enabled=false'], ['--cluster-wide', '--no-webhooks']);
  // The metrics server's access reviews and the scrapers' reader role stay: /metrics is behind them whatever the install.
  assert.deepEqual(rendered.filter((o) => o.kind === 'ClusterRole').map((o) => o.metadata.name).sort(), [NAME, METRICS_AUTH_CLUSTER_ROLE, METRICS_READER_CLUSTER_ROLE]);
});

test('helm template renders exactly what quorum manifests prints: images, replicas, grace, CA overlap, no webhooks', async () => {
  const values = ['--set', 'image.repository=registry.example/quorum,image.tag=9.9.9,peerWaitImage.repository=registry.example/peer-wait,peerWaitImage.tag=9.9.8', '--set', 'crashLoopGraceSeconds=45,caRotationOverlapSeconds=3600,replicas=3,webhooks.enabled=false'];
  const flags = ['--image', 'registry.example/quorum:9.9.9', '--peer-wait-image', 'registry.example/peer-wait:9.9.8', '--crashloop-grace-seconds', '45', '--ca-rotation-overlap-seconds', '3600', '--replicas', '3', '--no-webhooks'];
  const rendered = await assertSameObjects(values, flags);
  assert.ok(!rendered.some((o) => o.kind.endsWith('WebhookConfiguration')), 'no webhook configurations');
});

test('one replica: no PodDisruptionBudget, which would block every drain of its node', async () => {
  const rendered = await assertSameObjects(['--set', 'replicas=1'], ['--replicas', '1']);
  assert.ok(!rendered.some((o) => o.kind === 'PodDisruptionBudget'));
});

test('namespace-scoped: a Role in each tenant namespace, webhooks selecting only them', async () => {
  const rendered = await assertSameObjects(['--set', 'namespaces={apps,web}'], ['--namespaces', 'apps,web']);
  const roles = rendered.filter((o) => o.kind === 'Role' && o.metadata.name === WATCH_ROLE) as unknown as V1Role[];
  assert.deepEqual(roles.map((r) => r.metadata?.namespace), ['apps', 'web']);
  assert.ok(roles[0]!.rules?.some((r) => r.resources?.includes('etcdclusters')));
  // The only ClusterRole left: the two webhook configurations, by name, and the webhooks' access reviews of
  // credentials Secrets (cluster-scoped, so no Role can grant them).
  // (Beside the metrics server's access reviews and the scrapers' reader role.)
  const clusterRoles = rendered.filter((o) => o.kind === 'ClusterRole' && ![METRICS_AUTH_CLUSTER_ROLE, METRICS_READER_CLUSTER_ROLE].includes(o.metadata.name)) as unknown as V1Role[];
  assert.deepEqual(clusterRoles.map((r) => r.metadata?.name), [WEBHOOK_CLUSTER_ROLE]);
  const [reviews, ...configurationRules] = [...(clusterRoles[0]!.rules as V1PolicyRule[])].reverse();
  assert.deepEqual(reviews, { apiGroups: ['authorization.k8s.io'], resources: ['subjectaccessreviews'], verbs: ['create'] });
  for (const rule of configurationRules) {
    assert.deepEqual(rule.apiGroups, ['admissionregistration.k8s.io']);
    assert.equal(rule.resourceNames?.length, 1);
  }
  const configurations = rendered.filter((o) => o.kind.endsWith('WebhookConfiguration')) as unknown as (V1MutatingWebhookConfiguration | V1ValidatingWebhookConfiguration)[];
  assert.equal(configurations.length, 2);
  for (const w of configurations.flatMap((c) => c.webhooks ?? [])) {
    assert.deepEqual(w.namespaceSelector, { matchExpressions: [{ key: 'kubernetes.io/metadata.name', operator: 'In', values: ['apps', 'web'] }] }, w.name);
  }
  const deployment = rendered.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
  assert.equal(deployment.spec.template.spec.containers[0]!.env.find((e) => e.name === 'WATCH_NAMESPACES')?.value, 'apps,web');

  // Without webhooks nothing cluster-wide is left but the CRDs and the metrics server's access reviews (and the scrapers' reader role).
  const bare = await assertSameObjects(['--set', 'namespaces={apps},webhooks.enabled=false'], ['--namespaces', 'apps', '--no-webhooks']);
  assert.deepEqual(
    bare.filter((o) => !o.metadata.namespace && o.kind !== 'CustomResourceDefinition').map((o) => `${o.kind} ${o.metadata.name}`).sort(),
    [`ClusterRole ${METRICS_AUTH_CLUSTER_ROLE}`, `ClusterRole ${METRICS_READER_CLUSTER_ROLE}`, `ClusterRoleBinding ${METRICS_AUTH_CLUSTER_ROLE}`],
  );
  assert.equal(bare.filter((o) => o.kind === 'CustomResourceDefinition').length, 4);
});

test('the chart refuses what quorum manifests refuses: kube-system, no namespace, and the replaced watchNamespace', async () => {
  const helmRefuses = (values: string[], message: RegExp): Promise<void> => assert.rejects(helmRun(['template', 'quorum', chartDir, '--namespace', 'ops', ...values]), message, values.join(' '));
  const manifestsRefuse = async (flags: string[], message: RegExp): Promise<void> => {
    let stderr = '';
    const code = await commands.find((c) => c.name === 'manifests')!.run(flags, { stdout: { write: () => undefined }, stderr: { write: (t: string) => (stderr += t) } });
    assert.equal(code, 2, flags.join(' '));
    assert.match(stderr, message);
  };
  await helmRefuses(['--set', 'namespaces={apps,kube-system}'], /kube-system is refused/);
  await manifestsRefuse(['--namespaces', 'apps,kube-system'], /kube-system is refused/);
  await helmRefuses(['--set', 'namespaces=null'], /namespaces is empty/);
  await manifestsRefuse(['--namespaces', ','], /at least one namespace/);
  await manifestsRefuse(['--namespaces', 'apps', '--cluster-wide'], /not both/);
  await helmRefuses(['--set', 'watchNamespace=apps'], /watchNamespace was replaced by namespaces/);
});

test('values without a CLI flag (step deadline, log level, cluster domain) render as operatorManifests renders them', async () => {
  const rendered = parse(await helmRun(['template', 'quorum', chartDir, '--namespace', 'ops', '--set', 'stepDeadlineSeconds=90', '--set', 'logLevel=debug', '--set', 'clusterDomain=corp.example']));
  const expected = operatorManifests({ namespace: 'ops', stepDeadlineSeconds: 90, logLevel: 'debug', clusterDomain: 'corp.example' }).filter((o) => o.kind !== 'Namespace' && o.kind !== 'CustomResourceDefinition');
  const got = byIdentity(rendered);
  for (const [key, object] of byIdentity(expected as unknown as Parsed[])) assert.deepEqual(got.get(key), object, key);
  assert.equal(got.size, expected.length);
});

/** deploy/monitoring/'s objects for each value, in the release's namespace as the chart's other objects. */
async function monitoringObjects(value: MonitoringValue): Promise<Parsed[]> {
  const inNamespace = (o: Parsed): Parsed => ({ ...o, metadata: { ...o.metadata, namespace: 'ops' } });
  const file = async (name: string): Promise<string> => readFile(join(monitoringDir, name), 'utf8');
  switch (value) {
    case 'prometheusRule':
      return parse(await file(PROMETHEUS_RULE_FILE)).map(inNamespace);
    case 'podMonitors':
      return parse(await file(POD_MONITORS_FILE)).map(inNamespace);
    case 'grafanaDashboard': {
      // The committed JSON, to the byte, under the name the Grafana sidecar writes it to.
      const labels = { 'app.kubernetes.io/name': 'quorum', 'app.kubernetes.io/component': 'monitoring', grafana_dashboard: '1' };
      return [{ apiVersion: 'v1', kind: 'ConfigMap', metadata: { name: 'quorum-grafana-dashboard', namespace: 'ops', labels }, data: { 'quorum-etcd.json': await file(DASHBOARD_FILE) } }];
    }
  }
}

/** What `helm template` renders with `values` besides what it renders without them. */
async function renderedBeyondDefaults(values: string[]): Promise<Parsed[]> {
  const defaults = byIdentity(parse(await helmRun(['template', 'quorum', chartDir, '--namespace', 'ops'])));
  const rendered = byIdentity(parse(await helmRun(['template', 'quorum', chartDir, '--namespace', 'ops', ...values])));
  for (const [key, object] of defaults) assert.deepEqual(rendered.get(key), object, `${key} unchanged`);
  return [...rendered].filter(([key]) => !defaults.has(key)).map(([, o]) => o);
}

test('monitoring is off by default: no PrometheusRule, PodMonitor or dashboard ConfigMap', async () => {
  const rendered = parse(await helmRun(['template', 'quorum', chartDir, '--namespace', 'ops']));
  assert.deepEqual(rendered.filter((o) => o.apiVersion.startsWith('monitoring.coreos.com/') || o.kind === 'ConfigMap'), []);
});

for (const value of Object.keys(MONITORING_VALUES) as MonitoringValue[]) {
  test(`monitoring.${value}.enabled renders exactly deploy/monitoring's objects, and its labels are added to theirs`, async () => {
    const want = byIdentity(await monitoringObjects(value));
    const got = byIdentity(await renderedBeyondDefaults(['--set', `monitoring.${value}.enabled=true`]));
    assert.deepEqual([...got.keys()].sort(), [...want.keys()].sort(), 'the same objects');
    for (const [key, object] of want) assert.deepEqual(got.get(key), object, key);

    const labelled = await renderedBeyondDefaults(['--set', `monitoring.${value}.enabled=true`, '--set', `monitoring.${value}.labels.release=kube-prometheus-stack`]);
    assert.equal(labelled.length, want.size);
    for (const o of labelled) {
      const { release, ...own } = o.metadata.labels ?? {};
      assert.equal(release, 'kube-prometheus-stack', o.metadata.name);
      assert.deepEqual(own, want.get(identity(o))?.metadata.labels, o.metadata.name);
    }
  });
}

test('the dashboard ConfigMap holds deploy/monitoring/grafana-dashboard.json, Grafana\'s own {{…}} legends kept from Helm', async () => {
  const [configMap] = await renderedBeyondDefaults(['--set', 'monitoring.grafanaDashboard.enabled=true']);
  const json = configMap?.data?.['quorum-etcd.json'] ?? '';
  assert.deepEqual(JSON.parse(json), JSON.parse(await readFile(join(monitoringDir, DASHBOARD_FILE), 'utf8')));
  assert.match(json, /\{\{namespace\}\}\/\{\{cluster\}\}/);
});

test('the committed chart is what the generator writes', async () => {
  for (const [file, content] of Object.entries(helmChart())) {
    assert.equal(await readFile(join(chartDir, file), 'utf8'), content, `deploy/helm/quorum/${file} is stale: run node packages/etcd-operator/scripts/generate.ts`);
  }
});

test('the webhooks fail open and the operator is told which peer-wait image to use', () => {
  const objects = operatorManifests({ peerWaitImage: 'registry.example/peer-wait:1' });
  // Fail would refuse every EtcdCluster edit (even `paused`) while the operator is down; CEL still validates.
  const policies = objects
    .filter((o) => o.kind === 'MutatingWebhookConfiguration' || o.kind === 'ValidatingWebhookConfiguration')
    .flatMap((o) => (o['webhooks'] as { failurePolicy: string }[]).map((w) => w.failurePolicy));
  assert.ok(policies.length >= 2, 'a mutating and at least one validating webhook');
  assert.deepEqual(new Set(policies), new Set(['Ignore']));
  const deployment = objects.find((o) => o.kind === 'Deployment') as unknown as { spec: { template: { spec: { containers: { env: { name: string; value?: string }[] }[] } } } };
  const env = deployment.spec.template.spec.containers[0]!.env;
  assert.equal(env.find((e) => e.name === 'PEER_WAIT_IMAGE')?.value, 'registry.example/peer-wait:1');
  const defaults = operatorManifests().find((o) => o.kind === 'Deployment') as unknown as typeof deployment;
  assert.equal(defaults.spec.template.spec.containers[0]!.env.find((e) => e.name === 'PEER_WAIT_IMAGE')?.value, PEER_WAIT_IMAGE);
});
